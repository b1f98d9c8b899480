/** The recorded twin rollout the report and safeguard tests judge (see _record_rollout_history.ts). */
import type { PlanHistory } from "../../src/ports/journal_history.ts";

const HISTORY = new URL("./golden/rollout_history.json.gz", import.meta.url);

/** The example plan's one hop. */
export const HOPS = [{
  to: "v1.14.2",
  schematic: "30684e2ddd0b9d61be817efe9f71ba839dc0e7610d8bc111fe7f70c6b29db08b",
}];

/** A real 7-node twin rollout, as `Journal.planHistory` returned it. */
export async function recorded(): Promise<{ history: PlanHistory; head: string; count: number }> {
  const file = await Deno.open(HISTORY);
  const text = await new Response(file.readable.pipeThrough(new DecompressionStream("gzip")))
    .text();
  const data = JSON.parse(text) as {
    history: PlanHistory;
    chain: { head: string; rows: number };
  };
  return { history: data.history, head: data.chain.head, count: data.chain.rows };
}
