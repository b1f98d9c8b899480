/**
 * End to end, as `cairn reconcile` runs against a cluster: a ComponentUpgrade merged on the
 * watched branch of a repository served by `git daemon`, the loop fetching it over the git
 * protocol, the socket twin as the cluster (real TLS, the real Kubernetes and Talos adapters) with
 * its Flux delivering the merge (`POST /gitops/merge`). The loop binds and journals the plan,
 * observes the delivery tied to the merge commit, runs the after-merge rounds and commits the
 * execution report to the report branch. Nothing is written to the cluster.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { sha256Hex } from "../../src/domain/plan/digest.ts";
import { startReconcileWorld } from "../_helpers/reconcile_world.ts";
import { ROOT } from "../_helpers/twin_world.ts";

const POLICY = "policies/home-ops.yaml";
const PIN = "kubernetes/apps/rook-ceph/rook-ceph/app/ocirepository.yaml";
const pinText = (tag: string) =>
  "apiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\n" +
  `metadata: {name: rook-ceph, namespace: rook-ceph}\nspec: {ref: {tag: ${tag}}}\n`;
const PLAN = "rook-ceph-v1.21.0";
const PLAN_PATH = `plans/${PLAN}.yaml`;

Deno.test("reconcile (git daemon, socket twin): a merged ComponentUpgrade is observed to its merge commit and reported COMPLETED", async () => {
  const w = await startReconcileWorld();
  try {
    const base = await w.wt.commit({ [PIN]: pinText("v1.20.2") }, "Rook operator chart");
    await w.wt.push("main");
    await w.wt.checkout("renovate/rook-ceph", true);
    const head = await w.wt.commit({ [PIN]: pinText("v1.21.0") }, "Update rook-ceph to v1.21.0");
    const enc = new TextEncoder();
    const text = [
      "apiVersion: cairn.dev/v1alpha1",
      "kind: ComponentUpgrade",
      `metadata: {name: ${PLAN}, cluster: home-ops, author: alice@example.com, ` +
      "expires: 2026-12-20T00:00:00Z}",
      "spec:",
      `  healthPolicy: {path: ${POLICY}, sha256: ${await sha256Hex(
        await Deno.readFile(join(ROOT, POLICY)),
      )}}`,
      "  retry: {maxAttempts: 3}",
      "  component: rook-ceph",
      "  flux: {kind: HelmRelease, namespace: rook-ceph, name: rook-ceph}",
      "  from: v1.20.2",
      "  to: v1.21.0",
      `  change: {base: "${base}", head: "${head}", pins: [{path: ${PIN}, sha256: ${await sha256Hex(
        enc.encode(pinText("v1.21.0")),
      )}}]}`,
      "  delivery:",
      "    source: {kind: OCIRepository, namespace: rook-ceph, name: rook-ceph}",
      "    images:",
      "      - {namespace: rook-ceph, selector: app.kubernetes.io/part-of=ceph-csi, " +
      "container: csi-rbdplugin, image: quay.io/cephcsi/cephcsi:v3.18.1, renderedBy: the operator}",
      "  phases: {deadlines: {rollout: {transportSeconds: 60, verificationSeconds: 900}}}",
      "",
    ].join("\n");
    await w.wt.commit(
      { [PLAN_PATH]: text, [`${PLAN_PATH}.sig`]: await w.sign(text, ["alice", "bob"]) },
      `Plan ${PLAN}`,
    );
    await w.wt.checkout("main");
    const merge = await w.wt.merge("renovate/rook-ceph");
    await w.wt.push("main");
    await w.tc.control.gitopsMerge(merge, {
      "rook-ceph/rook-ceph": "v1.21.0",
      "rook-ceph/rook-ceph-cluster": "v1.21.0",
    });
    await w.tc.control.resetStats();

    await w.reconciler.cycle();
    await w.reconciler.settled();
    assertEquals(w.reconciler.finished().map((x) => [x.plan, x.end.state, x.outcome]), [
      [PLAN, "completed", "completed"],
    ]);
    const report = (await w.reportAt(`reports/${PLAN}/execution.md`))!;
    const verdict = report.split("\n").find((l) => l.startsWith("**Verdict:")) ?? "";
    assert(verdict.startsWith("**Verdict: COMPLETED:"), verdict);
    assert(report.includes(`main&#64;sha1:${merge}, which contains the merge`), report);
    assert(report.includes("| `csi-plugin-images` | pass |"), report);
    const digest = (await w.journal.nameBindings()).find((b) => b.name === PLAN)!.digest;
    const h = (await w.journal.planHistory(digest))!;
    assertEquals(h.plan.firstSeenCommit, merge);
    assertEquals(h.rolloutEvents?.filter((e) => e.kind === "component-end").length, 1);
    const stats = await w.tc.control.stats();
    assertEquals(
      [stats.talos.totalMutating, (stats.kube as { mutating: number }).mutating],
      [0, 0],
      "cairn observed; it changed nothing",
    );
  } finally {
    await w.stop();
  }
});
