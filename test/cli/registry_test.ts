import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { fileURLToPath as fromFileUrl } from "node:url";
import { COMMANDS } from "../../src/cli/registry.ts";

const ROOT = fromFileUrl(new URL("../../", import.meta.url));
const HEAVY = ["kysely", "@libsql/", "@kubernetes/client-node", "@grpc/"];

/** Every bare/npm specifier in the module graph `deno run` builds for `entry`. */
async function graphPackages(entry: string): Promise<string[]> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", entry],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert(out.success, new TextDecoder().decode(out.stderr));
  const info = JSON.parse(new TextDecoder().decode(out.stdout)) as {
    modules: { dependencies?: { specifier: string }[] }[];
  };
  const specs = info.modules.flatMap((m) => (m.dependencies ?? []).map((d) => d.specifier));
  return [...new Set(specs.filter((s) => !/^(\.|node:|file:)/.test(s)))].sort();
}

Deno.test("the registry imports no command module through a literal specifier", async () => {
  const text = await Deno.readTextFile(`${ROOT}src/cli/registry.ts`);
  const literal = /import\(\s*["'`]/.exec(text);
  assert(
    literal === null,
    'a literal import("./x.ts") makes deno run load every command graph at start-up; use lazy()',
  );
});

Deno.test("cairn's entry module graph holds no npm package: each command loads its own", async () => {
  assertEquals(await graphPackages("src/main.ts"), []);
});

Deno.test("plan check and plan verify pull in no database, Kubernetes or gRPC library", async () => {
  for (const file of ["src/cli/plan_check.ts", "src/cli/plan_verify.ts"]) {
    const heavy = (await graphPackages(file)).filter((p) => HEAVY.some((h) => p.startsWith(h)));
    assertEquals(heavy, [], file);
  }
});

Deno.test("every registered command loads and answers to its registered path", async () => {
  for (const entry of COMMANDS) {
    const cmd = await entry.load();
    assertEquals(cmd.path, entry.path);
  }
});
