/**
 * The libSQL journal's backup and restore (adapters/journal/libsql_backup.ts), which the
 * simulation campaign's journal restore uses: a restore puts back exactly the rows of the backup
 * (what was written since is gone, the hash chain verifies, the append-only triggers stand
 * again), and the journal stays open and usable.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { openRestorableJournal } from "../../../src/adapters/journal/libsql_journal.ts";
import { approvedPlan, committed, counterIds, T0 } from "../../_helpers/journal_world.ts";

Deno.test("libSQL journal: a restore replaces every table's rows with the backup's, and the journal goes on", async () => {
  const r = await openRestorableJournal({ url: ":memory:", ids: counterIds("b"), nowMs: T0 });
  try {
    const plan = await approvedPlan(r.journal);
    const backup = await r.backup();
    const eventsAtBackup = (await r.journal.events()).length;
    await committed(r.journal, { plan: plan.digest });
    assertEquals((await r.journal.listOperations()).length, 1);
    await r.restore(backup);
    assertEquals(await r.journal.listOperations(), [], "the commitment after the backup is gone");
    assertEquals((await r.journal.events()).length, eventsAtBackup);
    assertEquals((await r.journal.verifyChain()).ok, true);
    // The journal goes on from the backup: a new commitment, a chain that still verifies.
    await committed(r.journal, { plan: plan.digest });
    assertEquals((await r.journal.listOperations()).length, 1);
    assertEquals((await r.journal.verifyChain()).ok, true);
    // Restored twice: the append-only triggers were created again after the first.
    await r.restore(backup);
    assertEquals(await r.journal.listOperations(), []);
    assertEquals((await r.journal.verifyChain()).ok, true);
  } finally {
    await r.journal.close();
  }
});
