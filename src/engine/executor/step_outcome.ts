/**
 * How one step of any executing kind ended, and the operation-state transitions that record it.
 * Every executor (TalosUpgrade, KubernetesUpgrade, ConfigApply) moves its operation through these
 * helpers only, so a transition is always written with the owner's fenced token and the observer is
 * told right after the journal recorded it, never before.
 */
import type { OperationState } from "../../domain/operation.ts";
import type { Plan } from "../../domain/plan/schema.ts";
import type { Reason } from "../../domain/reasons.ts";
import type { StepState } from "./deps.ts";

/** How one step ended. `not-committed` means no operation exists (nothing was sent). */
export interface NodeOutcome {
  readonly node: string;
  readonly operationId: string | undefined;
  readonly state: OperationState | "not-committed" | "stopped";
  readonly reason: Reason;
  readonly detail: string;
  /** Set when the dispatch check refused (contrary evidence) rather than held. */
  readonly refused?: boolean;
}

/** The states a running step may ask the journal for. */
export type StepTransition = "verifying" | "completed" | "failed" | "unresolved" | "rejected";

/** Records a transition of the step's operation (reason and detail, bounded) and tells the observer. */
export async function transition(
  s: StepState<Plan>,
  to: StepTransition,
  reason: Reason,
  detail: string,
  observationId?: string,
): Promise<void> {
  const after = await s.deps.journal.transition({
    operationId: s.operationId,
    token: s.token,
    to,
    reason: `${reason}: ${detail}`.slice(0, 1000),
    ...(observationId ? { observationId } : {}),
    nowMs: s.deps.clock.now(),
  });
  s.deps.observer?.onOperationState?.({
    operationId: s.operationId,
    node: s.node,
    state: after.state,
  });
}

/** The outcome of a committed step. */
export function outcome(
  s: StepState<Plan>,
  state: NodeOutcome["state"],
  reason: Reason,
  detail: string,
): NodeOutcome {
  return { node: s.node, operationId: s.operationId, state, reason, detail };
}

/** The outcome of a step that got no operation; `refused` when contrary evidence stopped it. */
export function notCommitted(
  node: string,
  reason: Reason,
  detail: string,
  refused = false,
): NodeOutcome {
  return {
    node,
    operationId: undefined,
    state: "not-committed",
    reason,
    detail,
    ...(refused ? { refused } : {}),
  };
}

/**
 * A committed step that halted without a terminal reading: its operation, while still in flight,
 * is recorded `unresolved` (the scope stays held for recovery); nothing is retried here. The post
 * hooks the step owes run first, while the journal still admits their Job creates; the step's own
 * halt stays its reason whatever they do (a failing one is recorded as its phase fact).
 */
export async function haltUnresolved(
  s: StepState<Plan>,
  reason: Reason,
  detail: string,
): Promise<NodeOutcome> {
  await s.postHooks?.run(false);
  const op = await s.deps.journal.getOperation(s.operationId);
  if (op && (op.state === "committed" || op.state === "sending" || op.state === "verifying")) {
    await transition(s, "unresolved", reason, detail);
  }
  return outcome(s, "unresolved", reason, detail);
}
