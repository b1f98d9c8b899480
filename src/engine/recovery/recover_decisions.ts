/**
 * Two of the three decisions `cairn recover` records (the uncordon, which writes to the cluster,
 * is recover_uncordon.ts). Each re-reads the journal, refuses with a reason
 * when the evidence does not allow it, and otherwise leaves the journal to check ER's rules once
 * more inside its own transaction. Not a command.
 */
import { CairnError } from "../../domain/errors.ts";
import type { OperationState } from "../../domain/operation.ts";
import type { Reason } from "../../domain/reasons.ts";
import type { HealthPolicy } from "../../domain/health/policy_parse.ts";
import type { Actor, Journal } from "../../ports/journal.ts";
import type { Logger } from "../../ports/logger.ts";
import {
  alreadyUncordoned,
  attemptTakenOver,
  classification,
  classifyRefusal,
  cordonFactOf,
} from "./recovery.ts";
import type { StepState } from "../executor/deps.ts";
import { journalHealthGate } from "../executor/health_gate.ts";
import { sendOwedHooks } from "../operating/owed_hooks.ts";
import { completionObservation, NODE_READERS, roundsUntilPass } from "../executor/verify_phase.ts";
import { verdictForTarget } from "../executor/health_elsewhere.ts";
import {
  gatherEvidence,
  needTalos,
  type RecoveryCluster,
  type RecoveryEvidence,
  recoveryObservation,
  takeOverFor,
} from "./recover_actions.ts";

/** The reason a recovery classification's transition note starts with. */
const CLASSIFIED: Reason = "RecoveryClassified";

/** What a recorded decision did. */
export interface DecisionResult {
  readonly decision: "account" | "uncordon" | "classify";
  readonly operation: string;
  readonly state: OperationState;
  readonly message: string;
  readonly observation?: string;
}

function refuse(reason: Reason, message: string): never {
  throw new CairnError({ reason, message });
}

async function evidence(journal: Journal, c: RecoveryCluster, opId: string, floorMs = 30_000) {
  return await gatherEvidence(journal, {
    operationId: opId,
    settleFloorMs: floorMs,
    nowMs: c.clock.now(),
  });
}

/**
 * A recovery-admin accounting decision (docs/operation-model.md#accounting-and-the-settle-floor):
 * takeover unless the executor is known stopped
 * or already taken over, a recovery observation now, then the decision. The journal refuses it
 * while the settle floor has not elapsed.
 */
export async function accountAttempt(
  journal: Journal,
  c: RecoveryCluster,
  o: {
    readonly operationId: string;
    readonly attemptId: string;
    readonly actor: string;
    readonly evidence: string;
    readonly explanation?: string;
    readonly settleFloorMs: number;
    readonly executorStoppedAtMs?: number;
  },
): Promise<DecisionResult> {
  const e = await evidence(journal, c, o.operationId, o.settleFloorMs);
  const att = e.facts.attempts.find((a) => a.id === o.attemptId) ??
    refuse("OperationNotFound", `operation ${o.operationId} has no attempt ${o.attemptId}`);
  if (att.accountedBy !== null) {
    refuse("RecoveryNotApplicable", `attempt ${att.id} is already accounted (${att.accountedBy})`);
  }
  const actor: Actor = { identity: o.actor, role: "recovery-admin" };
  const op = e.facts.operation;
  if (o.executorStoppedAtMs === undefined && !attemptTakenOver(att, op)) {
    await takeOverFor(journal, op, actor, c.clock.now());
  }
  const obs = await recoveryObservation(journal, c, { e, actor });
  await journal.recordRecoveryDecision({
    attemptId: att.id,
    actor,
    observationId: obs.id,
    ...(o.executorStoppedAtMs !== undefined ? { executorStoppedAtMs: o.executorStoppedAtMs } : {}),
    settleFloorMs: o.settleFloorMs,
    ...(o.explanation ? { explanation: o.explanation } : {}),
    evidence: o.evidence,
    nowMs: c.clock.now(),
  });
  const after = await journal.getOperation(op.id);
  return {
    decision: "account",
    operation: op.id,
    state: after?.state ?? op.state,
    message:
      `attempt ${att.id} (${att.phase}) accounted by ${o.actor} on ${obs.id}: ${obs.summary}`,
    observation: obs.id,
  };
}

