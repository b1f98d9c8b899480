import type { Binding } from "../policy_schema.ts";
import { selectorMatches } from "../selector.ts";
import type {
  BindingResult,
  Finding,
  KubeObjectLike,
  ObservationBasis,
  ReadInputs,
} from "../types.ts";
import {
  finish,
  generationStale,
  objectBasis,
  objectId,
  staleness,
  statusOf,
  unreadableResult,
} from "./common.ts";

type WorkloadsBinding = Extract<Binding, { reader: "workloads" }>;
type Kind = WorkloadsBinding["selection"]["kinds"][number];

/**
 * Deployments, StatefulSets and DaemonSets are fully rolled out and ready. A status written
 * for an older generation describes an older spec and fails; a missing status is unreadable.
 */
export function readWorkloads(
  b: WorkloadsBinding,
  inputs: ReadInputs,
  startedAtMs: number,
): BindingResult {
  const findings: Finding[] = [];
  const basis: ObservationBasis[] = [];
  let observed = 0;
  for (const kind of b.selection.kinds) {
    const key = `apps/v1/${kind}`;
    const snap = inputs.kube.resource(key);
    const stale = staleness(snap, key, b.freshnessSeconds, inputs.nowMs);
    if (stale || !snap) {
      return unreadableResult(b, stale!.reason, stale!.message, startedAtMs, inputs.nowMs);
    }
    for (const o of snap.items) {
      if (!selected(o, b.selection)) continue;
      observed++;
      findings.push(workloadFinding(kind, o));
      basis.push(objectBasis(kind, o, snap, inputs.nowMs));
    }
  }
  return finish(b, inputs, startedAtMs, findings, basis, observed);
}

function selected(o: KubeObjectLike, sel: WorkloadsBinding["selection"]): boolean {
  const ns = o.metadata?.namespace ?? "";
  if (sel.namespaces && !sel.namespaces.includes(ns)) return false;
  return !sel.labelSelector || selectorMatches(sel.labelSelector, o.metadata?.labels);
}

/** One workload's readiness. */
export function workloadFinding(kind: Kind, o: KubeObjectLike): Finding {
  const subject = `${kind} ${objectId(o)}`;
  const status = statusOf(o);
  if (!status) {
    return { subject, verdict: "unreadable", reason: "HealthStatusMissing", message: "no status" };
  }
  if (generationStale(o, status)) {
    return {
      subject,
      verdict: "fail",
      reason: "HealthGenerationStale",
      message: `status.observedGeneration ${String(status["observedGeneration"])} < generation ${
        String(o.metadata?.generation)
      }`,
    };
  }
  const gap = kind === "DaemonSet" ? daemonSetGap(status) : replicaGap(kind, o, status);
  return gap
    ? { subject, verdict: "fail", reason: "WorkloadNotReady", message: gap }
    : { subject, verdict: "pass", reason: "HealthCheckPassed", message: "ready" };
}

function num(v: unknown): number {
  return typeof v === "number" ? v : 0;
}

function replicaGap(kind: Kind, o: KubeObjectLike, s: Record<string, unknown>): string | undefined {
  const specReplicas = (o["spec"] as { replicas?: unknown } | undefined)?.replicas;
  const want = typeof specReplicas === "number" ? specReplicas : 1;
  for (const f of ["replicas", "updatedReplicas", "readyReplicas", "availableReplicas"]) {
    if (num(s[f]) !== want) return `status.${f} ${num(s[f])}, want ${want}`;
  }
  if (
    kind === "StatefulSet" && s["updateRevision"] && s["currentRevision"] !== s["updateRevision"]
  ) {
    return "currentRevision differs from updateRevision (rollout in progress)";
  }
  return undefined;
}

function daemonSetGap(s: Record<string, unknown>): string | undefined {
  const want = num(s["desiredNumberScheduled"]);
  for (
    const f of [
      "currentNumberScheduled",
      "updatedNumberScheduled",
      "numberReady",
      "numberAvailable",
    ]
  ) {
    if (num(s[f]) !== want) return `status.${f} ${num(s[f])}, want ${want}`;
  }
  if (num(s["numberMisscheduled"]) > 0) return `${num(s["numberMisscheduled"])} misscheduled`;
  return undefined;
}
