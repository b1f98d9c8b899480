/**
 * How one step of any executing kind ended, and the operation-state transitions that record it.
 * Every executor (TalosUpgrade, KubernetesUpgrade, ConfigApply) moves its operation through these
 * helpers only, so a transition is always written with the owner's fenced token and the observer is
 * told right after the journal recorded it, never before.
 */
import {
  isInFlight,
  isTerminal,
  type OperationState,
  OPERATOR_STOP_REASON,
} from "../../domain/operation.ts";
import type { Plan } from "../../domain/plan/schema.ts";
import type { Reason } from "../../domain/reasons.ts";
import type { OperationRecord } from "../../ports/journal.ts";
import { sendOwedHooks } from "../operating/owed_hooks.ts";
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
  const now = await s.deps.journal.getOperation(s.operationId);
  if (now && isTerminal(now.state)) return await settledAtResponse(s, now, reason, detail);
  await s.postHooks?.run(false);
  const op = await s.deps.journal.getOperation(s.operationId);
  if (op && (op.state === "committed" || op.state === "sending" || op.state === "verifying")) {
    await transition(s, "unresolved", reason, detail);
  }
  return outcome(s, "unresolved", reason, detail);
}

/**
 * A step whose operation the journal settled as it recorded a response (a definitive rejection of
 * every request to the machine makes it `rejected` right there): the outcome is the journal's
 * state, never `unresolved` beside a terminal record. The post hooks the step owes can no longer go
 * out as its own attempts (nothing more is admitted on a settled operation), so they go out now
 * through the owed-hook claim (`owed_hooks.ts`), before anything else happens on the node; one that
 * does not succeed is the outcome's reason, the operation's state stays what the journal holds.
 */
export async function settledAtResponse(
  s: StepState<Plan>,
  op: OperationRecord,
  reason: Reason,
  detail: string,
): Promise<NodeOutcome> {
  delete s.postHooks;
  const owed = await sendOwedHooks(s.deps, op);
  if (!owed.ok) return outcome(s, op.state, owed.reason, `${detail}; ${owed.detail}`);
  return outcome(s, op.state, reason, detail);
}

/**
 * A committed step the operator stopped (SIGINT/SIGTERM) before it could be classified. A stop is
 * not evidence: nothing sent and not answered is accounted (no response is recorded for it: a
 * stop is not a transport failure, and the request may still land), and no health round cut
 * short classifies anything. The operation, while still in flight, is recorded `unresolved` with
 * the stop as its reason, so the journal and the report say the run was stopped by the operator;
 * the next run takes it over (a TalosUpgrade step resumes from the journal, other kinds hold it)
 * or recovery accounts for it. The post hooks it
 * owes stay owed (recorded before their pre hooks went out; `owed_hooks.ts`).
 */
export async function stoppedMidStep(s: StepState<Plan>, why: unknown): Promise<NodeOutcome> {
  const detail = await stopDetail(s, why);
  const op = await s.deps.journal.getOperation(s.operationId);
  if (op && isInFlight(op.state)) await transition(s, "unresolved", OPERATOR_STOP_REASON, detail);
  s.deps.log.warn("step stopped by the operator", {
    operationId: s.operationId,
    node: s.node,
    reason: OPERATOR_STOP_REASON,
  });
  return outcome(s, "stopped", OPERATOR_STOP_REASON, detail);
}

async function stopDetail(s: StepState<Plan>, why: unknown): Promise<string> {
  const shown = await s.deps.journal.showOperation(s.operationId);
  const open = (shown?.attempts ?? []).filter((a) => a.accountedBy === null)
    .map((a) => `${a.phase} attempt ${a.number}`);
  const cause = why instanceof Error ? why.message : why === undefined ? "" : String(why);
  return `the run was stopped by the operator${cause ? ` (${cause})` : ""}; ` +
    (open.length
      ? `sent and not answered, left unaccounted: ${open.join(", ")}`
      : "nothing sent is left unanswered") +
    "; the operation stays unresolved: the next run takes it over (a TalosUpgrade step resumes " +
    "from the journal) or `cairn recover` settles it";
}
