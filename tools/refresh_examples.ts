// deno-lint-ignore-file no-console
/**
 * Keeps the shipped example plans (plans/*.yaml) valid: `deno task examples`.
 *
 *   deno task examples [--from YYYY-MM-DD] [--days N] [--catalogue-base-url URL]
 *                      [--root DIR] [--now RFC3339]
 *
 * (--root and --now are for tests: another copy of the examples, checked at a fixed time.)
 *
 * 1. With --catalogue-base-url, reads the releases API and support matrix again
 *    (`cairn catalogue refresh`) and replaces catalogue/talos.yaml with the new dated snapshot.
 *    Without it the catalogue is left as it is: a snapshot's date says when its contents were
 *    read, so re-dating it without reading the source would be a lie.
 * 2. Sets every example plan's metadata.expires to --from (default: today, UTC) + --days
 *    (default 60) and re-binds the digests of the files each plan binds (`cairn plan bind`).
 * 3. The examples are unsigned (no key is kept in the repository; the demo signs with throwaway
 *    keys it makes in memory). A plans/*.yaml.sig found here no longer verifies and is named so
 *    its signers sign again.
 * 4. Regenerates fixtures/plans/ (tools/gen_plan_fixtures.ts), which are edits of the examples.
 * 5. Runs `cairn plan check` on the examples now, and says when the catalogue goes stale.
 *
 * test/examples_fresh_test.ts fails 14 days before any example stops passing plan check.
 */
import { resolve, sep } from "node:path";
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { rebindPlanFile } from "../src/app/plan_bind_run.ts";
import { CATALOGUE_MAX_AGE_MS, parseCatalogue } from "../src/domain/catalogue.ts";
import { formatProblem } from "../src/domain/errors.ts";

const REPO = fileURLToPath(new URL("../", import.meta.url));
const MAIN = fileURLToPath(new URL("../src/main.ts", import.meta.url));
const DAY_MS = 86_400_000;

const { values } = parseArgs({
  args: Deno.args,
  options: {
    from: { type: "string" },
    days: { type: "string", default: "60" },
    "catalogue-base-url": { type: "string" },
    root: { type: "string" },
    now: { type: "string" },
  },
});
const ROOT = values.root ? resolve(values.root) + sep : REPO;

function fail(message: string): never {
  console.error(`refresh_examples: ${message}`);
  Deno.exit(1);
}

const from = values.from ?? new Date().toISOString().slice(0, 10);
if (!/^\d{4}-\d{2}-\d{2}$/.test(from) || Number.isNaN(Date.parse(`${from}T00:00:00Z`))) {
  fail(`--from must be a date like 2026-12-01, got ${from}`);
}
const days = Number(values.days);
if (!Number.isInteger(days) || days < 15 || days > 365) {
  fail(`--days must be a whole number from 15 to 365, got ${values.days}`);
}
const expires = new Date(Date.parse(`${from}T00:00:00Z`) + days * DAY_MS).toISOString()
  .replace(/\.\d{3}Z$/, "Z");

async function cairn(args: string[]): Promise<{ code: number; out: string }> {
  const r = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, ...args],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: r.code, out: dec.decode(r.stdout) + dec.decode(r.stderr) };
}

// 1. The catalogue: a genuine read, or left alone.
const catalogue = "catalogue/talos.yaml";
const base = values["catalogue-base-url"];
if (base) {
  const fresh = `catalogue/.talos-refresh-${crypto.randomUUID().slice(0, 8)}.yaml`;
  const r = await cairn(["catalogue", "refresh", "--base-url", base, "--out", fresh]);
  if (r.code !== 0) {
    await Deno.remove(`${ROOT}${fresh}`).catch(() => {});
    fail(`catalogue refresh failed:\n${r.out}`);
  }
  // The examples are re-bound below, so no shipped plan is left bound to the old snapshot.
  await Deno.rename(`${ROOT}${fresh}`, `${ROOT}${catalogue}`);
  console.log(`${catalogue}: refreshed from ${base}`);
}

// 2. Expiry and bound digests, in place.
const plans = [...Deno.readDirSync(`${ROOT}plans`)]
  .filter((e) => e.isFile && e.name.endsWith(".yaml"))
  .map((e) => `plans/${e.name}`)
  .sort();
for (const plan of plans) {
  const r = await rebindPlanFile(plan, ROOT, [{ path: ["metadata", "expires"], value: expires }]);
  if (!r.ok) fail(r.problems.map(formatProblem).join("\n"));
  const what = r.changed.length ? `updated ${r.changed.join(", ")}` : "unchanged";
  console.log(`${plan}: ${what}; sha256:${r.sha256}`);
  for (const s of r.skipped) console.log(`${plan}: ${s}`);
}

// 3. Signatures that the edit invalidated.
const stale = plans.map((p) => `${p}.sig`).filter((s) => {
  try {
    return Deno.statSync(`${ROOT}${s}`).isFile;
  } catch {
    return false;
  }
});

// 4. The fixtures derived from the examples (those of this repository only).
if (ROOT === REPO) {
  const gen = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "tools/gen_plan_fixtures.ts"],
    cwd: ROOT,
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!gen.success) fail(`gen_plan_fixtures failed: ${new TextDecoder().decode(gen.stderr)}`);
  console.log("fixtures/plans/: regenerated");
}

// 5. Valid now?
const check = await cairn([
  "plan",
  "check",
  ...plans,
  ...(values.now ? ["--now", values.now] : []),
]);
console.log(check.out.trimEnd());
const cat = await parseCatalogue(await Deno.readFile(`${ROOT}${catalogue}`), catalogue);
const staleAt = new Date(cat.snapshotAtMs + CATALOGUE_MAX_AGE_MS).toISOString();
console.log(
  `${catalogue}: snapshot of ${cat.file.metadata.snapshotAt}, stale (plan check refuses it) ` +
    `from ${staleAt}${base ? "" : "; refresh it with --catalogue-base-url URL"}`,
);
if (stale.length) {
  fail(
    `these signatures no longer verify; their signers must sign again (cairn plan sign): ` +
      stale.join(", "),
  );
}
if (check.code !== 0) fail("an example plan fails plan check");
