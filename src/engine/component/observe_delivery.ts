/**
 * Watches a merged component bump arrive (a playbook's "after merge"): reads the plan's Flux source
 * and release and the pods of every operator-rendered workload it names, each pass bounded by the
 * time left, until every part passed or the deadline. Reads only; cairn changes nothing here. A
 * change of any part's judgement is kept as an observation for the report.
 */
import {
  type DeliveryReading,
  deliveryState,
  type FluxObjectReading,
  judgeDelivery,
  type PodImageReading,
  revisionCommit,
} from "../../domain/component/delivery.ts";
import type { DeliveryObservation, DeliveryOutcome } from "../../domain/component/outcome.ts";
import { CairnError } from "../../domain/errors.ts";
import type { ComponentUpgradePlan } from "../../domain/plan/schema.ts";
import type { Clock } from "../../ports/clock.ts";
import type { CommitHistory } from "../../ports/commit_history.ts";
import type { Kube, KubeObject, KubeResourceRef } from "../../ports/kube.ts";

type R = Record<string, unknown>;
const rec = (v: unknown): R => (v !== null && typeof v === "object" ? v as R : {});
const num = (v: unknown) => (typeof v === "number" ? v : undefined);
const str = (v: unknown) => (typeof v === "string" ? v : undefined);

const REFS: Readonly<Record<string, KubeResourceRef>> = {
  OCIRepository: {
    group: "source.toolkit.fluxcd.io",
    version: "v1",
    plural: "ocirepositories",
    namespaced: true,
  },
  GitRepository: {
    group: "source.toolkit.fluxcd.io",
    version: "v1",
    plural: "gitrepositories",
    namespaced: true,
  },
  HelmRelease: {
    group: "helm.toolkit.fluxcd.io",
    version: "v2",
    plural: "helmreleases",
    namespaced: true,
  },
  Kustomization: {
    group: "kustomize.toolkit.fluxcd.io",
    version: "v1",
    plural: "kustomizations",
    namespaced: true,
  },
};
/** Time kept for the last pass's reads before the deadline. */
const READ_RESERVE_MS = 5_000;

const PODS: KubeResourceRef = { group: "", version: "v1", plural: "pods", namespaced: true };

export interface ObserveDeps {
  readonly kube: Pick<Kube, "getObject" | "listObjects">;
  /** Moves time when sleeping between passes (the twin's clock under tests and the demo). */
  readonly clock: Clock;
  /** Bound of one read given the time left. */
  readonly callTimeoutMs: (remainingMs: number) => number;
  readonly pollIntervalMs: number;
  readonly signal?: AbortSignal;
  /**
   * The merge commit of the reviewed branch into the watched branch, and the history that says
   * whether a later revision contains it (absent: only the merge itself counts).
   */
  readonly merged?: { readonly commit: string; readonly history?: CommitHistory };
}

export type { DeliveryObservation, DeliveryOutcome } from "../../domain/component/outcome.ts";

/** Observes until every part passes or `deadlineMs`; never decides a part from an old read. */
export async function observeDelivery(
  plan: ComponentUpgradePlan,
  deps: ObserveDeps,
  deadlineMs: number,
): Promise<DeliveryOutcome> {
  const startedAtMs = deps.clock.now();
  const observations: DeliveryObservation[] = [];
  const seen = new Map<string, string>();
  let passes = 0;
  for (;;) {
    const reading = await readDelivery(plan, deps, deadlineMs);
    passes++;
    const checks = judgeDelivery(plan, reading);
    for (const c of checks) {
      const key = `${c.verdict}|${c.detail}`;
      if (seen.get(c.id) !== key) {
        seen.set(c.id, key);
        observations.push({ atMs: reading.atMs, check: c });
      }
    }
    const state = deliveryState(checks);
    const now = deps.clock.now();
    // Every pass starts with time left to read: a pass at the deadline would have none, and its
    // timed-out reads would make the end unreadable rather than what the last reads showed.
    const remaining = deadlineMs - now;
    const reserve = Math.min(READ_RESERVE_MS, deps.pollIntervalMs);
    if (state === "landed" || remaining <= reserve || deps.signal?.aborted) {
      return {
        state,
        checks,
        observations,
        passes,
        startedAtMs,
        endedAtMs: now,
        ...(state === "landed" ? { landedAtMs: reading.atMs } : {}),
        last: reading,
      };
    }
    await deps.clock.sleep(Math.min(deps.pollIntervalMs, remaining - reserve), deps.signal);
  }
}

