/** Responses, evidence-determined transitions, safe-retry classification, recovery decisions. */
import {
  accountsForAttempt,
  canTransition,
  MIN_SETTLE_FLOOR_MS,
  type OperationState,
  rejectionProven,
  type ResponseClass,
} from "../../domain/operation.ts";
import type {
  OperationRecord,
  OwnerToken,
  RecoveryDecisionInput,
  ResponseInput,
  StepBinding,
  TransitionInput,
} from "../../ports/journal.ts";
import { checkApproval, checkGate } from "./comparisons.ts";
import { shape } from "./compiled.ts";
import { assertOwner, type Ctx, machineEvent, move } from "./context.ts";
import {
  actorText,
  allAccounted,
  fail,
  lastAccounting,
  loadAttempts,
  loadOperation,
  loadPlan,
  tokenText,
  toOperation,
} from "./rows.ts";
import type { AttemptTable, ObservationTable, OperationTable } from "./schema.ts";

function responseMove(
  state: string,
  cls: ResponseClass,
  atts: readonly AttemptTable[],
): OperationState | null {
  if ((state === "sending" || state === "unresolved") && rejected(atts)) return "rejected";
  if (state !== "sending" || cls === "accepted") return null;
  return "unresolved";
}

/** The operation's attempts prove it `rejected` (node hooks' Job creates need only an answer). */
function rejected(atts: readonly AttemptTable[]): boolean {
  return rejectionProven(atts.map((a) => ({ phase: a.phase, responseClass: a.response_class })));
}

const ATTEMPT = shape(
  ["id"],
  (tx, p: { id: string }) => tx.selectFrom("attempts").selectAll().where("id", "=", p.id),
);
const SET_RESPONSE = shape([
  "id",
  "response_class",
  "response_detail",
  "response_at_ms",
  "accounted_by",
  "accounted_revision",
], (tx, p: {
  id: string;
  response_class: string;
  response_detail: string;
  response_at_ms: number;
  accounted_by: string | null;
  accounted_revision: number | null;
}) =>
  tx.updateTable("attempts").set({
    response_class: p.response_class,
    response_detail: p.response_detail,
    response_at_ms: p.response_at_ms,
    accounted_by: p.accounted_by,
    accounted_revision: p.accounted_revision,
  }).where("id", "=", p.id));

/** Records a response; target responses account for the attempt; forced moves follow. */
export async function responseTx(ctx: Ctx, input: ResponseInput): Promise<OperationRecord> {
  const att = await ATTEMPT.first(ctx.tx, { id: input.attemptId }) ??
    fail("OperationNotFound", `no attempt ${input.attemptId}`);
  const op = await loadOperation(ctx.tx, att.operation_id);
  assertOwner(ctx, op, input.token);
  if (att.response_class !== null || att.accounted_by !== null) {
    fail("TransitionIllegal", `attempt ${att.id} already has a response or an accounting`);
  }
  const accounts = accountsForAttempt(input.responseClass);
  const revision = await machineEvent(ctx, {
    machine: op.machine,
    kind: "response",
    operationId: op.id,
    actor: tokenText(input.token),
    body: { attempt: att.id, class: input.responseClass, detail: input.detail, accounts },
    nowMs: input.nowMs,
  });
  await ctx.point("response:event-appended");
  await SET_RESPONSE.execute(ctx.tx, {
    id: att.id,
    response_class: input.responseClass,
    response_detail: input.detail,
    response_at_ms: input.nowMs,
    accounted_by: accounts ? "response" : null,
    accounted_revision: accounts ? revision : null,
  });
  const to = responseMove(op.state, input.responseClass, await loadAttempts(ctx.tx, op.id));
  if (to) {
    const reason = `response ${input.responseClass}`;
    const actor = tokenText(input.token);
    await move(ctx, { op, to, token: input.token, actor, reason, nowMs: input.nowMs });
  }
  return toOperation(await loadOperation(ctx.tx, op.id));
}

async function stepOf(ctx: Ctx, op: OperationTable): Promise<StepBinding> {
  const plan = await loadPlan(ctx.tx, op.plan_digest);
  const steps = JSON.parse(plan?.steps_json ?? "[]") as StepBinding[];
  return steps.find((s) => s.step === op.step) ?? fail("OperationNotFound", `no step ${op.step}`);
}

async function observation(ctx: Ctx, id: string | undefined): Promise<ObservationTable> {
  const o = id === undefined ? undefined : await ctx.tx.selectFrom("observations").selectAll()
    .where("id", "=", id).executeTakeFirst();
  return o ?? fail("OperationNotFound", `no observation ${id ?? "(none given)"}`);
}

