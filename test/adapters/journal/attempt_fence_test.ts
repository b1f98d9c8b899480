/**
 * Comparison 7 compares the epoch inside the attempt UPDATE on its own. A restore rewinds owner
 * generations, so a pre-restore process can hold a token whose owner and generation equal the
 * current ones (ER DB rows 027/055): only the epoch tells it apart. The journal API cannot reach
 * that state without a restore, so the rows are written here as a restore followed by a
 * re-approval and a takeover in the new epoch would leave them.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { createClient } from "@libsql/client";
import { openJournal } from "../../../src/adapters/journal/libsql_journal.ts";
import {
  approvedPlan,
  attemptInput,
  committed,
  counterIds,
  T0,
} from "../../_helpers/journal_world.ts";

Deno.test("the attempt UPDATE refuses a superseded epoch even when owner and generation coincide", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cairn-fence-" });
  const url = `file:${dir}/journal.db`;
  const j = await openJournal({ url, ids: counterIds(), nowMs: T0 });
  const raw = createClient({ url });
  try {
    const plan = (await approvedPlan(j)).digest;
    const c = await committed(j, { plan });
    const old = c.token.epoch;
    // After the restore: a new epoch, the plan re-approved in it, and the operation owned by
    // the same controller identity at the same (rewound) generation in the new epoch.
    await raw.batch([
      "UPDATE installation SET epoch = 'ep_restored'",
      "INSERT INTO epochs (epoch, minted_at_ms, reason) VALUES ('ep_restored', 0, 'recovery')",
      "UPDATE plans SET approval_epoch = 'ep_restored'",
      "UPDATE operations SET owner_epoch = 'ep_restored'",
    ], "write");
    const stale = await j.beginAttempt(attemptInput(c.op.id, c.token, c.evidence, T0 + 3000));
    assert(!stale.ok);
    assertEquals([stale.cause, stale.comparison], ["epoch-superseded", 7]);
    const op = (await j.getOperation(c.op.id))!;
    assertEquals([op.state, op.attemptsUsed], ["committed", 0]);
    assertEquals((await j.showOperation(c.op.id))!.attempts, []);
    // The same owner and generation in the current epoch is admitted: the epoch alone decided.
    const current = { ...c.token, epoch: "ep_restored" };
    assert(old !== current.epoch);
    const ok = await j.beginAttempt(attemptInput(c.op.id, current, c.evidence, T0 + 3001));
    assert(ok.ok, "the current epoch's token should be admitted");
  } finally {
    raw.close();
    await j.close();
    await Deno.remove(dir, { recursive: true });
  }
});
