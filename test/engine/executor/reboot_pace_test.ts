/**
 * The reboot wait polls finely where a boot is likely (engine/executor/reboot_pace.ts): once a run
 * has seen nodes come back, the later nodes are seen back within a fine poll of their return
 * instead of up to a whole interval later (issue 18, virtual overhead), and the pace never
 * changes what a reading decides.
 */
import { deepStrictEqual as eq, ok as assert } from "node:assert/strict";
import { RebootPace } from "../../../src/engine/executor/reboot_pace.ts";
import { startInprocWorld } from "../../_helpers/inproc_world.ts";

Deno.test("reboot pace: at the interval until a reboot was seen, then finely around it", () => {
  const p = new RebootPace();
  eq([0, 40_000, 90_000, 200_000].map((t) => p.sleepMs(t, 5_000)), [5_000, 5_000, 5_000, 5_000]);
  // seen back at 95 s, not back at 90 s: the window is 85–100 s
  p.seen(90_000, 95_000);
  eq(p.sleepMs(0, 5_000), 5_000);
  eq(p.sleepMs(80_000, 5_000), 5_000);
  eq(p.sleepMs(82_000, 5_000), 3_000, "lands on the window's start, not past it");
  eq(p.sleepMs(85_000, 5_000), 1_000);
  eq(p.sleepMs(99_999, 5_000), 1_000);
  eq(p.sleepMs(100_000, 5_000), 5_000, "past the window: the interval again");
});

Deno.test("reboot pace: durations spread wider than it can predict leave the interval alone", () => {
  const p = new RebootPace();
  p.seen(25_000, 30_000);
  p.seen(295_000, 300_000);
  eq(p.sleepMs(60_000, 5_000), 5_000);
  eq(p.sleepMs(296_000, 5_000), 5_000);
  // only the latest three reboots count: the outlier ages out
  p.seen(90_000, 95_000);
  p.seen(90_000, 91_000);
  p.seen(90_000, 91_000);
  eq(p.sleepMs(86_000, 5_000), 1_000);
});

Deno.test("reboot wait: later nodes are seen back within a fine poll, the first within an interval", async () => {
  // 93 s off the 5 s poll grid, so a wait at the interval sees each node back up to 4 s late
  const w = await startInprocWorld({
    nodes: ["worker-1", "worker-2", "worker-3", "worker-4"],
    editCluster: (d) => {
      for (const n of d.spec.nodes) n.rebootSeconds = 93;
      return d;
    },
  });
  try {
    const out = await w.run();
    eq(out.nodes.map((n) => n.state), ["completed", "completed", "completed", "completed"]);
    const waits = (await w.operations()).map((op) => {
      const at = (phase: string) => op.phases.find((p) => p.phase === phase)!.atMs;
      return at("boot-observed") - at("reboot");
    });
    // The first node at the 5 s interval (95 s); the later ones within the fine 1 s poll.
    assert(waits[0]! > 93_000 && waits[0]! <= 98_000, `first wait ${waits[0]}`);
    for (const ms of waits.slice(1)) assert(ms >= 93_000 && ms <= 94_000, `waits ${waits}`);
    // Finely only around the boot: a few more boot-id reads than the first node's, not five
    // times as many.
    const reads = (n: string) => w.twin.talos.stats.byNode[n]?.["MachineService/Read"] ?? 0;
    assert(
      reads("worker-4") <= reads("worker-1") + 12,
      `${reads("worker-4")} vs ${reads("worker-1")}`,
    );
  } finally {
    await w.close();
  }
});
