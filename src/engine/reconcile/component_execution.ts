/**
 * A merged ComponentUpgrade under the reconcile loop: bound with no machine steps and observed
 * as `cairn apply` observes it (`engine/component/run_component.ts`: the dispatch check, the pin
 * digests, the delivery, the after-merge rounds), tied to the merge, the commit that introduced
 * the plan on the watched branch. Its observed end, with everything observed, is journaled as a
 * `component-end` event on the hash chain: a later run of the same plan (a restart, a new term)
 * reports what was observed then instead of observing again a cluster that has moved on. A
 * refusal, an unreadable end or a stop is not an end: the next run checks and observes again.
 */
import { COMPONENT_END_EVENT, type ComponentOutcome } from "../../domain/component/outcome.ts";
import type { ComponentUpgradePlan } from "../../domain/plan/schema.ts";
import type { ReasonNote } from "../../domain/reasons.ts";
import { CairnError } from "../../domain/errors.ts";
import type { CommitHistory } from "../../ports/commit_history.ts";
import type { BoundFileSource } from "../../ports/dispatch.ts";
import type { ExecutionEnd, TrustRoot } from "../../ports/reconcile.ts";
import { componentAuthority } from "../component/component_authority.ts";
import { runComponentUpgrade } from "../component/run_component.ts";
import { controllerActor } from "../executor/observe.ts";
import type { ExecuteOptions } from "../executor/run_plan.ts";
import { ClusterEvidence } from "../health/cluster_evidence.ts";

export { COMPONENT_END_EVENT };

/** A bound ComponentUpgrade as the loop runs it. */
export interface BoundComponent {
  readonly plan: ComponentUpgradePlan;
  readonly digest: string;
  readonly bytes: Uint8Array;
  readonly signatures: string;
  /** The commit that introduced the plan on the watched branch: the merge Flux must deliver. */
  readonly merge: string;
}

export type ComponentSettings =
  & Pick<
    ExecuteOptions,
    | "journal"
    | "epoch"
    | "cluster"
    | "clock"
    | "timeoutClock"
    | "owner"
    | "callTimeoutMs"
    | "pollIntervalMs"
    | "roundIntervalMs"
  >
  & {
    /** Whether a later revision Flux reports contains the merge (the watched repository). */
    readonly commitHistory?: CommitHistory;
  };

/** Runs (or, when its end is journaled, reports) one bound ComponentUpgrade. */
export async function executeComponent(
  s: ComponentSettings,
  /** The trust root (absent: signatures are not evaluated, as `cairn apply` without one). */
  authority: { readonly trust?: TrustRoot; readonly requiredApprovals: number },
  b: BoundComponent,
  opts: { readonly signal: AbortSignal; readonly files: BoundFileSource },
): Promise<ExecutionEnd> {
  const recorded = await recordedEnd(s, b.digest);
  if (recorded) return executionEnd(recorded);
  // The epoch the end is recorded under: this process's (docs/operation-model.md#fencing), else
  // the journal's now, read once before observing (a one-shot run).
  const epoch = s.epoch ?? (await s.journal.installation()).epoch;
  const evidence = new ClusterEvidence(s.cluster.kube, s.cluster.talos, s.timeoutClock ?? s.clock);
  let outcome: ComponentOutcome;
  try {
    outcome = await runComponentUpgrade({
      journal: s.journal,
      plan: b.plan,
      digest: b.digest,
      owner: s.owner,
      authority: componentAuthority({
        plan: b.plan,
        bytes: b.bytes,
        signatures: b.signatures,
        requiredApprovals: authority.requiredApprovals,
        files: opts.files,
        ...(authority.trust ? { trust: authority.trust } : {}),
        clock: s.clock,
        cluster: s.cluster,
        callTimeoutMs: s.callTimeoutMs,
      }),
      files: opts.files,
      observe: {
        kube: s.cluster.kube,
        clock: s.clock,
        callTimeoutMs: s.callTimeoutMs,
        pollIntervalMs: s.pollIntervalMs,
        merged: {
          commit: b.merge,
          ...(s.commitHistory ? { history: s.commitHistory } : {}),
        },
      },
      evidence,
      ...(s.timeoutClock ? { timeoutClock: s.timeoutClock } : {}),
      roundIntervalMs: s.roundIntervalMs,
      signal: opts.signal,
      epoch,
    });
  } finally {
    evidence.stop();
  }
  // Cut short by the stop signal or the end of the term: what it saw so far decides nothing.
  if (opts.signal.aborted && outcome.end !== "completed") {
    return {
      state: "stopped",
      reasons: [{
        reason: "Stopped",
        message: "the controller stopped while observing the delivery; the next run observes again",
        where: "controller",
      }],
    };
  }
  if (isObservedEnd(outcome)) {
    const recorded = await s.journal.recordRolloutEvent({
      planDigest: b.digest,
      node: null,
      kind: COMPONENT_END_EVENT,
      // A JSON round trip: the journal keeps plain data, exactly what a later run re-reads.
      detail: { end: outcome.end, outcome: JSON.parse(JSON.stringify(outcome)) },
      actor: controllerActor(s.owner),
      nowMs: s.clock.now(),
      epoch,
    }).then(() => true, (e: unknown) => {
      if (e instanceof CairnError && e.reason === "ComponentEndRecorded") return false;
      throw e;
    });
    // Another replica journaled the plan's end first: that end is the plan's, not this reading.
    if (!recorded) {
      const first = await recordedEnd(s, b.digest);
      if (first) return executionEnd(first);
    }
  }
  return executionEnd(outcome);
}

/** Ends that are facts about the delivery (a refusal or an unreadable end is checked again). */
function isObservedEnd(o: ComponentOutcome): boolean {
  return o.end === "completed" || o.end === "not-landed" || o.end === "not-delivered" ||
    o.end === "health-failed";
}

async function recordedEnd(
  s: ComponentSettings,
  digest: string,
): Promise<ComponentOutcome | undefined> {
  const history = await s.journal.planHistory(digest);
  const e = history?.rolloutEvents?.find((x) => x.kind === COMPONENT_END_EVENT);
  const outcome = e?.detail["outcome"];
  return outcome && typeof outcome === "object" ? outcome as ComponentOutcome : undefined;
}

/** The loop's end of a ComponentUpgrade: completed only when it completed; why not otherwise. */
export function executionEnd(o: ComponentOutcome): ExecutionEnd {
  const stuck = (o.delivery?.checks ?? []).filter((c) => c.verdict !== "pass")
    .map((c) => c.detail).join("; ");
  const note = (reason: ReasonNote["reason"], message: string): ExecutionEnd => ({
    state: "halted",
    reasons: [{ reason, message, where: "delivery" }],
    component: o,
  });
  switch (o.end) {
    case "completed":
      return { state: "completed", reasons: [], component: o };
    case "refused":
      return {
        state: "refused",
        reasons: [{
          reason: o.refusal?.reason ?? "Internal",
          message: o.refusal?.detail ?? "refused at dispatch",
        }],
        component: o,
      };
    case "not-landed":
      return note("ComponentNotLanded", stuck);
    case "not-delivered":
      return note("ComponentNotDelivered", stuck);
    case "health-failed":
      return note(
        "ComponentAfterMergeFailed",
        o.rounds.at(-1)?.outcome.message ?? "the last after-merge round failed",
      );
    case "unresolved":
      return note("ComponentDeliveryUnreadable", stuck || "the evidence could not be read");
  }
}
