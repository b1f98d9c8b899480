/**
 * Maintenance windows on the in-process twin (virtual time): a rollout that reaches a window too
 * short for the next node holds before that node's commitment, journals the hold with the next
 * window, and resumes when the next window opens; a committed step is never cut short.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { startInprocWorld } from "../../_helpers/inproc_world.ts";
import { inprocReport } from "../../_helpers/inproc_report.ts";
import { buildStatus, statusText } from "../../../src/cli/status.ts";

// The twin starts at 2026-12-01T09:00Z. A 45-minute window from 09:00 UTC every day fits one
// 44-minute step at its very start and no second one after it.
const WINDOW = `  expectedStepMinutes: 44
  windows:
    - start: "0 9 * * *"
      durationMinutes: 45
      timeZone: UTC
`;

Deno.test("a rollout reaching a closing window holds before the next commitment and resumes in the next window", async () => {
  const w = await startInprocWorld({
    nodes: ["worker-1", "worker-2"],
    editPlan: (t) => t + WINDOW,
  });
  try {
    const holds: string[] = [];
    const out = await w.run({ observer: { onHold: (h) => holds.push(`${h.node}:${h.reason}`) } });
    assertEquals(out.state, "completed");
    assertEquals(holds, ["worker-2:MaintenanceWindowTooShort"]);
    const ops = (await w.operations()).map((o) => o.operation);
    const [first, second] = ops.sort((a, b) => a.createdAtMs - b.createdAtMs);
    // worker-1 was committed in the first window; worker-2 only once the next one opened.
    assert(first!.createdAtMs < Date.parse("2026-12-01T09:01:00Z"));
    assert(second!.createdAtMs >= Date.parse("2026-12-02T09:00:00Z"));
    assert(second!.createdAtMs < Date.parse("2026-12-02T09:01:00Z"));
    const history = await w.journal.planHistory(w.bound.digest);
    const events = (history?.rolloutEvents ?? []).map((e) => ({
      kind: e.kind,
      node: e.node,
      reason: e.detail["reason"] ?? e.detail["after"],
    }));
    assertEquals(events, [
      { kind: "hold", node: "worker-2", reason: "MaintenanceWindowTooShort" },
      { kind: "resume", node: "worker-2", reason: "MaintenanceWindowTooShort" },
    ]);
    const hold = history!.rolloutEvents![0]!;
    assertEquals(hold.detail["nextOpensAtMs"], Date.parse("2026-12-02T09:00:00Z"));
    assertEquals((await w.journal.verifyChain()).ok, true);
    const report = await inprocReport(w, out);
    assert(report.includes("## Holds and events beside the steps"), report);
    // The report states the plan's window as of its rendering (the twin's clock, after the run).
    assert(
      /\*\*Maintenance window:\*\* (open since|next opens) 2026-12-0\dT09:00:00Z/.test(report),
      report,
    );
    assert(
      /\| 2026-12-01T09:\d\d:\d\dZ \| `worker-2` \| \*\*hold\*\* \| `MaintenanceWindowTooShort` \| .*next window 2026-12-02T09:00:00\.000Z/
        .test(report),
      report,
    );
  } finally {
    await w.close();
  }
});

Deno.test("outside every window nothing is committed until one opens", async () => {
  const w = await startInprocWorld({
    nodes: ["worker-1"],
    editPlan: (t) =>
      t + `  windows:
    - start: "30 22 * * *"
      durationMinutes: 240
      timeZone: Europe/Berlin
`,
  });
  try {
    const out = await w.run();
    assertEquals(out.state, "completed");
    const [op] = await w.operations();
    // 22:30 in Berlin (CET) is 21:30Z.
    assertEquals(
      new Date(op!.operation.createdAtMs).toISOString().slice(0, 16),
      "2026-12-01T21:30",
    );
    const holds = (await w.journal.planHistory(w.bound.digest))!.rolloutEvents!;
    assertEquals(holds.map((h) => [h.kind, h.detail["reason"] ?? null]), [
      ["hold", "MaintenanceWindowClosed"],
      ["resume", null],
    ]);
    // `cairn status` shows the window in force (or the next one) and the last hold.
    const status = await buildStatus(w.journal, Date.parse("2026-12-02T12:00:00Z"));
    const [c] = status.clusters;
    assertEquals(c?.cluster, "home-ops");
    assertEquals(c?.nextWindows, [{
      planName: "talos-v1.14.2",
      opensAtMs: Date.parse("2026-12-02T21:30:00Z"),
      closesAtMs: Date.parse("2026-12-03T01:30:00Z"),
    }]);
    assertEquals(c?.lastEvents.map((e) => [e.kind, e.node]), [["hold", "worker-1"]]);
    assert(
      statusText(status).includes("window 2026-12-02T21:30:00.000Z to 2026-12-03T01:30:00.000Z"),
    );
  } finally {
    await w.close();
  }
});
