/** Takeover, no-attempt cancellation and recovery mode: the acts that move ownership or epochs. */
import { sql } from "kysely";
import { type CancelGround, HOLDING_STATES } from "../../domain/operation.ts";
import type { Actor, OperationRecord, TakeoverInput } from "../../ports/journal.ts";
import { type Ctx, machineEvent, move } from "./context.ts";
import { appendEvent } from "./hash_chain.ts";
import { actorText, fail, loadAttempts, loadOperation, loadPlan, toOperation } from "./rows.ts";

/** One conditional UPDATE: generation + 1, in-flight → `unresolved`, plus the ownership event. */
export async function takeoverTx(
  ctx: Ctx,
  input: TakeoverInput,
): Promise<{ ok: true; operation: OperationRecord } | { ok: false }> {
  const before = await loadOperation(ctx.tx, input.operationId);
  const r = await sql`UPDATE operations SET owner = ${input.newOwner},
      owner_gen = owner_gen + 1, owner_epoch = ${input.epoch}, owner_since_ms = ${input.nowMs},
      state = CASE WHEN state IN ('committed','sending','verifying') THEN 'unresolved'
        ELSE state END
    WHERE id = ${input.operationId} AND owner_gen = ${input.seenGen}
      AND ${input.epoch} = (SELECT epoch FROM installation WHERE id = 1)
      AND state IN ('committed','sending','verifying','unresolved')`.execute(ctx.tx);
  if (r.numAffectedRows !== 1n) return { ok: false };
  await ctx.point("takeover:operation-updated");
  const op = await loadOperation(ctx.tx, input.operationId);
  await machineEvent(ctx, {
    machine: op.machine,
    kind: "ownership",
    operationId: op.id,
    actor: actorText(input.actor),
    body: {
      from: `${before.owner}/${before.owner_gen}@${before.owner_epoch}`,
      to: `${op.owner}/${op.owner_gen}@${op.owner_epoch}`,
      stateBefore: before.state,
      stateAfter: op.state,
    },
    nowMs: input.nowMs,
  });
  await ctx.point("takeover:before-commit");
  return { ok: true, operation: toOperation(op) };
}

async function groundHolds(
  ctx: Ctx,
  planDigest: string,
  ground: CancelGround,
  nowMs: number,
): Promise<boolean> {
  const plan = await loadPlan(ctx.tx, planDigest);
  if (!plan) return false;
  switch (ground) {
    case "plan-revoked":
      return plan.state === "revoked";
    case "plan-cancelled":
      return plan.state === "cancelled";
    case "plan-expired":
      return plan.expires_at_ms <= nowMs;
    case "approval-epoch-stale":
      return plan.approval_epoch !== ctx.inst.epoch;
    case "recovery-admin":
      return true;
  }
}

/**
 * docs/operation-model.md#no-attempt-cancellation: committed/unresolved → cancelled when no attempt
 * ever committed and a ground holds.
 */
export async function cancelTx(
  ctx: Ctx,
  a: { operationId: string; ground: CancelGround; actor: Actor; nowMs: number },
): Promise<OperationRecord> {
  let op = await loadOperation(ctx.tx, a.operationId);
  const no = (why: string): never => fail("CancellationRefused", why, { operation: op.id });
  if (a.ground === "recovery-admin" && a.actor.role !== "recovery-admin") {
    fail("RoleNotPermitted", "only recovery-admin may cancel on a recorded reason");
  }
  if ((await loadAttempts(ctx.tx, op.id)).length > 0) no("an attempt was recorded");
  if (op.state !== "committed" && op.state !== "unresolved") no(`operation is ${op.state}`);
  if (!(await groundHolds(ctx, op.plan_digest, a.ground, a.nowMs))) {
    no(`ground ${a.ground} does not hold`);
  }
  const actor = actorText(a.actor);
  if (op.state === "committed") {
    await move(ctx, { op, to: "unresolved", token: null, actor, reason: a.ground, nowMs: a.nowMs });
    op = await loadOperation(ctx.tx, op.id);
  }
  await move(ctx, { op, to: "cancelled", token: null, actor, reason: a.ground, nowMs: a.nowMs });
  if (a.ground === "recovery-admin") {
    await ctx.tx.insertInto("recoveries").values({
      id: ctx.ids.newId("act"),
      operation_id: op.id,
      attempt_id: null,
      kind: "cancellation",
      actor,
      evidence: a.ground,
      explanation: null,
      observation_id: null,
      at_ms: a.nowMs,
      epoch: ctx.inst.epoch,
    }).execute();
  }
  return toOperation(await loadOperation(ctx.tx, op.id));
}

