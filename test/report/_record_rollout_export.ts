/**
 * Records the journal export the from-journal golden test renders: a real 7-node rollout of the
 * example plan on the twin. Run `deno run -A test/report/_record_rollout_export.ts` after a
 * journal or executor change that should move the golden, then re-run the test with UPDATE=1.
 * Only the tables the report reads are kept (events: transitions only), gzipped.
 */
import { startTwinWorld } from "../_helpers/twin_world.ts";

const OUT = new URL("./golden/rollout_export.json.gz", import.meta.url);
const TABLES = [
  "plans",
  "operations",
  "attempts",
  "phases",
  "health_rounds",
  "health_results",
  "recoveries",
  "events",
];

const world = await startTwinWorld();
try {
  const outcome = await world.run();
  if (outcome.state !== "completed") throw new Error(`rollout ${outcome.state}`);
  const all = await world.journal.exportAll();
  const chain = await world.journal.verifyChain();
  if (!chain.ok) throw new Error("journal chain does not verify");
  const kept: Record<string, unknown[]> = {};
  for (const t of TABLES) kept[t] = all[t] ?? [];
  kept.events = kept.events!.filter((e) => (e as { kind: string }).kind === "transition");
  kept.plans = kept.plans!.map((p) => ({ ...(p as object), bytes: "" }));
  const json = JSON.stringify({ export: kept, chain: { head: chain.head, rows: chain.rows } });
  const gz = new Blob([json]).stream().pipeThrough(new CompressionStream("gzip"));
  await Deno.writeFile(OUT, gz);
} finally {
  await world.stop();
}
