/**
 * The KubernetesUpgrade preview writes nothing (issue 14 must-show): with the bootstrap inventory
 * ConfigMap and its namespace missing, the preview reads, refuses on row 25, and the twin counts
 * zero mutating calls on both APIs; the ConfigMap and the namespace are still missing afterwards.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { workingTreeBoundFiles } from "../../../src/adapters/repo/bound_file_reader.ts";
import { livePreviewer } from "../../../src/engine/preview/live_preview.ts";
import { K8S_PLAN_PATH, k8sPlan, k8sTwin } from "../../_helpers/k8s_world.ts";

const CM = { group: "", version: "v1", plural: "configmaps", namespaced: true };
const NS = { group: "", version: "v1", plural: "namespaces", namespaced: false };

Deno.test("preview makes 0 writes while the inventory ConfigMap and its namespace are missing", async () => {
  const twin = await k8sTwin({ k8s: { inventory: "missing" } });
  try {
    // The inventory's namespace is missing too (removed from the store, not through the API).
    const nsType = twin.store.findType("", "v1", "namespaces")!;
    twin.store.remove(nsType, undefined, "kube-system");
    const { parsed } = await k8sPlan();
    const live = await livePreviewer({
      cluster: { kube: twin.kube, talos: twin.talos },
      clock: twin.timeoutClock,
    }).preview(parsed, workingTreeBoundFiles(K8S_PLAN_PATH));
    assertEquals(twin.kube.stats.mutating, 0);
    assertEquals(twin.talos.stats.totalMutating, 0);
    assertEquals(live.writes, { count: 0, refused: [] });
    assertEquals(
      await twin.kube.getObject(CM, "talos-bootstrap-manifests-inventory", "kube-system"),
      undefined,
    );
    assertEquals(await twin.kube.getObject(NS, "kube-system"), undefined);
    const rows = new Map(live.safeguards.map((s) => [s.id, s]));
    assertEquals(rows.get("BootstrapOwnershipChecked")?.verdict, "fail");
    assert(rows.get("BootstrapOwnershipChecked")!.evidence.includes("(and so is its namespace)"));
    assertEquals(rows.get("DryRunWithoutPrePull")?.verdict, "pass");
    assert(live.refused);
    assert(live.reasons.some((r) => r.reason === "BootstrapInventoryMissing"));
  } finally {
    twin.stop();
  }
});

Deno.test("preview of a clean twin: rows 23–26 pass (the journal not given holds row 23)", async () => {
  const twin = await k8sTwin();
  try {
    const { parsed } = await k8sPlan();
    const live = await livePreviewer({
      cluster: { kube: twin.kube, talos: twin.talos },
      clock: twin.timeoutClock,
    }).preview(parsed, workingTreeBoundFiles(K8S_PLAN_PATH));
    const rows = Object.fromEntries(live.safeguards.map((s) => [s.id, s.verdict]));
    assertEquals(rows["KubernetesSkewChecked"], "pass", JSON.stringify(live.reasons));
    assertEquals(rows["BootstrapOwnershipChecked"], "pass");
    assertEquals(rows["DryRunWithoutPrePull"], "pass");
    // Without a journal, whether an OS rollout is partial was not read: held, never passed.
    assertEquals(rows["KubernetesAfterUniformOs"], "unreadable");
    assert(live.held && !live.refused, JSON.stringify(live.reasons));
    assertEquals(twin.kube.stats.mutating + twin.talos.stats.totalMutating, 0);
  } finally {
    twin.stop();
  }
});

Deno.test("preview refuses nodes on mixed Talos versions", async () => {
  const twin = await k8sTwin({
    edit: (d) => {
      d.spec.nodes[4]!.talosVersion = "v1.14.2";
    },
  });
  try {
    const { parsed } = await k8sPlan();
    const live = await livePreviewer({
      cluster: { kube: twin.kube, talos: twin.talos },
      clock: twin.timeoutClock,
    }).preview(parsed, workingTreeBoundFiles(K8S_PLAN_PATH));
    assert(live.refused);
    const r = live.reasons.find((x) => x.reason === "KubernetesMixedTalosVersions");
    assert(r?.message.includes("worker-2=v1.14.2"), JSON.stringify(live.reasons));
  } finally {
    twin.stop();
  }
});
