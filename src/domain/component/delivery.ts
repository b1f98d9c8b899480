/**
 * Did a merged component bump land? Judged from what the cluster says, never from what was
 * merged: the Flux source reached the target (`<to>@sha256:…` at its current generation, Ready),
 * the release was upgraded to it (HelmRelease `history[0]` deployed at the target chart version,
 * Ready at the current generation), the Kustomization that applies it from Git applied the merge
 * (its `lastAppliedRevision` is the merge commit or a later commit containing it, Ready at its
 * current generation: one Ready at an older revision never counts), and every operator-rendered
 * workload the plan names runs the image it must (a chart bump the operator does not re-render
 * rolls nothing: the running image is the evidence). Pure: the engine reads, this decides.
 */
import type { ComponentUpgradePlan } from "../plan/schema.ts";
import type { Reason } from "../reasons.ts";

type Spec = ComponentUpgradePlan["spec"];
export type ImageExpectation = NonNullable<Spec["delivery"]>["images"][number];

/** A Flux object as read (source or release). */
export interface FluxObjectReading {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  /** False when the object does not exist (a 404). */
  readonly found: boolean;
  readonly generation?: number;
  readonly observedGeneration?: number;
  /** The Ready condition's status, reason and message. */
  readonly ready?: { readonly status: string; readonly reason?: string; readonly message?: string };
  /** Source: `status.artifact.revision`. */
  readonly revision?: string;
  /** HelmRelease: `status.history[0]` chart version and status. */
  readonly chartVersion?: string;
  readonly releaseStatus?: string;
  /** HelmRelease `lastAttemptedRevision` / Kustomization `lastAppliedRevision`. */
  readonly lastRevision?: string;
  /**
   * Kustomization `lastAppliedRevision` alone: what was applied (an attempted revision that did
   * not apply is never a delivery).
   */
  readonly appliedRevision?: string;
  /**
   * The Kustomization that applied this object, from the labels kustomize-controller sets on
   * everything it applies (`kustomize.toolkit.fluxcd.io/name` and `/namespace`).
   */
  readonly appliedBy?: { readonly namespace: string; readonly name: string };
  /**
   * Whether the commit of this object's Git revision contains the merge commit (git's answer),
   * undefined when it was not asked (the revision is the merge itself, names no commit) or git
   * does not know that commit (not fetched yet).
   */
  readonly containsMerge?: boolean;
}

/** The commit a Flux Git revision names (`main@sha1:<40 hex>`, `sha1:<hex>`, `main/<hex>`). */
export function revisionCommit(revision: string | undefined): string | undefined {
  return /(?:^|[@:/])([0-9a-f]{40})$/.exec(revision ?? "")?.[1];
}

/** One pod selected by an image expectation, with the image its container runs. */
export interface PodImageReading {
  readonly name: string;
  /** `containerStatuses[].image` of the expected container (what runs), else undefined. */
  readonly running: string | undefined;
  readonly ready: boolean;
}

/** Everything one observation pass read. Any read that failed makes the pass unreadable. */
export interface DeliveryReading {
  readonly atMs: number;
  /**
   * The merge commit of the reviewed branch into the watched branch (the commit that introduced
   * the plan there); undefined when it is not known.
   */
  readonly merge?: string;
  readonly source?: FluxObjectReading;
  readonly release?: FluxObjectReading;
  /**
   * The Kustomization that applies the release from Git (the release itself when it is one);
   * `appliedUnknown` says why none was read.
   */
  readonly applied?: FluxObjectReading;
  readonly appliedUnknown?: string;
  readonly images: readonly {
    readonly want: ImageExpectation;
    readonly pods: readonly PodImageReading[];
  }[];
  readonly unreadable?: { readonly reason: Reason; readonly message: string };
}

export type CheckVerdict = "pass" | "fail" | "pending" | "unreadable";

/** One judged part of the delivery. */
export interface DeliveryCheck {
  readonly id: "source" | "release" | "applied" | `images:${number}`;
  readonly verdict: CheckVerdict;
  readonly detail: string;
}

const bare = (v: string) => v.replace(/^v/, "");

