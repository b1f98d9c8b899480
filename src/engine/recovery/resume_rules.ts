/**
 * The recovery rules of a resume after a takeover (docs/recovery.md#resume-after-a-takeover), pure:
 * which earlier requests a fresh reading can classify, what it classifies them as, and how far
 * the step got. Absence of evidence classifies nothing: every rule here answers `undecided`
 * unless the reading itself establishes the outcome.
 */
import { isOperatorStop, type Phase } from "../../domain/operation.ts";
import type { AttemptReading, AttemptRecord, OperationDetail } from "../../ports/journal.ts";
import type { KubeObject, KubePod } from "../../ports/kube.ts";
import { CAIRN_FIELD_MANAGER, type CordonFact, unschedulableOwners } from "../cordon_ownership.ts";
import { podKey } from "../drain_run.ts";

/** A reading's verdict on one earlier request: classified, or left for recovery with why. */
export type ReadingVerdict =
  | { readonly kind: "read"; readonly reading: AttemptReading }
  | { readonly kind: "undecided"; readonly why: string };

function undecided(why: string): ReadingVerdict {
  return { kind: "undecided", why };
}

/**
 * An earlier owner's cordon patch, sent with the node's resourceVersion as its precondition:
 * - the node still at that resourceVersion: the patch may still land, undecided;
 * - moved past it, schedulable: the patch can no longer land, `observed-absent`;
 * - moved past it, unschedulable with cairn's field manager the only owner of the field (and no
 *   Talos cordon mark): `observed-in-effect`;
 * - anything else (another owner, no owner): undecided.
 */
export function readCordon(
  attemptId: string,
  requestResourceVersion: string | undefined,
  node: KubeObject | undefined,
): ReadingVerdict {
  if (requestResourceVersion === undefined) {
    return undecided("the cordon's intent names no resourceVersion precondition");
  }
  if (!node) return undecided("the node is not in the cluster");
  const rv = node.metadata?.resourceVersion;
  if (rv === undefined) return undecided("the node has no resourceVersion");
  if (rv === requestResourceVersion) {
    return undecided(`the node is still at resourceVersion ${rv}: the cordon may still land`);
  }
  const unschedulable = (node["spec"] as { unschedulable?: unknown } | undefined)?.unschedulable ===
    true;
  const owners = unschedulableOwners(node);
  const evidence = { requestResourceVersion, resourceVersion: rv, unschedulable, owners };
  if (!unschedulable) {
    return { kind: "read", reading: { attemptId, outcome: "observed-absent", evidence } };
  }
  const talosMark = node.metadata?.annotations?.["talos.dev/cordoned"] === "true";
  if (talosMark || owners.length === 0 || owners.some((o) => o !== CAIRN_FIELD_MANAGER)) {
    return undecided(
      `spec.unschedulable is owned by ${owners.join(", ") || "nobody"}${
        talosMark ? " (Talos cordon mark)" : ""
      }`,
    );
  }
  return { kind: "read", reading: { attemptId, outcome: "observed-in-effect", evidence } };
}

/**
 * An earlier owner's drain (Eviction requests for the pods it planned): the planned pods still on
 * the node make it `observed-incomplete` (the drain runs again), none of them `observed-in-effect`.
 * A terminating pod is still on the node.
 */
export function readDrain(
  attemptId: string,
  planned: readonly string[] | undefined,
  podsOnNode: readonly KubePod[],
): ReadingVerdict {
  if (planned === undefined) return undecided("the drain's intent names no planned pods");
  const present = new Set(podsOnNode.map(podKey));
  const remaining = planned.filter((p) => present.has(p));
  const evidence = { planned: planned.length, remaining };
  return {
    kind: "read",
    reading: {
      attemptId,
      outcome: remaining.length === 0 ? "observed-in-effect" : "observed-incomplete",
      evidence,
    },
  };
}