/** T9: new epoch, every scope marked, every live operation taken over into the new epoch. */
export async function enterRecoveryTx(
  ctx: Ctx,
  a: { actor: Actor; evidence: string; nowMs: number },
): Promise<string> {
  if (a.actor.role !== "recovery-admin") fail("RoleNotPermitted", "recovery-admin only");
  const epoch = ctx.ids.newId("ep");
  await ctx.tx.updateTable("installation").set({ epoch, recovery_mode: 1 }).where("id", "=", 1)
    .execute();
  await ctx.tx.insertInto("epochs").values({ epoch, minted_at_ms: a.nowMs, reason: "recovery" })
    .execute();
  const next: Ctx = { ...ctx, inst: { ...ctx.inst, epoch, recovery_mode: 1 } };
  const live = await ctx.tx.selectFrom("operations").selectAll()
    .where("state", "in", [...HOLDING_STATES]).execute();
  for (const op of live) {
    const r = await takeoverTx(next, {
      operationId: op.id,
      newOwner: a.actor.identity,
      seenGen: op.owner_gen,
      epoch,
      actor: a.actor,
      nowMs: a.nowMs,
    });
    if (!r.ok) fail("Internal", `recovery entry could not take over ${op.id}`);
  }
  const machines = await ctx.tx.selectFrom("machines").select("machine").execute();
  for (const m of machines) {
    await ctx.tx.insertInto("recovery_scopes")
      .values({ machine: m.machine, epoch, state: "pre-restore-unaccounted", at_ms: a.nowMs })
      .execute();
  }
  await appendEvent(ctx.tx, {
    atMs: a.nowMs,
    kind: "recovery-entry",
    epoch,
    actor: actorText(a.actor),
    body: { epoch, evidence: a.evidence, takenOver: live.map((o) => o.id) },
  });
  return epoch;
}

/** Releases one scope in recovery mode (no live operation may hold it). */
export async function releaseScopeTx(
  ctx: Ctx,
  a: { machine: string; actor: Actor; nowMs: number },
): Promise<void> {
  if (a.actor.role !== "recovery-admin") fail("RoleNotPermitted", "recovery-admin only");
  if (!ctx.inst.recovery_mode) fail("TransitionIllegal", "the journal is not in recovery mode");
  const held = await ctx.tx.selectFrom("operations").select("id").where("machine", "=", a.machine)
    .where("state", "in", [...HOLDING_STATES]).executeTakeFirst();
  if (held) fail("TransitionIllegal", `operation ${held.id} still holds ${a.machine}`);
  await ctx.tx.insertInto("recovery_scopes")
    .values({ machine: a.machine, epoch: ctx.inst.epoch, state: "released", at_ms: a.nowMs })
    .onConflict((oc) => oc.columns(["machine", "epoch"]).doUpdateSet({ state: "released" }))
    .execute();
  await machineEvent(ctx, {
    machine: a.machine,
    kind: "scope-released",
    actor: actorText(a.actor),
    body: { epoch: ctx.inst.epoch },
    nowMs: a.nowMs,
  });
}

/** Leaves recovery mode once every scope of the current epoch is released. */
export async function exitRecoveryTx(ctx: Ctx, a: { actor: Actor; nowMs: number }): Promise<void> {
  if (a.actor.role !== "recovery-admin") fail("RoleNotPermitted", "recovery-admin only");
  const open = await ctx.tx.selectFrom("recovery_scopes").select("machine")
    .where("epoch", "=", ctx.inst.epoch).where("state", "!=", "released").execute();
  if (open.length > 0) {
    fail("RecoveryScopesOpen", `scopes not released: ${open.map((o) => o.machine).join(", ")}`);
  }
  await ctx.tx.updateTable("installation").set({ recovery_mode: 0 }).where("id", "=", 1).execute();
  await appendEvent(ctx.tx, {
    atMs: a.nowMs,
    kind: "recovery-exit",
    epoch: ctx.inst.epoch,
    actor: actorText(a.actor),
    body: {},
  });
}
