/**
 * Records the journal history the from-journal golden test renders: a real 7-node rollout of the
 * example plan on the twin, read back through `Journal.planHistory`. Run
 * `deno run -A test/report/_record_rollout_history.ts` after a journal or executor change that
 * should move the golden, then re-run the test with UPDATE=1.
 */
import { startTwinWorld } from "../_helpers/twin_world.ts";

const OUT = new URL("./golden/rollout_history.json.gz", import.meta.url);

const world = await startTwinWorld();
try {
  const outcome = await world.run();
  if (outcome.state !== "completed") throw new Error(`rollout ${outcome.state}`);
  const [plan] = await world.journal.listPlans();
  if (!plan) throw new Error("no plan recorded");
  const history = await world.journal.planHistory(plan.digest);
  const chain = await world.journal.verifyChain();
  if (!chain.ok) throw new Error("journal chain does not verify");
  const json = JSON.stringify({ history, chain: { head: chain.head, rows: chain.rows } });
  const gz = new Blob([json]).stream().pipeThrough(new CompressionStream("gzip"));
  await Deno.writeFile(OUT, gz);
} finally {
  await world.stop();
}
