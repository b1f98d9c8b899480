/**
 * A journal that passes its statement deadline (a stalled PostgreSQL: `JournalTimedOut`, see
 * test/adapters/journal/pg_deadline_test.ts) ends the cycle with an error, never a hang: the loop
 * reports itself not ready with that reason and counts the error; the next cycle, with the
 * journal answering again, is ready.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { CairnError } from "../../../src/domain/errors.ts";
import { Reconciler, type ReconcilerDeps } from "../../../src/engine/reconcile/reconciler.ts";
import type { Journal, OperationRecord } from "../../../src/ports/journal.ts";
import { SimClock } from "../../../src/sim/clock.ts";
import { MemoryLogger } from "../../_helpers/memory_logger.ts";
import { within } from "../../_helpers/silent_listener.ts";

Deno.test("a journal past its statement deadline makes the loop not ready with JournalTimedOut; answering again, ready", async () => {
  const stalled = { now: true };
  const errors: string[] = [];
  const unused = () => Promise.reject(new Error("not reached"));
  const r = await Reconciler.create({
    source: {
      fetch: () =>
        Promise.resolve({ watched: { branch: "main", commit: "c".repeat(40) }, branches: [] }),
      listPlans: unused,
      introductions: unused,
      readFile: unused,
    },
    journal: {
      nameBindings: () => Promise.resolve([]),
      // The epoch the loop checks every cycle (never moved here).
      installation: () => Promise.resolve({ epoch: "ep_1", recoveryMode: false }),
      listOperations: (): Promise<OperationRecord[]> =>
        stalled.now
          ? Promise.reject(
            new CairnError({
              reason: "JournalTimedOut",
              message:
                "journal postgres://cairn@db/cairn: no answer from the server within 20000 ms",
            }),
          )
          : Promise.resolve([]),
    } as unknown as Journal,
    metrics: { setOperations: () => undefined, reconcileError: (r: string) => errors.push(r) },
    // A standby: the cycle reads the journal for its metrics only.
    leadership: {
      term: () => undefined,
      status: () => ({ role: "standby", holder: "replica-a" }),
      release: () => Promise.resolve(false),
    },
    clock: new SimClock(0),
    log: new MemoryLogger(),
    signal: new AbortController().signal,
    watchedBranch: "main",
    reportBranch: "reports",
    isPlanBranch: () => true,
    requiredApprovals: 1,
    pollIntervalMs: 1_000,
    wakeup: { wait: () => Promise.resolve("stop") },
    trust: { load: () => Promise.resolve({}) },
    sink: { publish: unused },
  } as unknown as ReconcilerDeps);
  await within(10_000, r.cycle());
  const notReady = r.readiness();
  assertEquals(notReady.ready, false);
  assert(notReady.why?.startsWith("JournalTimedOut: "), notReady.why);
  assertEquals(errors, ["JournalTimedOut"]);
  stalled.now = false;
  await within(10_000, r.cycle());
  assertEquals(r.readiness().ready, true);
});