/** The source's artifact is the target, fetched for its current generation and Ready. */
export function judgeSource(
  plan: ComponentUpgradePlan,
  r: FluxObjectReading | undefined,
  merge?: string,
): DeliveryCheck {
  const id = "source" as const;
  if (!r) return { id, verdict: "unreadable", detail: "the source was not read" };
  const what = `${r.kind} ${r.namespace}/${r.name}`;
  if (!r.found) return { id, verdict: "fail", detail: `${what} does not exist` };
  const stale = current(r);
  if (stale) return { id, verdict: "pending", detail: `${what}: ${stale}` };
  if (r.ready?.status !== "True") {
    return {
      id,
      verdict: "pending",
      detail: `${what} not Ready (${r.ready?.reason ?? "no condition"})`,
    };
  }
  if (r.kind === "GitRepository" && plan.spec.change) {
    const tie = tiedToMerge(`${what} serves`, r.revision, r.containsMerge, merge);
    if (tie) return { id, ...tie };
  }
  if (r.kind === "OCIRepository") {
    const tag = (r.revision ?? "").split("@")[0] ?? "";
    if (bare(tag) !== bare(plan.spec.to)) {
      return {
        id,
        verdict: "pending",
        detail: `${what} serves ${r.revision ?? "no artifact"}, not ${plan.spec.to}`,
      };
    }
  }
  return {
    id,
    verdict: "pass",
    detail: `${what} serves ${r.revision ?? "?"} (generation ${r.generation ?? "?"}, Ready)`,
  };
}

/** The release was upgraded to the target and is Ready at its current generation. */
export function judgeRelease(
  plan: ComponentUpgradePlan,
  r: FluxObjectReading | undefined,
): DeliveryCheck {
  const id = "release" as const;
  if (!r) return { id, verdict: "unreadable", detail: "the release was not read" };
  const what = `${r.kind} ${r.namespace}/${r.name}`;
  if (!r.found) return { id, verdict: "fail", detail: `${what} does not exist` };
  const stale = current(r);
  if (stale) return { id, verdict: "pending", detail: `${what}: ${stale}` };
  if (r.ready?.status !== "True") {
    const failed = r.ready?.status === "False";
    return {
      id,
      // A release whose last attempt failed stays pending until the deadline: Flux retries.
      verdict: "pending",
      detail: `${what} not Ready${
        failed ? ` (${r.ready?.reason ?? ""}: ${r.ready?.message ?? ""})` : ""
      }`,
    };
  }
  if (r.kind === "HelmRelease") {
    if (r.chartVersion === undefined || bare(r.chartVersion) !== bare(plan.spec.to)) {
      return {
        id,
        verdict: "pending",
        detail: `${what} runs chart ${r.chartVersion ?? "unknown"}, not ${bare(plan.spec.to)}`,
      };
    }
    if (r.releaseStatus !== "deployed") {
      return {
        id,
        verdict: "pending",
        detail: `${what} chart ${r.chartVersion} is ${r.releaseStatus ?? "?"}`,
      };
    }
    return {
      id,
      verdict: "pass",
      detail: `${what} deployed chart ${r.chartVersion}, Ready at generation ${
        r.generation ?? "?"
      }`,
    };
  }
  // A Kustomization's applied revision is a Git commit or an OCI artifact (`<tag>@sha256:…`). With
  // a reviewed branch the merge ties it (`judgeApplied`). Without one, only an OCI tag at the
  // target does; a commit proves nothing either way (Ready at its generation is also the state
  // before the bump), so it is never a pass.
  if (!plan.spec.change) {
    const applied = r.appliedRevision;
    const tag = applied?.includes("@") ? applied.split("@")[0]! : undefined;
    if (tag === undefined || revisionCommit(applied) !== undefined || /^sha1:/.test(tag)) {
      return {
        id,
        verdict: "unreadable",
        detail: `${what} applied ${applied ?? "no revision"}: without a reviewed branch ` +
          `(spec.change) nothing ties that revision to ${plan.spec.to}`,
      };
    }
    if (bare(tag) !== bare(plan.spec.to)) {
      return { id, verdict: "pending", detail: `${what} applied ${applied}, not ${plan.spec.to}` };
    }
  }
  return {
    id,
    verdict: "pass",
    detail: `${what} applied ${r.lastRevision ?? "?"}, Ready at generation ${r.generation ?? "?"}`,
  };
}

/**
 * The Kustomization that applies the release from Git applied the merge: its
 * `lastAppliedRevision` names the merge commit, or a later commit git says contains it, and it
 * is Ready at its current generation. A Kustomization Ready at an older revision is the state
 * before the merge arrived, never a delivery. Judged only for a plan that binds a reviewed branch
 * (`spec.change`): without one there is no merge to tie to.
 */
export function judgeApplied(
  plan: ComponentUpgradePlan,
  reading: DeliveryReading,
): DeliveryCheck | undefined {
  if (!plan.spec.change) return undefined;
  const id = "applied" as const;
  const r = reading.applied;
  if (!reading.merge) {
    return {
      id,
      verdict: "pending",
      detail: "the merge commit of the reviewed branch is not known: nothing ties what Flux " +
        "applied to the merge",
    };
  }
  if (!r) {
    return {
      id,
      verdict: "fail",
      detail: reading.appliedUnknown ?? "no Kustomization is known to apply the release",
    };
  }
  const what = `${r.kind} ${r.namespace}/${r.name}`;
  if (!r.found) return { id, verdict: "fail", detail: `${what} does not exist` };
  const stale = current(r);
  if (stale) return { id, verdict: "pending", detail: `${what}: ${stale}` };
  if (r.ready?.status !== "True") {
    return {
      id,
      verdict: "pending",
      detail: `${what} not Ready (${r.ready?.reason ?? "no condition"})`,
    };
  }
  const tie = tiedToMerge(`${what} applied`, r.appliedRevision, r.containsMerge, reading.merge);
  if (tie) return { id, ...tie };
  return {
    id,
    verdict: "pass",
    detail: `${what} applied ${r.appliedRevision}, which contains the merge ${
      reading.merge.slice(0, 12)
    }, Ready at generation ${r.generation ?? "?"}`,
  };
}

