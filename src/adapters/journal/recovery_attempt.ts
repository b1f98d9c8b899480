/**
 * The recovery attempt transaction: a recovery-admin's mutation is admitted on its own authority
 * (the recovery decision it executes, under the recovery-admin's takeover, in the current epoch),
 * not on the plan's attempt authority, which a halted operation no longer has (comparisons 1 and
 * 7 of docs/operation-model.md). The row and its timeline event commit together, before any send;
 * a refusal is named on the timeline and admits nothing.
 */
import type { RecoveryAttemptInput, RecoveryResponseInput, Refused } from "../../ports/journal.ts";
import { refuse } from "./comparisons.ts";
import { assertOwner, type Ctx, machineEvent } from "./context.ts";
import { fail, loadOperation, tokenText } from "./rows.ts";

/** Admits a recovery-admin's attempt, or names why not. */
export async function recoveryAttemptTx(
  ctx: Ctx,
  input: RecoveryAttemptInput,
): Promise<{ ok: true; attempt: { id: string } } | Refused> {
  if (input.actor.role !== "recovery-admin") {
    throw new RangeError(`a recovery attempt needs a recovery-admin, not ${input.actor.role}`);
  }
  const op = await loadOperation(ctx.tx, input.operationId);
  const t = input.token;
  const refusal = t.epoch !== ctx.inst.epoch
    ? refuse("epoch-superseded", `epoch ${t.epoch} is not the current epoch ${ctx.inst.epoch}`)
    : op.owner !== t.owner || op.owner_gen !== t.gen || op.owner_epoch !== t.epoch
    ? refuse(
      "fence-mismatch",
      `operation ${op.id} is owned by ${op.owner}/${op.owner_gen}@${op.owner_epoch}, ` +
        `not ${tokenText(t)}`,
    )
    : undefined;
  const body = {
    decision: input.decision,
    phase: input.phase,
    actor: input.actor.identity,
    role: input.actor.role,
    requestDigest: input.requestDigest,
    route: input.route,
    evidence: input.evidence,
  };
  if (refusal) {
    await machineEvent(ctx, {
      machine: op.machine,
      kind: "recovery-attempt-refused",
      operationId: op.id,
      actor: input.actor.identity,
      body: { ...body, comparison: refusal.comparison, cause: refusal.cause },
      nowMs: input.nowMs,
    });
    return refusal;
  }
  const id = ctx.ids.newId("rat");
  await ctx.tx.insertInto("recovery_attempts").values({
    id,
    operation_id: op.id,
    machine: op.machine,
    actor: input.actor.identity,
    role: input.actor.role,
    decision: input.decision,
    phase: input.phase,
    request_digest: input.requestDigest,
    route: input.route,
    evidence: JSON.stringify(input.evidence),
    owner: t.owner,
    owner_gen: t.gen,
    owner_epoch: t.epoch,
    begun_at_ms: input.nowMs,
    response_class: null,
    response_detail: null,
    responded_at_ms: null,
  }).execute();
  await machineEvent(ctx, {
    machine: op.machine,
    kind: "recovery-attempt",
    operationId: op.id,
    actor: input.actor.identity,
    body: { attempt: id, ...body },
    nowMs: input.nowMs,
  });
  return { ok: true, attempt: { id } };
}

/** Records the response to a recovery attempt, once, under the token that began it. */
export async function recoveryResponseTx(ctx: Ctx, input: RecoveryResponseInput): Promise<void> {
  const att = await ctx.tx.selectFrom("recovery_attempts").selectAll()
    .where("id", "=", input.attemptId).executeTakeFirst() ??
    fail("OperationNotFound", `no recovery attempt ${input.attemptId}`);
  const op = await loadOperation(ctx.tx, att.operation_id);
  assertOwner(ctx, op, input.token);
  if (att.response_class !== null) {
    fail("TransitionIllegal", `recovery attempt ${att.id} already has a response`);
  }
  await ctx.tx.updateTable("recovery_attempts").set({
    response_class: input.responseClass,
    response_detail: input.detail,
    responded_at_ms: input.nowMs,
  }).where("id", "=", att.id).execute();
  await machineEvent(ctx, {
    machine: op.machine,
    kind: "recovery-response",
    operationId: op.id,
    actor: tokenText(input.token),
    body: { attempt: att.id, class: input.responseClass, detail: input.detail },
    nowMs: input.nowMs,
  });
}