/** One pass: the source, the release and every image expectation's pods. */
export async function readDelivery(
  plan: ComponentUpgradePlan,
  deps: ObserveDeps,
  deadlineMs: number,
): Promise<DeliveryReading> {
  const atMs = deps.clock.now();
  const timeoutMs = deps.callTimeoutMs(Math.max(0, deadlineMs - atMs));
  const spec = plan.spec;
  try {
    const merge = deps.merged?.commit;
    const source = spec.delivery
      ? await tied(deps, await readFlux(deps, spec.delivery.source, timeoutMs), "revision")
      : undefined;
    const release = await readFlux(deps, spec.flux, timeoutMs);
    // The Kustomization that applies the release from Git: the release itself when it is one,
    // else the one kustomize-controller's labels on the release name.
    const by = spec.flux.kind === "Kustomization"
      ? undefined
      : release.appliedBy && { kind: "Kustomization", ...release.appliedBy };
    const applied = spec.flux.kind === "Kustomization"
      ? release
      : by
      ? await readFlux(deps, by, timeoutMs)
      : undefined;
    const appliedTied = spec.change && applied
      ? await tied(deps, applied, "appliedRevision")
      : applied;
    const images = [];
    for (const want of spec.delivery?.images ?? []) {
      const list = await deps.kube.listObjects(PODS, {
        namespace: want.namespace,
        labelSelector: want.selector,
        timeoutMs,
      });
      images.push({ want, pods: list.items.map((p) => podImage(p, want.container)) });
    }
    return {
      atMs,
      ...(merge ? { merge } : {}),
      ...(source ? { source } : {}),
      release,
      ...(appliedTied ? { applied: appliedTied } : {}),
      ...(!applied && release.found
        ? {
          appliedUnknown: `${release.kind} ${release.namespace}/${release.name} carries no ` +
            "kustomize.toolkit.fluxcd.io/name label: no Kustomization is known to have applied it",
        }
        : {}),
      images,
    };
  } catch (e) {
    const reason = e instanceof CairnError ? e.reason : "HealthReadFailed";
    return {
      atMs,
      images: [],
      unreadable: { reason, message: e instanceof Error ? e.message : String(e) },
    };
  }
}

/**
 * The reading with git's answer to whether its revision's commit contains the merge (asked only
 * when it is another commit; a revision git does not know yet stays unanswered).
 */
async function tied(
  deps: ObserveDeps,
  r: FluxObjectReading,
  field: "revision" | "appliedRevision",
): Promise<FluxObjectReading> {
  const merge = deps.merged?.commit;
  const commit = revisionCommit(r[field]);
  if (!merge || !commit || commit === merge || !deps.merged?.history) return r;
  const contains = await deps.merged.history.contains(commit, merge);
  return contains === undefined ? r : { ...r, containsMerge: contains };
}

async function readFlux(
  deps: ObserveDeps,
  ref: { kind: string; namespace: string; name: string },
  timeoutMs: number,
): Promise<FluxObjectReading> {
  const o = await deps.kube.getObject(REFS[ref.kind]!, ref.name, ref.namespace, { timeoutMs });
  const base = { kind: ref.kind, namespace: ref.namespace, name: ref.name };
  if (!o) return { ...base, found: false };
  return { ...base, found: true, ...fluxStatus(o) };
}

function fluxStatus(
  o: KubeObject,
): Omit<FluxObjectReading, "kind" | "namespace" | "name" | "found"> {
  const s = rec(o["status"]);
  const conditions = Array.isArray(s.conditions) ? s.conditions.map(rec) : [];
  const ready = conditions.find((c) => c.type === "Ready");
  const history = Array.isArray(s.history) ? s.history.map(rec) : [];
  const generation = o.metadata?.generation;
  const observed = num(s.observedGeneration);
  const revision = str(rec(s.artifact).revision);
  const chartVersion = str(history[0]?.chartVersion);
  const releaseStatus = str(history[0]?.status);
  const appliedRevision = str(s.lastAppliedRevision);
  const lastRevision = appliedRevision ?? str(s.lastAttemptedRevision);
  const labels = rec(o.metadata?.labels);
  const byName = str(labels["kustomize.toolkit.fluxcd.io/name"]);
  const byNamespace = str(labels["kustomize.toolkit.fluxcd.io/namespace"]);
  return {
    ...(generation !== undefined ? { generation } : {}),
    ...(observed !== undefined ? { observedGeneration: observed } : {}),
    ...(ready
      ? {
        ready: {
          status: String(ready.status),
          ...(str(ready.reason) ? { reason: str(ready.reason)! } : {}),
          ...(str(ready.message) ? { message: str(ready.message)! } : {}),
        },
      }
      : {}),
    ...(revision ? { revision } : {}),
    ...(chartVersion ? { chartVersion } : {}),
    ...(releaseStatus ? { releaseStatus } : {}),
    ...(lastRevision ? { lastRevision } : {}),
    ...(appliedRevision ? { appliedRevision } : {}),
    ...(byName && byNamespace ? { appliedBy: { namespace: byNamespace, name: byName } } : {}),
  };
}

/** What the named container runs, as the kubelet reports it (not what the spec asks for). */
function podImage(p: KubeObject, container: string): PodImageReading {
  const status = rec(p["status"]);
  const statuses = Array.isArray(status.containerStatuses) ? status.containerStatuses.map(rec) : [];
  const c = statuses.find((x) => x.name === container);
  const running = c && rec(c.state).running !== undefined ? str(c.image) : undefined;
  const conditions = Array.isArray(status.conditions) ? status.conditions.map(rec) : [];
  const deleting = rec(p.metadata).deletionTimestamp !== undefined;
  return {
    name: p.metadata?.name ?? "",
    running,
    ready: !deleting && conditions.some((x) => x.type === "Ready" && x.status === "True"),
  };
}