/**
 * A Git revision held to the merge: undefined when it is the merge or contains it, else why not
 * (pending: Flux may still get there by the deadline).
 */
function tiedToMerge(
  what: string,
  revision: string | undefined,
  contains: boolean | undefined,
  merge: string | undefined,
): { verdict: CheckVerdict; detail: string } | undefined {
  if (!merge) {
    return {
      verdict: "pending",
      detail: `${what} ${revision ?? "no revision"}; the merge commit is not known`,
    };
  }
  const commit = revisionCommit(revision);
  if (commit === merge || (commit !== undefined && contains === true)) return undefined;
  const short = merge.slice(0, 12);
  return {
    verdict: "pending",
    detail: commit === undefined
      ? `${what} ${revision ?? "no revision"}, which names no commit (merge ${short})`
      : contains === false
      ? `${what} ${revision}, an older revision without the merge ${short}`
      : `${what} ${revision}, not known to contain the merge ${short}`,
  };
}

/** Every selected pod runs the expected image; none selected is never a pass. */
export function judgeImages(
  k: number,
  entry: DeliveryReading["images"][number],
): DeliveryCheck {
  const id = `images:${k}` as const;
  const { want, pods } = entry;
  const where = `${want.namespace} ${want.selector} (${want.container})`;
  if (pods.length === 0) return { id, verdict: "fail", detail: `no pod matches ${where}` };
  const stale = pods.filter((p) => p.running !== want.image);
  if (stale.length === 0) {
    const unready = pods.filter((p) => !p.ready);
    if (unready.length) {
      return {
        id,
        verdict: "pending",
        detail: `${unready.length} of ${pods.length} pods of ${where} not Ready on ${want.image}`,
      };
    }
    return {
      id,
      verdict: "pass",
      detail: `${pods.length} of ${pods.length} pods of ${where} run ${want.image}`,
    };
  }
  const running = [...new Set(stale.map((p) => p.running ?? "no running container"))];
  return {
    id,
    verdict: "pending",
    detail: `${stale.length} of ${pods.length} pods of ${where} still run ${running.join(", ")} ` +
      `(want ${want.image}; first: ${stale[0]!.name})`,
  };
}

/** All parts of one reading. */
export function judgeDelivery(plan: ComponentUpgradePlan, r: DeliveryReading): DeliveryCheck[] {
  if (r.unreadable) {
    return [{
      id: "source",
      verdict: "unreadable",
      detail: `${r.unreadable.reason}: ${r.unreadable.message}`,
    }];
  }
  const applied = judgeApplied(plan, r);
  return [
    // A plan naming no source (`spec.delivery` is optional) is judged on its release alone.
    ...(plan.spec.delivery ? [judgeSource(plan, r.source, r.merge)] : []),
    judgeRelease(plan, r.release),
    ...(applied ? [applied] : []),
    ...r.images.map((e, k) => judgeImages(k, e)),
  ];
}

/**
 * How the delivery stands when the observation ends (at the deadline or when everything passed):
 * `landed` every part passed; `not-landed` Flux delivered the target but an operator-rendered
 * workload still runs another image; `not-delivered` Flux did not reach the target; `unreadable`
 * the last reading could not be made.
 */
export type DeliveryState = "landed" | "not-landed" | "not-delivered" | "unreadable";

export function deliveryState(checks: readonly DeliveryCheck[]): DeliveryState {
  if (checks.some((c) => c.verdict === "unreadable")) return "unreadable";
  const flux = checks.filter((c) => c.id === "source" || c.id === "release" || c.id === "applied");
  if (flux.some((c) => c.verdict !== "pass")) return "not-delivered";
  return checks.every((c) => c.verdict === "pass") ? "landed" : "not-landed";
}

/** Generation not yet observed by the controller (a status describing an older spec). */
function current(r: FluxObjectReading): string | undefined {
  if (r.generation === undefined) return undefined;
  if (r.observedGeneration === undefined || r.observedGeneration < r.generation) {
    return `status for generation ${r.observedGeneration ?? "none"}, object at ${r.generation}`;
  }
  return undefined;
}
