import { readerLabel } from "../../safeguards/reader_rows.ts";
import type { Reason } from "../../reasons.ts";
import type { Binding } from "../policy_schema.ts";
import { selectorMatches } from "../selector.ts";
import type {
  BindingResult,
  Finding,
  KubeObjectLike,
  ObservationBasis,
  ReadInputs,
  ResourceSnapshot,
} from "../types.ts";

/** Findings beyond this many passing ones are summarised by the coverage count only. */
const MAX_PASSING_FINDINGS = 50;

export const NODE_KEY = "v1/Node";
export const POD_KEY = "v1/Pod";
export const PDB_KEY = "policy/v1/PodDisruptionBudget";

/** Why a snapshot cannot be used for this binding, or undefined when it is fresh enough. */
export function staleness(
  snap: ResourceSnapshot | undefined,
  key: string,
  freshnessSeconds: number,
  nowMs: number,
): { reason: Reason; message: string } | undefined {
  if (!snap || snap.freshness.state === "unsynced") {
    return { reason: "HealthCacheStale", message: `${key}: no synced watch cache` };
  }
  if (snap.freshness.state === "stale") {
    return {
      reason: "HealthCacheStale",
      message: `${key}: watch disconnected, cache not resynced`,
    };
  }
  const confirmed = snap.freshness.confirmedAtMs ?? snap.freshness.syncedAtMs ?? -Infinity;
  if (nowMs - confirmed > freshnessSeconds * 1000) {
    return {
      reason: "HealthObservationTooOld",
      message: `${key}: last confirmed ${Math.round((nowMs - confirmed) / 1000)}s ago`,
    };
  }
  return undefined;
}

/** The basis entry for one object read from a watch cache. */
export function objectBasis(
  kind: string,
  o: KubeObjectLike,
  snap: ResourceSnapshot,
  nowMs: number,
): ObservationBasis {
  const m = o.metadata ?? {};
  const og = (o["status"] as { observedGeneration?: unknown } | undefined)?.observedGeneration;
  return {
    kind,
    name: m.name ?? "",
    ...(m.namespace ? { namespace: m.namespace } : {}),
    ...(m.uid ? { uid: m.uid } : {}),
    ...(m.resourceVersion ? { resourceVersion: m.resourceVersion } : {}),
    ...(typeof m.generation === "number" ? { generation: m.generation } : {}),
    ...(typeof og === "number" ? { observedGeneration: og } : {}),
    observedAtMs: nowMs,
    source: "watch-cache",
    cache: snap.freshness,
  };
}

/** `namespace/name` or `name`. */
export function objectId(o: KubeObjectLike): string {
  const m = o.metadata ?? {};
  return m.namespace ? `${m.namespace}/${m.name ?? ""}` : (m.name ?? "");
}

/** The object's status as a plain object, or undefined when absent or not an object. */
export function statusOf(o: KubeObjectLike): Record<string, unknown> | undefined {
  const s = o["status"];
  return s !== null && typeof s === "object" && !Array.isArray(s)
    ? s as Record<string, unknown>
    : undefined;
}

/** True when status.observedGeneration is missing or older than metadata.generation. */
export function generationStale(o: KubeObjectLike, status: Record<string, unknown>): boolean {
  const gen = o.metadata?.generation;
  if (typeof gen !== "number") return false;
  const og = status["observedGeneration"];
  return typeof og !== "number" || og < gen;
}

/** Nodes chosen by a names / labelSelector selection (all nodes when both are absent). */
export function selectNodes(
  nodes: readonly KubeObjectLike[],
  sel: { names?: readonly string[] | undefined; labelSelector?: object | undefined },
): KubeObjectLike[] {
  return nodes.filter((n) =>
    (!sel.names || sel.names.includes(n.metadata?.name ?? "")) &&
    (!sel.labelSelector || selectorMatches(sel.labelSelector, n.metadata?.labels))
  );
}

/** A result in which the binding could not be evaluated at all. */
export function unreadableResult(
  b: Binding,
  reason: Reason,
  message: string,
  startedAtMs: number,
  nowMs: number,
): BindingResult {
  return {
    binding: b.name,
    reader: readerLabel(b),
    verdict: "unreadable",
    reason,
    message,
    coverage: { required: b.requiredCoverage, observed: 0 },
    findings: [],
    basis: [],
    startedAtMs,
    completedAtMs: nowMs,
  };
}

/**
 * Folds per-subject findings into the binding's result: any fail fails it, otherwise any
 * unreadable makes it unreadable, otherwise too few subjects fails it, otherwise it passes.
 */
export function finish(
  b: Binding,
  inputs: ReadInputs,
  startedAtMs: number,
  findings: readonly Finding[],
  basis: readonly ObservationBasis[],
  observed: number,
): BindingResult {
  const failed = findings.find((f) => f.verdict === "fail");
  const unread = findings.find((f) => f.verdict === "unreadable");
  const short = observed < b.requiredCoverage;
  const [verdict, reason, message] = failed
    ? ["fail", failed.reason, `${failed.subject}: ${failed.message}`] as const
    : unread
    ? ["unreadable", unread.reason, `${unread.subject}: ${unread.message}`] as const
    : short
    ? [
      "fail",
      "HealthSelectionEmpty",
      `selection yielded ${observed} subject(s), ${b.requiredCoverage} required`,
    ] as const
    : ["pass", "HealthCheckPassed", `${observed} subject(s) pass`] as const;
  const kept = findings.length <= MAX_PASSING_FINDINGS
    ? findings
    : findings.filter((f) => f.verdict !== "pass");
  return {
    binding: b.name,
    reader: readerLabel(b),
    verdict,
    reason,
    message,
    coverage: { required: b.requiredCoverage, observed },
    findings: kept,
    basis,
    startedAtMs,
    completedAtMs: inputs.nowMs,
  };
}

/** Memoises `build()` on a snapshot's memo map (recomputed only when the cache content changes). */
export function memo<T>(snap: ResourceSnapshot, key: string, build: () => T): T {
  if (!snap.memo) return build();
  if (snap.memo.has(key)) return snap.memo.get(key) as T;
  const v = build();
  snap.memo.set(key, v);
  return v;
}
