/**
 * Stall detection on the in-process twin: a drain held by a PodDisruptionBudget is reported while
 * it still waits — a journaled `stall` naming the budget and the pod it refuses, told to the
 * observer — well before the drain's own bound ends the step.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { startInprocWorld } from "../../_helpers/inproc_world.ts";
import { inprocReport } from "../../_helpers/inproc_report.ts";
import type { Obj } from "../../../src/sim/kube/store.ts";

Deno.test("a drain stalled by a PDB is reported while it waits, naming the PDB", async () => {
  const w = await startInprocWorld({ nodes: ["worker-1"] });
  try {
    const { store, pdbs } = w.twin.controllers;
    const stalls: string[] = [];
    const seenAt: number[] = [];
    const out = await w.run({
      observer: {
        // Right after the cordon (the gate passed with the budget open), the budget closes:
        // it now needs every OSD healthy, so no OSD pod may be evicted.
        onAttemptResponse: (a) => {
          if (a.phase !== "cordon") return;
          const pdb = store.get(pdbs, "rook-ceph", "rook-ceph-osd")!;
          const next = structuredClone(pdb) as Obj & { spec: Record<string, unknown> };
          next.spec = { selector: next.spec["selector"], minAvailable: 4 };
          store.put(pdbs, next);
        },
        onStall: (st) => {
          stalls.push(`${st.phase} ${st.blocker}`);
          seenAt.push(w.twin.clock.now());
        },
      },
    });
    // The drain waited its whole bound and then held the step (never forced).
    assertEquals(out.nodes.map((n) => [n.state, n.reason]), [["unresolved", "DrainIncomplete"]]);
    assertEquals(stalls, ["drain PodDisruptionBudget rook-ceph/rook-ceph-osd"]);
    const history = (await w.journal.planHistory(w.bound.digest))!;
    const [stall] = history.rolloutEvents!.filter((e) => e.kind === "stall");
    assertEquals(stall!.detail["blocker"], "PodDisruptionBudget rook-ceph/rook-ceph-osd");
    assert(/^rook-ceph\/rook-ceph-osd-0-[a-z0-9-]+$/.test(String(stall!.detail["holding"])));
    assertEquals(stall!.node, "worker-1");
    // Reported while waiting: half the 600 s drain bound in, long before the bound ended it.
    const drain = history.operations[0]!.phases.filter((p) => p.phase === "drain");
    const bound = drain.find((p) => (p.detail as Record<string, unknown>)["boundReached"]);
    assert(bound && stall!.atMs < bound.atMs, "the stall came before the drain's end");
    const firstBlocked = drain.find((p) =>
      (p.detail as Record<string, unknown>)["outcome"] === "blocked"
    )!;
    const waited = Number(stall!.detail["waitedSeconds"]);
    assert(waited >= 300 && waited < 600, `waited ${waited}s`);
    assert(stall!.atMs - firstBlocked.atMs >= 300_000);
    const report = await inprocReport(w, out);
    assert(
      /\*\*stall\*\* \| `StepStalled` \| drain of worker-1 has waited \d+s on PodDisruptionBudget rook-ceph\/rook-ceph-osd/
        .test(report),
      report,
    );
  } finally {
    await w.close();
  }
});

Deno.test("a node that does not come back is reported stalled while the step waits for it", async () => {
  const w = await startInprocWorld({
    nodes: ["worker-1"],
    faults: [{ kind: "no-return-from-reboot", point: "talos.boot", target: "worker-1" }],
  });
  try {
    const stalls: string[] = [];
    const calls = () => ({ ...w.twin.talos.stats.byNode["worker-1"] });
    let atStall: Record<string, number> = {};
    const out = await w.run({
      observer: {
        onStall: (st) => {
          stalls.push(`${st.phase} ${st.blocker}`);
          atStall = calls();
        },
      },
    });
    assertEquals(out.nodes.map((n) => [n.state, n.reason]), [["unresolved", "BootNotObserved"]]);
    assertEquals(stalls, ["reboot node worker-1"]);
    // While no new boot is seen, a poll reads the boot id only: from the stall to the deadline
    // the boot id was read again and again, the version never (issue 18: fewer failing calls).
    const atEnd = calls();
    const read = "MachineService/Read", version = "MachineService/Version";
    assert((atEnd[read] ?? 0) - (atStall[read] ?? 0) >= 10, JSON.stringify({ atStall, atEnd }));
    assertEquals(atEnd[version] ?? 0, atStall[version] ?? 0, "no version read without a new boot");
    const [stall] = (await w.journal.planHistory(w.bound.digest))!.rolloutEvents!
      .filter((e) => e.kind === "stall");
    assert(
      String(stall!.detail["detail"]).includes("not back: no new boot (boot id unreadable)"),
      JSON.stringify(stall),
    );
    // Half of the 900 s reboot bound, reported before the step gave up.
    assert(Number(stall!.detail["waitedSeconds"]) >= 450);
  } finally {
    await w.close();
  }
});
