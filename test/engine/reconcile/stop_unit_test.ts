/**
 * The loop's stop reaches a fetch in flight: a cycle whose fetch waits on a remote that never
 * answers ends as soon as the loop's signal aborts (the source is handed that signal), and the
 * loop reports itself not ready with the source's reason.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { CairnError } from "../../../src/domain/errors.ts";
import { Reconciler } from "../../../src/engine/reconcile/reconciler.ts";
import type { Journal } from "../../../src/ports/journal.ts";
import type { PlanSource } from "../../../src/ports/plan_source.ts";
import type { ReconcilerDeps } from "../../../src/engine/reconcile/reconciler.ts";
import { SimClock } from "../../../src/sim/clock.ts";
import { MemoryLogger } from "../../_helpers/memory_logger.ts";
import { within } from "../../_helpers/silent_listener.ts";

/** A source whose fetch never answers unless it is given a signal that aborts. */
function silentSource(): PlanSource {
  return {
    fetch: (opts) =>
      new Promise((_, reject) => {
        opts?.signal?.addEventListener("abort", () =>
          reject(new CairnError({ reason: "GitStopped", message: "stopped" })));
      }),
    listPlans: () => Promise.reject(new Error("not reached")),
    introductions: () => Promise.reject(new Error("not reached")),
    readFile: () => Promise.reject(new Error("not reached")),
  };
}

Deno.test("a stop during a fetch that never answers ends the cycle at once", async () => {
  const stop = new AbortController();
  const unused = () => Promise.reject(new Error("not reached"));
  const r = await Reconciler.create({
    source: silentSource(),
    journal: {
      nameBindings: () => Promise.resolve([]),
      // The epoch the loop checks every cycle (never moved here).
      installation: () => Promise.resolve({ epoch: "ep_1", recoveryMode: false }),
    } as unknown as Journal,
    clock: new SimClock(0),
    log: new MemoryLogger(),
    signal: stop.signal,
    watchedBranch: "main",
    reportBranch: "reports",
    isPlanBranch: () => true,
    requiredApprovals: 1,
    pollIntervalMs: 1_000,
    wakeup: { wait: () => Promise.resolve("stop") },
    trust: { load: unused },
    sink: { publish: unused },
  } as unknown as ReconcilerDeps);
  const cycle = r.cycle();
  stop.abort();
  await within(10_000, cycle);
  assertEquals(r.readiness().ready, false);
  assertEquals(r.readiness().why, "GitStopped: stopped");
});