/** Completion/failure guard: accounted attempts, then an ordered, uncontradicted observation. */
async function checkCompletion(
  ctx: Ctx,
  op: OperationTable,
  to: "completed" | "failed",
  observationId: string | undefined,
): Promise<void> {
  const atts = await loadAttempts(ctx.tx, op.id);
  if (atts.length === 0) fail("TransitionIllegal", `${to} needs at least one recorded attempt`);
  // "Every attempt accounted for" is enforced once, for every terminal state, by `move`: the
  // scope is never released while an attempt is unaccounted.
  const obs = await observation(ctx, observationId);
  if (obs.purpose !== "completion" || obs.operation_id !== op.id || obs.machine !== op.machine) {
    fail("TransitionIllegal", `observation ${obs.id} is not a completion read of ${op.id}`);
  }
  if (obs.basis <= lastAccounting(atts)) {
    fail("TransitionIllegal", `observation ${obs.id} is not ordered after the last accounting`);
  }
  // Readability is the observation's recorded fact: an unreadable (or unstated) read never
  // justifies `failed`, however its digest compares; only a read that differs contradicts.
  const needed = to === "completed" ? "established" : "contradicted";
  if (obs.postcondition !== needed) {
    fail(
      "TransitionIllegal",
      `observation ${obs.id} records the postconditions as ${obs.postcondition ?? "unstated"}; ` +
        `${to} needs ${needed}`,
    );
  }
  const post = (await stepOf(ctx, op)).postDigest;
  if ((to === "completed") !== (obs.digest === post)) {
    fail("TransitionIllegal", `observation digest ${obs.digest} does not support ${to}`);
  }
  const higher = await ctx.tx.selectFrom("observations").select("id")
    .where("machine", "=", op.machine).where("basis", ">", obs.basis)
    .where("digest", "!=", obs.digest).where("purpose", "!=", "health").executeTakeFirst();
  if (higher) fail("TransitionIllegal", `higher-basis observation ${higher.id} differs`);
}

/** An evidence-determined transition by the owner. */
export async function transitionTx(ctx: Ctx, input: TransitionInput): Promise<OperationRecord> {
  const op = await loadOperation(ctx.tx, input.operationId);
  assertOwner(ctx, op, input.token);
  if (!canTransition(op.state as OperationState, input.to)) {
    fail(
      "TransitionIllegal",
      `operation ${op.id}: ${op.state} → ${input.to} is not an ER transition`,
    );
  }
  const atts = await loadAttempts(ctx.tx, op.id);
  if (input.to === "verifying") {
    const last = atts[atts.length - 1];
    if (!last || !allAccounted(atts) || last.response_class !== "accepted") {
      fail("TransitionIllegal", "verifying needs the latest attempt accepted and all accounted");
    }
  } else if (input.to === "completed" || input.to === "failed") {
    await checkCompletion(ctx, op, input.to, input.observationId);
  } else if (input.to === "rejected") {
    if (!rejected(atts)) {
      fail(
        "TransitionIllegal",
        "rejected needs a definitive rejection of every request to the machine (and an answer " +
          "to every node hook's Job create)",
      );
    }
  }
  await move(ctx, {
    op,
    to: input.to,
    token: input.token,
    actor: tokenText(input.token),
    reason: input.reason,
    nowMs: input.nowMs,
  });
  return toOperation(await loadOperation(ctx.tx, op.id));
}

/**
 * Safe-to-retry classification of an `unresolved` operation
 * (docs/operation-model.md#classification).
 */
export async function classifyTx(
  ctx: Ctx,
  a: { operationId: string; token: OwnerToken; observationId: string; nowMs: number },
): Promise<OperationRecord> {
  const op = await loadOperation(ctx.tx, a.operationId);
  assertOwner(ctx, op, a.token);
  const no = (why: string): never => fail("TransitionIllegal", `not safe to retry: ${why}`);
  if (op.state !== "unresolved") no(`operation is ${op.state}`);
  const atts = await loadAttempts(ctx.tx, op.id);
  if (!allAccounted(atts)) no("an attempt is unaccounted");
  if (atts.some((x) => x.response_class === "accepted")) no("an attempt was accepted");
  if (atts.some((x) => x.response_class === "rejected-pre-mutation")) no("a definitive rejection");
  const plan = await loadPlan(ctx.tx, op.plan_digest);
  const r1 = checkApproval(plan, ctx.inst, a.nowMs);
  if (r1) no(r1.detail);
  if (op.attempts_used >= (plan?.max_attempts ?? 0)) no("no attempts left");
  const gate = await checkGate(ctx.tx, op.machine, ctx.inst);
  if (gate) no(gate.detail);
  const obs = await observation(ctx, a.observationId);
  if ((obs.purpose !== "completion" && obs.purpose !== "recovery") || obs.machine !== op.machine) {
    no(`observation ${obs.id} is not a completion or recovery read of ${op.machine}`);
  }
  if (obs.basis <= lastAccounting(atts)) no("the observation precedes the last accounting");
  if (obs.digest !== (await stepOf(ctx, op)).preDigest) no("machine is not at the pre digest");
  const revision = await machineEvent(ctx, {
    machine: op.machine,
    kind: "classification",
    operationId: op.id,
    actor: tokenText(a.token),
    body: { class: "safe-to-retry", observation: obs.id },
    nowMs: a.nowMs,
  });
  await ctx.tx.updateTable("operations")
    .set({ safe_retry_revision: revision, safe_retry_gen: op.owner_gen })
    .where("id", "=", op.id).where("owner_gen", "=", a.token.gen).execute();
  return toOperation(await loadOperation(ctx.tx, op.id));
}

