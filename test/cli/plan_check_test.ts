import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { fileURLToPath as fromFileUrl } from "node:url";
import { command } from "../../src/cli/plan_check.ts";
import type { CommandIO } from "../../src/cli/command.ts";
import { parseCommandArgs } from "../../src/cli/command.ts";

const ROOT = fromFileUrl(new URL("../../", import.meta.url));

async function run(argv: string[]) {
  let stdout = "", stderr = "";
  const io: CommandIO = {
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
    env: {},
    cwd: ROOT,
    color: false,
    tty: false,
    signal: new AbortController().signal,
  };
  const code = await command.run(parseCommandArgs(command, argv), io);
  return { code, stdout, stderr };
}

const NOW = ["--now", "2026-11-25T00:00:00Z"];

Deno.test("plan check exits 0 on the example plans and prints their identity", async () => {
  const files = [...Deno.readDirSync(`${ROOT}plans`)].map((e) => `plans/${e.name}`)
    .filter((f) => f.endsWith(".yaml")).sort();
  const r = await run([...files, ...NOW]);
  assertEquals([r.code, r.stderr], [0, ""]);
  assert(
    /^ok plans\/talos-v1\.14\.2\.yaml TalosUpgrade talos-v1\.14\.2 sha256:[0-9a-f]{64} \(7 nodes\)$/m
      .test(r.stdout),
    r.stdout,
  );
  assertEquals(r.stdout.trim().split("\n").length, files.length);
});

Deno.test("plan check exits 1 and names file, line, column and reason of an invalid plan", async () => {
  const file = "fixtures/plans/invalid/MissingIntermediatePatch--from-1.13.5.yaml";
  const r = await run([file, ...NOW]);
  assertEquals(r.code, 1);
  assertEquals(r.stdout, "");
  const expect = (await Deno.readTextFile(`${ROOT}${file}`)).split("\n")[0]!.slice(
    "# expect: ".length,
  );
  assert(r.stderr.startsWith(`${file}:${expect}: MissingIntermediatePatch: `), r.stderr);
});

Deno.test("plan check --output json reports each file with its problems", async () => {
  const r = await run([
    "plans/talos-v1.14.2.yaml",
    "fixtures/plans/invalid/SkippedMinor--1.13-to-1.15.yaml",
    "--output",
    "json",
    ...NOW,
  ]);
  assertEquals(r.code, 1);
  const out = JSON.parse(r.stdout);
  assertEquals(out.map((x: { ok: boolean }) => x.ok), [true, false]);
  assertEquals(out[1].problems[0].reason, "SkippedMinor");
  assertEquals(out[0].nodes, 7);
});

Deno.test("plan check --catalogue overrides the bound catalogue and still checks its digest", async () => {
  const r = await run([
    "plans/talos-v1.14.2.yaml",
    "--catalogue",
    "fixtures/plans/catalogues/stale.yaml",
    ...NOW,
  ]);
  assertEquals(r.code, 1);
  assert(r.stderr.includes("CatalogueDigestMismatch"), r.stderr);
});

Deno.test("plan check refuses a malformed --now as a usage error", async () => {
  let threw = false;
  try {
    await run(["plans/talos-v1.14.2.yaml", "--now", "yesterday"]);
  } catch (e) {
    threw = e instanceof Error && e.name === "UsageError";
  }
  assert(threw);
});
