// deno-lint-ignore-file no-console
/**
 * Child process for the crash tests. Sets up a journal, then runs one transaction (commit, attempt
 * or takeover) with a write-point hook: it prints `point <name>` at each point and, at the point
 * named on the command line, prints `waiting <name>` and blocks on stdin until the parent kills
 * it. With `list` it runs to the end and prints `done`.
 *
 * Usage: crash_child.ts URL SCENARIO POINT|list
 */
import { openJournal } from "../../../src/adapters/journal/by_url.ts";
import {
  approvedPlan,
  attemptInput,
  committed,
  CONTROLLER,
  counterIds,
  T0,
} from "../../_helpers/journal_world.ts";

const [url, scenario, target] = Deno.args;
if (!url || !scenario || !target) throw new Error("usage: URL SCENARIO POINT|list");

let armed = false;
const writePoint = async (name: string) => {
  if (!armed) return;
  console.log(`point ${name}`);
  if (name === target) {
    console.log(`waiting ${name}`);
    await Deno.stdin.read(new Uint8Array(1));
    throw new Error("the parent should have killed this process");
  }
};

const j = await openJournal({ url, ids: counterIds(), nowMs: T0, writePoint });
const plan = (await approvedPlan(j)).digest;
if (scenario === "commit") {
  armed = true;
  await committed(j, { plan });
} else {
  const c = await committed(j, { plan });
  armed = true;
  if (scenario === "attempt") {
    const r = await j.beginAttempt(attemptInput(c.op.id, c.token, c.evidence, T0 + 3000));
    if (!r.ok) throw new Error(r.cause);
  } else {
    const r = await j.takeOver({
      operationId: c.op.id,
      newOwner: "cairn-b",
      seenGen: 1,
      epoch: c.token.epoch,
      actor: CONTROLLER,
      nowMs: T0 + 3000,
    });
    if (!r.ok) throw new Error("takeover lost");
  }
}
armed = false;
await j.close();
console.log("done");
