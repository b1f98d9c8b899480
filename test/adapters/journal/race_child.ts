// deno-lint-ignore-file no-console
/**
 * Child process for the cross-process takeover race: opens the journal, prints `ready`, waits
 * for one byte on stdin (the parent's start signal), then takes over generation SEEN of OP and
 * prints `won` or `lost`.
 *
 * Usage: race_child.ts URL OP SEEN EPOCH OWNER
 */
import { openJournal } from "../../../src/adapters/journal/by_url.ts";
import { CONTROLLER, counterIds, T0 } from "../../_helpers/journal_world.ts";

const [url, op, seen, epoch, owner] = Deno.args;
if (!url || !op || !seen || !epoch || !owner) throw new Error("usage: URL OP SEEN EPOCH OWNER");
const j = await openJournal({ url, ids: counterIds(owner), nowMs: T0, migrate: false });
console.log("ready");
await Deno.stdin.read(new Uint8Array(1));
const r = await j.takeOver({
  operationId: op,
  newOwner: owner,
  seenGen: Number(seen),
  epoch,
  actor: CONTROLLER,
  nowMs: T0 + 5000,
});
await j.close();
console.log(r.ok ? "won" : "lost");