/** The settle floor's starting point: the latest of deadline, stop/takeover and first read. */
async function settleStart(
  ctx: Ctx,
  att: AttemptTable,
  op: OperationTable,
  stoppedAtMs: number,
): Promise<number> {
  const firstRead = await ctx.tx.selectFrom("observations").select("observed_at_ms")
    .where("machine", "=", op.machine).where("observed_at_ms", ">=", att.transport_deadline_ms)
    .orderBy("observed_at_ms").limit(1).executeTakeFirst();
  return Math.max(att.transport_deadline_ms, stoppedAtMs, firstRead?.observed_at_ms ?? 0);
}

/**
 * A recovery-admin accounting decision (docs/operation-model.md#accounting-and-the-settle-floor).
 */
export async function recoveryDecisionTx(ctx: Ctx, input: RecoveryDecisionInput): Promise<void> {
  if (input.settleFloorMs < MIN_SETTLE_FLOOR_MS) {
    fail("SettleFloorTooShort", `settle floor ${input.settleFloorMs} ms is below 30 s`);
  }
  if (input.actor.role !== "recovery-admin") {
    fail("RoleNotPermitted", "only recovery-admin decides what evidence cannot");
  }
  const att = await ctx.tx.selectFrom("attempts").selectAll().where("id", "=", input.attemptId)
    .executeTakeFirst() ?? fail("OperationNotFound", `no attempt ${input.attemptId}`);
  const op = await loadOperation(ctx.tx, att.operation_id);
  const no = (why: string): never => fail("RecoveryDecisionRefused", why, { attempt: att.id });
  if (att.accounted_by !== null) no(`attempt ${att.id} is already accounted`);
  const takenOver = op.owner_gen !== att.owner_gen || op.owner_epoch !== att.owner_epoch;
  if (!takenOver && input.executorStoppedAtMs === undefined) {
    no("the attempt's executor is neither stopped nor taken over");
  }
  const stopped = takenOver ? op.owner_since_ms : input.executorStoppedAtMs ?? 0;
  const floorEnd = (await settleStart(ctx, att, op, stopped)) + input.settleFloorMs;
  if (input.nowMs < floorEnd) no(`the settle floor ends at ${floorEnd}; now ${input.nowMs}`);
  const obs = await observation(ctx, input.observationId);
  if (obs.purpose !== "recovery" || obs.machine !== op.machine) no("not a recovery observation");
  if (obs.observed_at_ms < floorEnd) no(`observation ${obs.id} was taken before the floor`);
  const changed = obs.resource_version_at_start !== null &&
    obs.resource_version_at_start !== obs.resource_version;
  if (changed && !input.explanation) no("resourceVersion changed during the settle, unexplained");
  const revision = await machineEvent(ctx, {
    machine: op.machine,
    kind: "accounting",
    operationId: op.id,
    actor: actorText(input.actor),
    body: { attempt: att.id, by: "recovery", observation: obs.id, floorEnd, changed },
    nowMs: input.nowMs,
  });
  await ctx.tx.updateTable("attempts")
    .set({ accounted_by: "recovery", accounted_revision: revision }).where("id", "=", att.id)
    .where("accounted_by", "is", null).execute();
  await ctx.tx.insertInto("recoveries").values({
    id: ctx.ids.newId("act"),
    operation_id: op.id,
    attempt_id: att.id,
    kind: "accounting",
    actor: actorText(input.actor),
    evidence: input.evidence,
    explanation: input.explanation ?? null,
    observation_id: obs.id,
    at_ms: input.nowMs,
    epoch: ctx.inst.epoch,
  }).execute();
}
