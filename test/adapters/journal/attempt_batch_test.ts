/**
 * The attempt transaction's hot path is one read and one write batch (issue 18). A write by
 * another connection landing between the two makes the batch roll back whole (the timeline's
 * next sequence number is taken) and the attempt is decided again on what is now there.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { openJournal } from "../../../src/adapters/journal/by_url.ts";
import type { Journal } from "../../../src/ports/journal.ts";
import {
  approvedPlan,
  attemptInput,
  committed,
  CONTROLLER,
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
  const withFile = async (fn: (url: string) => Promise<void>) => {
    const { url, dispose } = await store.fresh();
    try {
      await fn(url);
    } finally {
      await dispose();
    }
  };
  /**
   * Another connection to the same journal, as another process would have: a libSQL file under
   * another spelling (its own connection and its own write queue); PostgreSQL's own pool.
   */
  const otherSpelling = (url: string) =>
    store === LIBSQL_FILE ? url.replace("/journal.db", "/./journal.db") : url;

  Deno.test(`${store.name}: an uncontended attempt is one read and one write batch`, async () => {
    await withFile(async (url) => {
      const points: string[] = [];
      const j = await openJournal({
        url,
        ids: counterIds(),
        nowMs: T0,
        writePoint: (p) => Promise.resolve(void points.push(p)),
      });
      try {
        const plan = (await approvedPlan(j)).digest;
        const c = await committed(j, { plan });
        points.length = 0;
        const a = await j.beginAttempt(attemptInput(c.op.id, c.token, c.evidence, T0 + 3000));
        assert(a.ok);
        // The interactive transaction would pass `attempt:operation-updated` and
        // `attempt:attempt-inserted`; the batch has no point inside it.
        assertEquals(points, ["attempt:before-commit", "attempt:after-commit"]);
        assertEquals((await j.getOperation(c.op.id))!.state, "sending");
        assertEquals((await j.verifyChain()).ok, true);
      } finally {
        await j.close();
      }
    });
  });

  Deno.test(`${store.name}: a write landing between the read and the batch rolls the batch back; the attempt is decided again`, async () => {
    await withFile(async (url) => {
      const points: string[] = [];
      // Opened after `j` (its writePoint hook reads it once it exists).
      const peer: { other?: Journal } = {};
      let raced = false;
      const j = await openJournal({
        url,
        ids: counterIds("a"),
        nowMs: T0,
        writePoint: async (p) => {
          points.push(p);
          if (p === "attempt:before-commit" && !raced && peer.other) {
            raced = true;
            // Another connection (another process in production) writes to the journal now.
            await peer.other.startObservation("worker-2", CONTROLLER, T0 + 2999);
          }
        },
      });
      const other = await openJournal({
        url: otherSpelling(url),
        ids: counterIds("b"),
        nowMs: T0,
      });
      peer.other = other;
      try {
        const plan = (await approvedPlan(j)).digest;
        const c = await committed(j, { plan });
        points.length = 0;
        const a = await j.beginAttempt(attemptInput(c.op.id, c.token, c.evidence, T0 + 3000));
        assert(a.ok, "the attempt is admitted on the second read");
        assertEquals(points, [
          "attempt:before-commit",
          "attempt:before-commit",
          "attempt:after-commit",
        ]);
        const d = (await j.showOperation(c.op.id))!;
        assertEquals([d.operation.state, d.operation.attemptsUsed, d.attempts.length], [
          "sending",
          1,
          1,
        ]);
        const kinds = (await j.events()).map((e) => e.kind);
        assertEquals(kinds.filter((k) => k === "attempt").length, 1);
        assert(kinds.lastIndexOf("observation-started") < kinds.lastIndexOf("attempt"));
        assertEquals((await j.verifyChain()).ok, true);
      } finally {
        await other.close();
        await j.close();
      }
    });
  });
}
