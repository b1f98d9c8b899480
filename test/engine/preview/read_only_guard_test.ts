/**
 * The preview's read-only guard: every mutating Kubernetes and Talos call is refused before it
 * reaches the port and counted; the preview report's write count and read-only row come from
 * that count. Run against the in-process twin, whose own state shows nothing was sent.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { CairnError } from "../../../src/domain/errors.ts";
import { parsePlan } from "../../../src/domain/plan/parse.ts";
import type { TalosUpgradePlan } from "../../../src/domain/plan/schema.ts";
import { type LiveStep, runGuarded } from "../../../src/engine/preview/live_preview.ts";
import { readOnlyGuard } from "../../../src/engine/preview/read_only_guard.ts";
import type { PlanFacts } from "../../../src/ports/reconcile.ts";
import { previewModel } from "../../../src/report/reconcile_reports.ts";
import { renderPreviewReport } from "../../../src/report/render_preview.ts";
import { startInprocTwin } from "../../../src/sim/inproc/cluster.ts";
import { homeOps } from "../../_helpers/inproc_world.ts";
import { ROOT } from "../../_helpers/twin_world.ts";

const O = { timeoutMs: 5_000 };

async function plan(): Promise<TalosUpgradePlan> {
  const bytes = await Deno.readFile(join(ROOT, "plans/talos-v1.14.2.yaml"));
  const p = (await parsePlan(bytes, { file: "plans/talos-v1.14.2.yaml" })).plan;
  if (p.kind !== "TalosUpgrade") throw new Error("example plan is not a TalosUpgrade");
  return p;
}

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    assert(e instanceof CairnError, String(e));
    return e.reason;
  }
  throw new Error("the call was not refused");
}

Deno.test("the guard refuses every mutating call before it reaches the port, counts it, and passes reads through", async () => {
  const twin = startInprocTwin({ description: await homeOps() });
  try {
    const g = readOnlyGuard(twin);
    const node = (await twin.kube.getNode("worker-1"))!;
    const pod = (await twin.kube.listPods("worker-1")).items[0]!;
    const reasons = [
      await refusal(g.kube.cordon("worker-1", node.resourceVersion)),
      await refusal(g.kube.uncordon("worker-1", node.resourceVersion)),
      await refusal(g.kube.evict({ namespace: pod.namespace, name: pod.name }, { dryRun: true })),
      await refusal(g.talos.pull("worker-1", "img", { driver: "CRI", namespace: "NS_SYSTEM" }, O)),
      await refusal(
        g.talos.upgrade("worker-1", "img", { driver: "CRI", namespace: "NS_SYSTEM" }, O),
      ),
      await refusal(g.talos.legacyUpgrade("worker-1", "img", O)),
      await refusal(g.talos.reboot("worker-1", "DEFAULT", O)),
    ];
    assertEquals(new Set(reasons), new Set(["PreviewWriteRefused"]));
    assertEquals(g.refused().map((r) => `${r.port} ${r.call}`), [
      "kube cordon",
      "kube uncordon",
      "kube evict",
      "talos pull",
      "talos upgrade",
      "talos legacyUpgrade",
      "talos reboot",
    ]);
    // Nothing was sent: the node is not cordoned, the pod still runs, the version and boot
    // are unchanged.
    const after = (await twin.kube.getNode("worker-1"))!;
    assertEquals([after.unschedulable, after.resourceVersion], [false, node.resourceVersion]);
    assert(await twin.kube.getPod({ namespace: pod.namespace, name: pod.name }));
    assertEquals((await g.talos.version("worker-1", O)).tag, "v1.13.9");
    assertEquals((await g.kube.getNode("cp-1"))?.name, "cp-1");
  } finally {
    twin.stop();
  }
});

Deno.test("a previewer that tries to write is refused: the report shows the count and fails the read-only row", async () => {
  const twin = startInprocTwin({ description: await homeOps() });
  try {
    const p = await plan();
    const sneaky: LiveStep = async (_plan, d) => {
      const n = (await d.cluster.kube.getNode("worker-1"))!;
      // A step that swallows the refusal still counts: the guard, not the step, keeps the tally.
      await d.cluster.kube.cordon("worker-1", n.resourceVersion).catch(() => undefined);
      await d.cluster.talos.reboot("worker-1", "DEFAULT", O);
    };
    const live = await runGuarded(p, { cluster: twin, clock: twin.timeoutClock }, [sneaky]);
    assertEquals(live.writes?.count, 2);
    assert(live.refused);
    assert(live.reasons.some((r) => r.reason === "PreviewWriteRefused"));
    assertEquals((await twin.kube.getNode("worker-1"))!.unschedulable, false);

    const facts: PlanFacts = {
      name: "talos-v1.14.2",
      path: "plans/talos-v1.14.2.yaml",
      branch: "plan/talos-v1.14.2",
      commit: "0".repeat(40),
      digest: "d".repeat(64),
      plan: p,
      problems: [],
      requiredApprovals: 1,
      refusals: [],
    };
    const m = previewModel({ facts, verdict: "refused", generatedAt: 0, live });
    assertEquals(m.writes.count, 2);
    const row = m.safeguards.find((s) => s.id === "PreviewReadOnly")!;
    assertEquals([row.verdict, row.reason], ["fail", "PreviewWriteRefused"]);
    const md = renderPreviewReport(m);
    assert(md.includes("**The preview attempted 2 writes to the cluster**"), md.slice(0, 800));
    assert(/\| 4 \| Preview is read-only[^\n]*\| \*\*FAIL\*\* \|/.test(md));
  } finally {
    twin.stop();
  }
});

Deno.test("the real preview steps attempt no write: the count is 0 and the read-only row passes on it", async () => {
  const twin = startInprocTwin({ description: await homeOps() });
  try {
    const p = await plan();
    const { livePreview } = await import("../../../src/engine/preview/live_preview.ts");
    const live = await livePreview(p, { cluster: twin, clock: twin.timeoutClock });
    assertEquals(live.writes, { count: 0, refused: [] });
    // Row 2 is judged on the running schematic every node publishes.
    const schematic = live.safeguards.find((s) => s.id === "SchematicPreserved");
    assertEquals(schematic?.verdict, "pass", schematic?.evidence);
  } finally {
    twin.stop();
  }
});
