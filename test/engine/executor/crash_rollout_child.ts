// deno-lint-ignore-file no-console
/**
 * Child process of the crash campaign. Connects to a running twin, runs the rollout on a file
 * journal as controller OWNER, and prints `point N NAME` at every journal write point. At point
 * TARGET it prints `waiting N` and blocks until the parent kills it with SIGKILL; with TARGET
 * `none` it runs to the end and prints `outcome …` and `done`.
 *
 * Usage: crash_rollout_child.ts TWIN_JSON JOURNAL_FILE TARGET OWNER NODE[,NODE…]
 */
import { connectWorld, onlyNodes } from "../../_helpers/twin_world.ts";

const [twinJson, journalFile, target, owner, nodes] = Deno.args;
if (!twinJson || !journalFile || !target || !owner || !nodes) {
  throw new Error("usage: TWIN_JSON JOURNAL_FILE TARGET OWNER NODES");
}
const info = JSON.parse(await Deno.readTextFile(twinJson));
let n = 0;
const writePoint = async (name: string) => {
  n++;
  console.log(`point ${n} ${name}`);
  if (String(n) === target) {
    console.log(`waiting ${n}`);
    await Deno.stdin.read(new Uint8Array(1));
    throw new Error("the parent should have killed this process");
  }
};
const w = await connectWorld(info, {
  journalUrl: `file:${journalFile}`,
  owner,
  writePoint,
  editPlan: onlyNodes(...nodes.split(",")),
});
const out = await w.run();
console.log(`outcome ${JSON.stringify(out.nodes.map((x) => [x.node, x.state, x.reason]))}`);
await w.close();
console.log("done");
// Open watch streams and gRPC channels would keep the process alive.
Deno.exit(0);
