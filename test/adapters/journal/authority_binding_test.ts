/**
 * Comparison 2 (the binding) also asks that the plan's name still be bound to the plan's digest. The journal's
 * API never rebinds a name (a second digest under a bound name is refused as
 * PlanChangedAfterApproval), so only a hand on the database or a restore from another journal's
 * backup can leave an approved plan whose name now names another digest. The rows are written
 * here past the API, as such a hand would leave them; on a libSQL file and on PostgreSQL.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { openJournal } from "../../../src/adapters/journal/by_url.ts";
import {
  approvedPlan,
  attemptInput,
  committed,
  counterIds,
  observe,
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
  Deno.test(`${store.name}: an approved plan whose name is bound to another digest admits neither a commitment nor an attempt`, async () => {
    const { url, dispose } = await store.fresh();
    const j = await openJournal({ url, ids: counterIds(), nowMs: T0 });
    try {
      const plan = await approvedPlan(j);
      const c = await committed(j, { plan: plan.digest });
      const other = await approvedPlan(j, { digest: "9".repeat(64), name: "other-plan" });
      await store.exec(url, [
        `UPDATE plan_names SET digest = '${other.digest}' WHERE name = '${plan.name}'`,
      ]);
      assertEquals((await j.getPlan(plan.digest))!.state, "approved");

      const ev = await observe(j, { machine: "worker-2", plan: plan.digest, at: T0 + 2500 });
      const { epoch } = await j.installation();
      const commit = await j.commit({
        planDigest: plan.digest,
        step: "worker-2/0",
        evidenceId: ev.id,
        owner: "cairn-a",
        epoch,
        nowMs: T0 + 2500,
      });
      assert(!commit.ok, "a commitment was admitted for a plan whose name is bound elsewhere");
      assertEquals([commit.cause, commit.comparison], ["binding-changed", 2]);

      const attempt = await j.beginAttempt(attemptInput(c.op.id, c.token, c.evidence, T0 + 2600));
      assert(!attempt.ok, "an attempt was admitted for a plan whose name is bound elsewhere");
      assertEquals(attempt.cause, "binding-changed");
      assertEquals((await j.showOperation(c.op.id))!.attempts, []);
    } finally {
      await j.close();
      await dispose();
    }
  });
}