/**
 * How the operation last became `unresolved`, from its timeline: a takeover of work in flight; the
 * controller's own stop (`StoppedByOperator`: the operator stopped the run mid-step, which
 * classifies nothing and leaves the step where a takeover would find it); the executor's own halt
 * (classified, never resumed); or a person's decision.
 */
export function unresolvedBy(
  events: OperationDetail["events"],
): "takeover" | "stopped" | "halt" | "human" | "none" {
  let last: "takeover" | "stopped" | "halt" | "human" | "none" = "none";
  for (const e of events) {
    if (e.kind !== "transition" && e.kind !== "ownership") continue;
    const body = JSON.parse(e.body) as Record<string, unknown>;
    if (e.kind === "transition") {
      if (body["to"] === "unresolved") {
        last = isOperatorStop(body["reason"]) ? "stopped" : "halt";
      }
      continue;
    }
    if (!e.actor.endsWith(" (controller)")) last = "human";
    else if (
      last !== "human" && body["stateAfter"] === "unresolved" &&
      body["stateBefore"] !== "unresolved"
    ) last = "takeover";
  }
  return last;
}

/**
 * The request an attempt's phase intent recorded: the latest intent of its phase recorded at or
 * before the attempt (an intent whose attempt was never admitted comes earlier and is passed over;
 * a drain's per-eviction intents carry an `evict` key and are not the drain's request).
 */
export function intentOf(
  detail: OperationDetail,
  attempt: AttemptRecord,
): Record<string, unknown> | undefined {
  let found: Record<string, unknown> | undefined;
  for (const p of detail.phases) {
    if (p.phase !== attempt.phase || p.kind !== "intent" || p.atMs > attempt.sentAtMs) continue;
    const d = JSON.parse(p.detail) as Record<string, unknown>;
    if (!("evict" in d)) found = d;
  }
  return found;
}

/**
 * How far a step got, from the journal: the mutation phases done (accepted, or read in effect),
 * the cordon's provenance, the boot ids each reboot was sent with, the boots observed and whether
 * the uncordon decided. The executor skips what is done and never sends it again.
 */
export class ResumeCursor {
  readonly #done = new Map<Phase, number>();
  readonly cordon: CordonFact | undefined;
  readonly rebootBootIds: readonly string[];
  readonly uncordonDecided: boolean;

  constructor(detail: OperationDetail) {
    const add = (p: Phase) => this.#done.set(p, (this.#done.get(p) ?? 0) + 1);
    for (const a of detail.attempts) {
      if (a.responseClass === "accepted" || a.responseClass === "observed-in-effect") add(a.phase);
    }
    const facts = detail.phases.filter((p) => p.kind === "fact");
    for (const f of facts.filter((f) => f.phase === "boot-observed")) add(f.phase);
    const cordonFact = facts.find((f) => f.phase === "cordon");
    const fact = cordonFact ? JSON.parse(cordonFact.detail) as Partial<CordonFact> : undefined;
    this.cordon = fact && typeof fact.cordonedByOperation === "boolean"
      ? {
        priorUnschedulable: fact.priorUnschedulable === true,
        cordonedByOperation: fact.cordonedByOperation,
        resourceVersionAfterCordon: fact.resourceVersionAfterCordon,
      }
      : undefined;
    // A node found already cordoned has a fact and no attempt: the cordon phase is done.
    if (this.cordon?.priorUnschedulable && !this.#done.has("cordon")) add("cordon");
    this.rebootBootIds = detail.phases
      .filter((p) => p.phase === "reboot" && p.kind === "intent")
      .map((p) => String((JSON.parse(p.detail) as { bootIdBefore?: unknown }).bootIdBefore ?? ""));
    this.uncordonDecided = facts.some((f) => f.phase === "uncordon");
  }

  /** True (and consumed) when one more `phase` is done; the executor then skips it. */
  take(phase: Phase): boolean {
    const n = this.#done.get(phase) ?? 0;
    if (n === 0) return false;
    this.#done.set(phase, n - 1);
    return true;
  }
}
