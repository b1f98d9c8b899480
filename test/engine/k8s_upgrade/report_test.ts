/**
 * The execution report of a KubernetesUpgrade rehearsal (issue 14 must-show): rows 23–26 are
 * evaluated from the journal's records (never "not applicable"), the rows about OS images and
 * installers are not applicable saying why, and the verdict follows the rows: COMPLETED on the
 * clean run, SAFEGUARD-led when a GitOps field manager appeared mid-run.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { rehearsalReport } from "../../../src/app/rehearsal_report.ts";
import { k8sPlan, k8sRollout } from "../../_helpers/k8s_world.ts";
import type { Fault } from "../../../src/sim/faults.ts";

async function report(faults: Fault[] = []) {
  const w = await k8sRollout({ faults });
  try {
    const out = await w.run();
    const { parsed } = await k8sPlan();
    const md = await rehearsalReport({
      journal: w.journal,
      parsed,
      planPath: "plans/kubernetes-v1.36.0-talos-v1.13.9.yaml",
      requiredApprovals: 1,
      outcome: out,
      generatedAt: w.twin.clock.now(),
    });
    return { out, md };
  } finally {
    await w.close();
  }
}

function row(md: string, n: number): string {
  return md.split("\n").find((l) => l.startsWith(`| ${n} |`)) ?? "";
}

Deno.test("the report of a completed Kubernetes minor evaluates rows 23–26 and says COMPLETED", async () => {
  const { out, md } = await report();
  assertEquals(out.state, "completed");
  assert(md.includes("**Verdict: COMPLETED:"), md.slice(0, 400));
  for (const n of [23, 24, 25, 26]) assert(row(md, n).includes("| pass |"), row(md, n));
  assert(row(md, 23).includes("all 7 nodes run Talos v1.13.9"));
  assert(row(md, 24).includes("3 apiservers, 7 kubelets"));
  assert(row(md, 25).includes("Deployment kube-system/coredns"));
  assert(row(md, 26).includes("counted 0 mutating calls"));
  for (const n of [2, 3, 10]) assert(row(md, n).includes("| not applicable |"), row(md, n));
});

Deno.test("a GitOps manager appearing mid-run fails row 25 and the verdict names it", async () => {
  const { out, md } = await report([
    { kind: "gitops-field-manager", point: "kube.bootstrap", target: "coredns" },
  ]);
  assertEquals(out.state, "refused");
  assert(row(md, 25).includes("**FAIL**"), row(md, 25));
  assert(row(md, 25).includes("kustomize-controller"), row(md, 25));
  assert(!md.includes("**Verdict: COMPLETED"), md.slice(0, 400));
  assert(/\*\*Verdict: [^*]*row[^*]*25/.test(md), md.slice(0, 600));
});

Deno.test("a kube-proxy pod that never becomes ready: the verdict is FAILED, from the operation that moved the DaemonSet (cp-3's fourth)", async () => {
  const { out, md } = await report([
    { kind: "daemon-pod-not-ready", point: "kube.daemonPod", target: "worker-2" },
  ]);
  assertEquals(out.state, "halted");
  // cp-3's earlier operations completed; its kube-proxy operation failed, and that decides.
  assert(md.includes("**Verdict: FAILED:"), md.slice(0, 400));
  assert(md.includes("not ready: kube-proxy-"), md.slice(0, 1200));
});