/** What classification reads health with. */
export interface ClassifyHealth {
  readonly policy: HealthPolicy;
  readonly evidence: import("../../domain/health/types.ts").HealthEvidence;
  readonly timeoutClock?: import("../../ports/clock.ts").Clock;
  readonly intervalMs: number;
  readonly pollIntervalMs: number;
  readonly log: Logger;
}

/**
 * Classifies a fully accounted `unresolved` operation on a completion observation taken as the
 * executor takes it (version, schematic, fresh health rounds to the verify deadline): completed,
 * failed, or still unresolved when unreadable. Nothing is sent to the node.
 */
export async function classifyOperation(
  journal: Journal,
  c: RecoveryCluster,
  h: ClassifyHealth,
  o: { readonly operationId: string; readonly actor: string },
): Promise<DecisionResult> {
  const e = await evidence(journal, c, o.operationId);
  const why = classifyRefusal(e.facts);
  if (why) {
    const open = e.facts.attempts.some((a) => a.accountedBy === null);
    refuse(open ? "RecoveryAttemptsUnaccounted" : "RecoveryNotApplicable", why);
  }
  const actor: Actor = { identity: o.actor, role: "controller" };
  const { token } = await takeOverFor(journal, e.facts.operation, actor, c.clock.now());
  const s = stepState(journal, c, h, e, token, `recover:${o.actor}`);
  const cordon = cordonFactOf(e.facts.phases);
  const ownedInPlace = (cordon?.cordonedByOperation ?? false) && !alreadyUncordoned(e.facts.phases);
  const hop = e.plan.spec.hops[e.plan.spec.hops.length - 1]!;
  const round = await roundsUntilPass(
    s,
    "post-gate",
    ownedInPlace,
    ownedInPlace ? NODE_READERS : undefined,
  );
  // A round failing only on other nodes classifies nothing about this one.
  const obs = await completionObservation(s, hop, verdictForTarget(round));
  const to = classification(obs);
  const message = `${obs.summary}; health ${round.verdict}: ${round.reason}`;
  if (to === "unresolved") {
    refuse("RecoveryEvidenceInconclusive", `completion observation unreadable: ${message}`);
  }
  const after = await journal.transition({
    operationId: o.operationId,
    token,
    to,
    observationId: obs.id,
    reason: `${CLASSIFIED}: ${message}`.slice(0, 1000),
    nowMs: c.clock.now(),
  });
  // The journal admits mutations on the scope again: a post hook the step owes goes out now,
  // before anything else on the node (docs/operating.md#owed-post-hooks). If it cannot (a freeze),
  // it stays owed and the rollout sends it before its next step.
  const owed = await sendOwedHooks(s.deps, after);
  const hooks = owed.ok
    ? owed.sent > 0 ? `; owed post hooks sent: ${owed.sent}` : ""
    : `; owed post hook not settled: ${owed.reason}: ${owed.detail}`;
  return {
    decision: "classify",
    operation: o.operationId,
    state: after.state,
    message: message + hooks,
    observation: obs.id,
  };
}

function stepState(
  journal: Journal,
  c: RecoveryCluster,
  h: ClassifyHealth,
  e: RecoveryEvidence,
  token: StepState["token"],
  owner: string,
): StepState {
  const op = e.facts.operation;
  const health = journalHealthGate({
    clock: c.clock,
    ...(h.timeoutClock ? { timeoutClock: h.timeoutClock } : {}),
    journal,
    evidence: h.evidence,
    policy: h.policy,
    cluster: e.plan.metadata.cluster,
    intervalMs: h.intervalMs,
  });
  return {
    deps: {
      clock: c.clock,
      journal,
      kube: c.kube,
      talos: needTalos(c),
      health,
      log: h.log,
      owner,
      callTimeoutMs: c.callTimeoutMs,
      pollIntervalMs: h.pollIntervalMs,
    },
    bound: { plan: e.plan, digest: e.planDigest },
    node: op.machine,
    address: e.plan.spec.nodes.find((n) => n.name === op.machine)?.address ?? op.machine,
    step: op.step,
    operationId: op.id,
    token,
  };
}
