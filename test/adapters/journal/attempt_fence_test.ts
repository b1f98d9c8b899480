/**
 * Comparison 7 compares the epoch inside the attempt UPDATE on its own. A restore rewinds owner
 * generations, so a pre-restore process can hold a token whose owner and generation equal the
 * current ones (ER DB rows 027/055): only the epoch tells it apart. The journal API cannot reach
 * that state without a restore, so the rows are written here as a restore followed by a
 * re-approval and a takeover in the new epoch would leave them. On a libSQL file and on
 * PostgreSQL, whose hot path compares the token's epoch with the operation row's and the row's
 * with the installation's, each on its own.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { openJournal } from "../../../src/adapters/journal/by_url.ts";
import {
  approvedPlan,
  attemptInput,
  committed,
  counterIds,
  T0,
} from "../../_helpers/journal_world.ts";
import {
  type JournalStoreKind,
  LIBSQL_FILE,
  postgresStore,
} from "../../_helpers/journal_stores.ts";
import { sharedPostgres } from "../../_helpers/postgres.ts";

const STORES: readonly JournalStoreKind[] = [LIBSQL_FILE, postgresStore(await sharedPostgres())];

for (const store of STORES) {
  Deno.test(`${store.name}: the attempt UPDATE refuses a superseded epoch even when owner and generation coincide`, async () => {
    const { url, dispose } = await store.fresh();
    const j = await openJournal({ url, ids: counterIds(), nowMs: T0 });
    try {
      const plan = (await approvedPlan(j)).digest;
      const c = await committed(j, { plan });
      const old = c.token.epoch;
      // After the restore: a new epoch, the plan re-approved in it, and the operation owned by
      // the same controller identity at the same (rewound) generation in the new epoch.
      await store.exec(url, [
        "UPDATE installation SET epoch = 'ep_restored'",
        "INSERT INTO epochs (epoch, minted_at_ms, reason) VALUES ('ep_restored', 0, 'recovery')",
        "UPDATE plans SET approval_epoch = 'ep_restored'",
        "UPDATE operations SET owner_epoch = 'ep_restored'",
      ]);
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
      await j.close();
      await dispose();
    }
  });

  Deno.test(`${store.name}: the attempt UPDATE compares the operation's epoch with the installation's, not only with the token's`, async () => {
    const { url, dispose } = await store.fresh();
    const j = await openJournal({ url, ids: counterIds(), nowMs: T0 });
    try {
      const plan = (await approvedPlan(j)).digest;
      const c = await committed(j, { plan });
      // The installation moved to a new epoch (the plan re-approved in it) while the operation
      // row still names the old one: the token matches the row, but neither is current.
      await store.exec(url, [
        "UPDATE installation SET epoch = 'ep_restored'",
        "INSERT INTO epochs (epoch, minted_at_ms, reason) VALUES ('ep_restored', 0, 'recovery')",
        "UPDATE plans SET approval_epoch = 'ep_restored'",
      ]);
      const stale = await j.beginAttempt(attemptInput(c.op.id, c.token, c.evidence, T0 + 3000));
      assert(!stale.ok, "an operation row of a superseded epoch admitted an attempt");
      assertEquals([stale.cause, stale.comparison], ["epoch-superseded", 7]);
      const op = (await j.getOperation(c.op.id))!;
      assertEquals([op.state, op.attemptsUsed], ["committed", 0]);
      assertEquals((await j.showOperation(c.op.id))!.attempts, []);
    } finally {
      await j.close();
      await dispose();
    }
  });

  Deno.test(`${store.name}: the attempt UPDATE refuses another owner, a superseded generation and a state that is not attemptable`, async () => {
    const { url, dispose } = await store.fresh();
    const j = await openJournal({ url, ids: counterIds(), nowMs: T0 });
    try {
      const plan = (await approvedPlan(j)).digest;
      const c = await committed(j, { plan });
      const at = (t: number, token = c.token) => attemptInput(c.op.id, token, c.evidence, t);
      const other = await j.beginAttempt(at(T0 + 3000, { ...c.token, owner: "cairn-z" }));
      assert(!other.ok);
      assertEquals([other.cause, other.comparison], ["fence-mismatch", 7]);
      const stale = await j.beginAttempt(at(T0 + 3001, { ...c.token, gen: c.token.gen + 1 }));
      assert(!stale.ok);
      assertEquals([stale.cause, stale.comparison], ["fence-mismatch", 7]);
      assertEquals((await j.showOperation(c.op.id))!.attempts, []);
      // An attempt in flight (no response yet): a second one is not a phase continuation.
      const first = await j.beginAttempt(at(T0 + 3002));
      assert(first.ok);
      const second = await j.beginAttempt(at(T0 + 3003));
      assert(!second.ok, "a second attempt was admitted while the first is unaccounted");
      assertEquals([second.cause, second.comparison], ["state-not-attemptable", 7]);
      // Once accepted, the continuation is admitted; a verifying operation admits none.
      await j.recordResponse({
        attemptId: first.attempt.id,
        token: c.token,
        responseClass: "accepted",
        detail: "",
        nowMs: T0 + 3004,
      });
      await j.transition({
        operationId: c.op.id,
        token: c.token,
        to: "verifying",
        reason: "accepted",
        nowMs: T0 + 3005,
      });
      const late = await j.beginAttempt(at(T0 + 3006));
      assert(!late.ok, "an attempt was admitted on a verifying operation");
      assertEquals([late.cause, late.comparison], ["state-not-attemptable", 7]);
      assertEquals((await j.showOperation(c.op.id))!.attempts.length, 1);
    } finally {
      await j.close();
      await dispose();
    }
  });
}
