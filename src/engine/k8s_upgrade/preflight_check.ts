/**
 * The KubernetesUpgrade's own dispatch check (rows 23–25), run before the rollout and again
 * before each operation's commitment: the preflight's facts read through the read-only guard
 * (so the check itself is proven write-free, row 26), judged, and recorded on the journal's
 * hash-chained timeline as a `dispatch-check` whose detail carries each row's finding. Before a
 * commitment the step's own component is judged at the target version (the skew the step would
 * leave), and versions already moved by this plan are expected.
 */
import {
  judgePreflight,
  type PreflightJudgement,
  type RowFinding,
} from "../../domain/k8s_upgrade/preflight.ts";
import type { KubernetesUpgradePlan } from "../../domain/plan/schema.ts";
import type { Reason } from "../../domain/reasons.ts";
import type { Journal } from "../../ports/journal.ts";
import type { Kube } from "../../ports/kube.ts";
import type { Talos } from "../../ports/talos.ts";
import { controllerActor } from "../executor/observe.ts";
import { readOnlyGuard } from "../preview/read_only_guard.ts";
import { readPreflightEvidence } from "./read_evidence.ts";

/** The detail key under which a dispatch check carries the Kubernetes rows. */
export const KUBERNETES_CHECK = "kubernetes";

/** What the journal keeps of one Kubernetes preflight. */
export interface KubernetesCheckRecord {
  readonly verdict: "pass" | "refused" | "held";
  readonly uniformOs: RowFinding;
  readonly skew: RowFinding;
  readonly ownership: RowFinding;
  /** Mutating calls the guard refused during the check (none is ever sent). */
  readonly writes: number;
  /** The step it authorised (`null`: before the rollout). */
  readonly step: string | null;
}

/** A preflight's stop, as a node outcome's reason and detail. */
export interface PreflightStop {
  readonly reason: Reason;
  readonly detail: string;
  readonly refused: boolean;
}

/** Runs the check, records it, and says whether it stops the rollout. */
export async function checkKubernetes(o: {
  readonly journal: Journal;
  readonly owner: string;
  readonly digest: string;
  readonly plan: KubernetesUpgradePlan;
  readonly cluster: { readonly kube: Kube; readonly talos: Talos };
  readonly nowMs: () => number;
  readonly timeoutMs: number;
  /** Before a commitment: the node and component about to move, judged at the target. */
  readonly step?: {
    readonly key: string;
    readonly node: string;
    readonly component: string;
  };
}): Promise<{ judgement: PreflightJudgement; stop?: PreflightStop }> {
  const guard = readOnlyGuard(o.cluster);
  const e = await readPreflightEvidence(
    { kube: guard.kube, talos: guard.talos, journal: o.journal },
    { cluster: o.plan.metadata.cluster, nodes: o.plan.spec.nodes },
    o.timeoutMs,
  );
  const step = o.step;
  const projected = step
    ? {
      ...e,
      components: e.components.map((c) =>
        (c.node === step.node && c.component === step.component) ||
          // kube-proxy is one DaemonSet (`node: cluster`): its steps leave it at the target.
          (step.component === "kube-proxy" && c.component === "kube-proxy")
          ? { ...c, version: o.plan.spec.to }
          : c
      ),
      nodes: e.nodes.map((n) =>
        step.component === "kubelet" && n.name === step.node
          ? { ...n, kubeletVersion: o.plan.spec.to }
          : n
      ),
    }
    : e;
  // Components this plan's own operations already moved may run the target (a resumed rollout).
  const mine = (await o.journal.listOperations()).filter((x) => x.planDigest === o.digest);
  const moved = new Set(mine.flatMap((x) => {
    const [node, , component] = x.step.split("/");
    // A kube-proxy operation may have moved the cluster's one DaemonSet.
    return component === "kube-proxy"
      ? [`${component}@${node}`, "kube-proxy@cluster"]
      : [`${component}@${node}`];
  }));
  const judgement = judgePreflight(o.plan.spec, projected, {
    expectFrom: step === undefined,
    moved,
  });
  const writes = guard.refused().length;
  const record: KubernetesCheckRecord = {
    verdict: writes > 0 ? "refused" : judgement.verdict,
    uniformOs: judgement.uniformOs,
    skew: judgement.skew,
    ownership: judgement.ownership,
    writes,
    step: step?.key ?? null,
  };
  await o.journal.recordDispatchCheck({
    planDigest: o.digest,
    node: step?.node ?? null,
    verdict: record.verdict,
    detail: { [KUBERNETES_CHECK]: record },
    actor: controllerActor(o.owner),
    nowMs: o.nowMs(),
  });
  if (record.verdict === "pass") return { judgement };
  const problems = [judgement.uniformOs, judgement.skew, judgement.ownership]
    .flatMap((r) => r.problems);
  const first = problems[0] ?? {
    reason: "PreviewWriteRefused" as Reason,
    message: `the check attempted ${writes} write(s)`,
  };
  return {
    judgement,
    stop: {
      reason: first.reason,
      detail: problems.map((p) => p.message).join("; ") || first.message,
      refused: record.verdict === "refused",
    },
  };
}
