/**
 * Leader election between replicas over one Lease in the twin's store (in process, virtual
 * time): who leads, when a standby may take over, hand-over, and the renew deadline that makes
 * a leader stop before anyone else may start.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import {
  checkElectionConfig,
  type ElectionConfig,
  INITIAL_ELECTION,
  nextAction,
  observe,
} from "../../../src/engine/leadership/election.ts";
import { LeaderElector } from "../../../src/engine/leadership/elector.ts";
import { SimClock } from "../../../src/sim/clock.ts";
import { InprocLeaseStore } from "../../../src/sim/inproc/lease.ts";
import { Store } from "../../../src/sim/kube/store.ts";
import { MemoryLogger } from "../../_helpers/memory_logger.ts";

const T0 = Date.parse("2026-12-01T00:00:00Z");
const TIMING = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };

function world() {
  const clock = new SimClock(T0);
  const store = new Store({ now: () => clock.now() });
  const replica = (identity: string) => {
    const lease = new InprocLeaseStore(store, "cairn-system", "cairn-leader");
    const log = new MemoryLogger();
    const config: ElectionConfig = { identity, ...TIMING };
    return { lease, log, elector: new LeaderElector({ store: lease, clock, config, log }) };
  };
  return { clock, store, replica };
}

Deno.test("the first replica creates the Lease and leads; the second stands by naming the holder", async () => {
  const w = world();
  const a = w.replica("cairn-a"), b = w.replica("cairn-b");
  await a.elector.round();
  await b.elector.round();
  assert(a.elector.term(), "a leads");
  assertEquals(a.elector.status().role, "leader");
  assertEquals(b.elector.term(), undefined);
  assertEquals(b.elector.status().role, "standby");
  assertEquals(b.elector.status().holder, "cairn-a");
  assert(b.elector.status().why?.includes("held by cairn-a"));
  // Renewals keep the acquire time and the transition count.
  const first = (await a.lease.get())!;
  await w.clock.advance(2_000);
  await a.elector.round();
  const renewed = (await a.lease.get())!;
  assertEquals(renewed.spec.acquireTimeMs, first.spec.acquireTimeMs);
  assertEquals(renewed.spec.renewTimeMs, T0 + 2_000);
  assertEquals(renewed.spec.leaseTransitions, 0);
});

Deno.test("a paused leader is replaced only after the Lease went unchanged for its whole duration", async () => {
  const w = world();
  const a = w.replica("cairn-a"), b = w.replica("cairn-b");
  await a.elector.round();
  const lastRenewal = w.clock.now();
  await b.elector.round(); // b first sees the Lease now: its own clock starts here
  // a is paused (no more rounds); b keeps trying every retry period.
  let takeover: number | undefined;
  for (let t = 0; t < 30_000 && takeover === undefined; t += TIMING.retryPeriodMs) {
    await w.clock.advance(TIMING.retryPeriodMs);
    await b.elector.round();
    if (b.elector.term()) takeover = w.clock.now();
  }
  assert(takeover !== undefined, "b took over");
  const took = takeover - lastRenewal;
  assert(took >= TIMING.leaseDurationMs, `not before the duration (${took} ms)`);
  assert(took <= TIMING.leaseDurationMs + TIMING.retryPeriodMs, `within one retry (${took} ms)`);
  const lease = (await b.lease.get())!;
  assertEquals(lease.spec.holderIdentity, "cairn-b");
  assertEquals(lease.spec.leaseTransitions, 1);
  assertEquals(lease.spec.acquireTimeMs, takeover);
  // a resumes: its renew deadline has long passed, so it no longer leads even before its round,
  // and its round (a renewal of a version that moved on) loses.
  assertEquals(a.elector.term(), undefined);
  await a.elector.round();
  assertEquals(a.elector.status().role, "standby");
  assertEquals(a.elector.status().holder, "cairn-b");
  assert(a.log.entries.some((e) => e.msg === "leadership lost"));
});

Deno.test("a leader that cannot reach the Lease stops leading before a standby may take it", async () => {
  const w = world();
  const a = w.replica("cairn-a"), b = w.replica("cairn-b");
  await a.elector.round();
  await b.elector.round();
  const term = a.elector.term()!;
  a.lease.unreachable = true;
  let aStopped: number | undefined, bStarted: number | undefined;
  for (let i = 0; i < 20; i++) {
    await w.clock.advance(TIMING.retryPeriodMs);
    await a.elector.round();
    await b.elector.round();
    if (aStopped === undefined && !a.elector.term()) aStopped = w.clock.now();
    if (bStarted === undefined && b.elector.term()) bStarted = w.clock.now();
  }
  assert(term.aborted, "a's term ended");
  assert(aStopped !== undefined && bStarted !== undefined);
  assert(aStopped < bStarted, `a stopped at +${aStopped - T0} ms, b started at +${bStarted - T0}`);
  assert(a.elector.status().why?.includes("unreadable"));
});

Deno.test("a hand-over lets the standby lead at its next round; the releaser stands down", async () => {
  const w = world();
  const a = w.replica("cairn-a"), b = w.replica("cairn-b");
  await a.elector.round();
  await b.elector.round();
  const term = a.elector.term()!;
  assertEquals(await a.elector.release("node cp-1 is about to be drained"), true);
  assert(term.aborted);
  assertEquals(a.elector.term(), undefined);
  await w.clock.advance(TIMING.retryPeriodMs);
  await a.elector.round(); // the releaser does not take it back
  assertEquals(a.elector.term(), undefined);
  await b.elector.round();
  assert(b.elector.term(), "b leads at once, without waiting out the duration");
  assertEquals((await b.lease.get())!.spec.leaseTransitions, 1); // a → (released) → b
  // Not the holder: nothing to release.
  assertEquals(await a.elector.release("again"), false);
});

Deno.test("two standbys taking an expired Lease at once: exactly one leads, the other's write is a conflict", async () => {
  const w = world();
  const a = w.replica("cairn-a"), b = w.replica("cairn-b"), c = w.replica("cairn-c");
  await a.elector.round();
  await Promise.all([b.elector.round(), c.elector.round()]);
  await w.clock.advance(TIMING.leaseDurationMs);
  // Both read the same version, both write against it: the store takes one.
  await Promise.all([b.elector.round(), c.elector.round()]);
  const leaders = [b, c].filter((r) => r.elector.term() !== undefined);
  assertEquals(leaders.length, 1);
  assertEquals(b.lease.stats.conflicts + c.lease.stats.conflicts, 1);
  assert([b, c].some((r) => r.elector.status().why?.includes("lost a write race")));
});

Deno.test("two replicas creating the Lease at once: exactly one leads", async () => {
  const w = world();
  const a = w.replica("cairn-a"), b = w.replica("cairn-b");
  await Promise.all([a.elector.round(), b.elector.round()]);
  const leaders = [a, b].filter((r) => r.elector.term() !== undefined);
  assertEquals(leaders.length, 1);
});

Deno.test("expiry counts from this replica's first sight of a version, not the holder's clock", () => {
  const c: ElectionConfig = { identity: "me", ...TIMING };
  const s = observe(INITIAL_ELECTION, {
    resourceVersion: "7",
    // Written by a machine whose clock is a minute behind: expiry still counts from T0.
    spec: {
      holderIdentity: "other",
      leaseDurationSeconds: 15,
      leaseTransitions: 3,
      renewTimeMs: T0 - 60_000,
    },
  }, T0);
  assertEquals(nextAction(s, T0 + 14_999, c).kind, "wait");
  const take = nextAction(s, T0 + 15_000, c);
  assertEquals(take.kind, "update");
  if (take.kind === "update") {
    assertEquals(take.resourceVersion, "7");
    assertEquals(take.spec.leaseTransitions, 4);
  }
  // Seen again unchanged later: the clock started at the first sighting, not the second.
  assertEquals(
    nextAction(observe(s, s.observed!.lease, T0 + 10_000), T0 + 15_000, c).kind,
    "update",
  );
});

Deno.test("the election refuses timings that would let two leaders overlap", () => {
  const base: ElectionConfig = { identity: "me", ...TIMING };
  assertEquals(checkElectionConfig(base), undefined);
  assert(checkElectionConfig({ ...base, renewDeadlineMs: 15_000 })?.includes("leaseDuration"));
  assert(checkElectionConfig({ ...base, retryPeriodMs: 10_000 })?.includes("renewDeadline"));
  assert(checkElectionConfig({ ...base, identity: " " })?.includes("identity"));
});
