/**
 * The node step against Talos reads answered from an earlier answer (`stale-read`, a lagging apid
 * proxy or cache) and streams that skip messages (`stream-skips-events`), in process (issue 16).
 * A stale read is always an answer the machine really gave: it can hold a step back, never make
 * it count a boot, a version or a stored document it has not seen, and never fail a node whose
 * machine did what was asked.
 */
import { deepStrictEqual as assertEquals, throws } from "node:assert/strict";
import { bootIdFrom } from "../../../src/adapters/talos/errors.ts";
import { type Fault, FaultSchedule } from "../../../src/sim/faults.ts";
import { StaleReads } from "../../../src/sim/talos/stale_reads.ts";
import { startInprocWorld } from "../../_helpers/inproc_world.ts";

const W1 = ["worker-1"];

async function runWith(faults: Fault[]) {
  const w = await startInprocWorld({ nodes: W1, faults });
  try {
    const out = await w.run();
    const m = w.twin.talos.stats.mutating;
    const n = w.twin.cluster.nodes.get("worker-1")!;
    return {
      nodes: out.nodes.map((x) => [x.node, x.state, x.reason]),
      install: m["LifecycleService/Upgrade"] ?? 0,
      reboot: m["MachineService/Reboot"] ?? 0,
      running: n.runningVersion,
      fired: w.twin.faults.fired.filter((f) => f.kind === faults[0]?.kind).length,
    };
  } finally {
    await w.close();
  }
}

/** worker-1's Talos version reads answered from its earlier answers, `count` of them. */
function staleVersion(count: number, params: NonNullable<Fault["params"]>): Fault {
  return { kind: "stale-read", point: "talos.Version", target: "worker-1", count, params };
}

Deno.test("stale Talos reads: the old version read beside the new boot id is read again, not BootedOtherVersion", async () => {
  // Every version read answers what the machine said one read before: the first read after the
  // reboot shows the old version beside the new boot id.
  const r = await runWith([staleVersion(1_000_000, { lag: 1 })]);
  assertEquals(r.nodes, [["worker-1", "completed", "CompletionObserved"]]);
  assertEquals([r.install, r.reboot, r.running], [1, 1, "v1.14.2"]);
  assertEquals(r.fired > 0, true, "the stale read was served");
});

Deno.test("stale Talos reads: a completion read answered from before the reboot is read again, never PostconditionContradicted", async () => {
  // A clean one-node step reads the version three times: before the commitment, at the new boot
  // and at completion. The third (the completion read) answers what the first did, the version
  // from before the reboot; the boot was already seen at the target.
  const r = await runWith([staleVersion(1, { lag: 2, every: 3 })]);
  assertEquals(r.nodes, [["worker-1", "completed", "CompletionObserved"]]);
  assertEquals([r.install, r.reboot, r.running], [1, 1, "v1.14.2"]);
  assertEquals(r.fired, 1, "the completion read was answered stale");
});

Deno.test("missed Talos reads: a boot-id read whose stream skipped its data is unreadable, never a new boot", async () => {
  // The first boot-id read (before the install) comes back empty: were it taken as the boot id,
  // any later read would count as a reboot.
  const r = await runWith([{
    kind: "stream-skips-events",
    point: "talos.Read",
    target: "worker-1",
    count: 1,
  }]);
  assertEquals(r.nodes, [["worker-1", "unresolved", "BootIdUnreadable"]]);
  assertEquals([r.install, r.reboot, r.running], [0, 0, "v1.13.9"]);
  assertEquals(r.fired, 1);
});

Deno.test("the twin's stale-read answers from the machine's earlier answers, only older ones, for its count", () => {
  const faults = new FaultSchedule([{
    kind: "stale-read",
    point: "talos.Version",
    target: "n1",
    count: 2,
    params: { lag: 1, every: 1 },
  }]);
  const stale = new StaleReads(faults, { now: () => 0 });
  const read = (v: string, node = "n1") => stale.answer("talos.Version", node, "", v);
  assertEquals(read("v1"), "v1", "nothing earlier: fresh");
  assertEquals(read("v2"), "v1", "the answer one read before");
  assertEquals(read("v2"), "v2", "the same answer again is not stale (no firing)");
  assertEquals(read("v3"), "v2");
  assertEquals(read("v4"), "v4", "count spent");
  assertEquals(read("x", "n2"), "x", "another machine");
  assertEquals(faults.fired.map((f) => f.kind), ["stale-read", "stale-read"]);
});

Deno.test("a boot id is a UUID: an empty or cut read is unreadable", () => {
  const id = "0f6c1a52-3f3e-4c1d-9b1e-5d2f8a7c6b10";
  assertEquals(bootIdFrom(`${id}\n`, "n1", "Read"), id);
  throws(() => bootIdFrom("", "n1", "Read"), /boot id read back as ""/);
  throws(() => bootIdFrom(id.slice(0, 20), "n1", "Read"), /boot id read back/);
});
