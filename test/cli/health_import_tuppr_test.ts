import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { parse } from "yaml";
import { command } from "../../src/cli/health_import_tuppr.ts";
import type { CommandIO } from "../../src/cli/command.ts";
import { parseHealthPolicy } from "../../src/domain/health/policy_parse.ts";

function io(cwd: string) {
  const out = { stdout: "", stderr: "" };
  const value: CommandIO = {
    stdout: (t) => (out.stdout += t),
    stderr: (t) => (out.stderr += t),
    env: {},
    cwd,
    color: false,
    tty: false,
    signal: new AbortController().signal,
  };
  return { out, io: value };
}

const ROOT = new URL("../../", import.meta.url).pathname;

Deno.test("health import-tuppr carries each healthChecks entry unchanged into a valid policy", async () => {
  const { out, io: cio } = io(ROOT);
  const code = await command.run(
    { values: { cluster: "home-ops" }, positionals: ["fixtures/health/tuppr-talosupgrade.yaml"] },
    cio,
  );
  assertEquals(code, 0, out.stderr);
  const policy = parseHealthPolicy(out.stdout, "out.yaml");
  assert(policy.ok);
  assertEquals(policy.policy.cluster, "home-ops");
  const source = parse(Deno.readTextFileSync(`${ROOT}fixtures/health/tuppr-talosupgrade.yaml`));
  const emitted = parse(out.stdout).spec.bindings;
  assertEquals(
    emitted.map((b: { healthCheck: unknown }) => b.healthCheck),
    source.spec.healthChecks,
  );
  assertEquals(emitted[0].timeoutSeconds, 1200);
  assertEquals(emitted.map((b: { reader: string }) => b.reader), ["kube-object", "kube-object"]);
});

Deno.test("health import-tuppr refuses a file that is not a TalosUpgrade, with a located error", async () => {
  const dir = Deno.makeTempDirSync();
  Deno.writeTextFileSync(
    `${dir}/x.yaml`,
    "kind: TalosUpgrade\nspec:\n  healthChecks:\n    - {kind: X, expr: 'true'}\n",
  );
  const { out, io: cio } = io(dir);
  const code = await command.run({ values: { cluster: "c" }, positionals: ["x.yaml"] }, cio);
  assertEquals(code, 1);
  assert(out.stderr.includes("x.yaml:4:7: HealthPolicyInvalid"), out.stderr);
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("health import-tuppr on a file that is not YAML names the place once, not twice", async () => {
  const dir = Deno.makeTempDirSync();
  Deno.writeTextFileSync(`${dir}/README.md`, "# Title\n\nSome words: here: `x`\n");
  const { out, io: cio } = io(dir);
  const code = await command.run({ values: { cluster: "c" }, positionals: ["README.md"] }, cio);
  assertEquals(code, 1);
  assert(/^README\.md:3:\d+: HealthPolicySyntaxInvalid: /.test(out.stderr), out.stderr);
  assert(!/ at line \d+, column \d+/.test(out.stderr), out.stderr);
  Deno.removeSync(dir, { recursive: true });
});
