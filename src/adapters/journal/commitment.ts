/**
 * The commitment transaction (docs/operation-model.md#comparisons) and the recording of refusals
 * of commitments and attempts; the attempt transaction itself is in `attempt.ts`.
 */
import { HOLDING_STATES, refusalUnsettlesCommitted } from "../../domain/operation.ts";
import type { CommitInput, OperationRecord, OwnerToken, Refused } from "../../ports/journal.ts";
import { checkAuthority, refuse } from "./comparisons.ts";
import { type Ctx, machineEvent } from "./context.ts";
import { appendEvent } from "./hash_chain.ts";
import { readClusterFreeze } from "./beside.ts";
import { owedOnMachine } from "./hook_obligations.ts";
import { loadOperation, loadPlan, tokenText, toOperation } from "./rows.ts";

/** Comparisons 0–6, then the `committed` operation at generation 1 in the current epoch. */
export async function commitTx(
  ctx: Ctx,
  input: CommitInput,
): Promise<{ ok: true; operation: OperationRecord } | Refused> {
  const { tx, inst } = ctx;
  const dup = await tx.selectFrom("operations").select("id")
    .where("plan_digest", "=", input.planDigest).where("step", "=", input.step)
    .executeTakeFirst();
  if (dup) return refuse("operation-exists", `operation ${dup.id} exists for this step`);
  if (input.epoch !== inst.epoch) {
    return refuse("epoch-superseded", `epoch ${input.epoch} is not current`);
  }
  const plan = await loadPlan(tx, input.planDigest);
  const { evidenceId, nowMs } = input;
  const auth = await checkAuthority(tx, { plan, stepKey: input.step, evidenceId, nowMs, inst });
  if ("refused" in auth) return auth.refused;
  const scope = await tx.selectFrom("operations").select("id")
    .where("machine", "=", auth.step.machine).where("state", "in", [...HOLDING_STATES])
    .executeTakeFirst();
  if (scope) return refuse("scope-held", `operation ${scope.id} holds ${auth.step.machine}`);
  // A post hook its last step owes still holds the machine: it goes out before anything else.
  const owed = await owedOnMachine(tx, auth.step.machine);
  if (owed.length > 0) {
    const o = owed[0]!;
    return refuse(
      "hook-owed",
      `post hook ${o.hook} of operation ${o.operationId} is owed on ${auth.step.machine}`,
    );
  }
  const slot = await tx.selectFrom("operations").select("id")
    .where("cluster", "=", auth.plan.cluster).where("state", "in", [...HOLDING_STATES])
    .executeTakeFirst();
  if (slot) return refuse("slot-held", `operation ${slot.id} holds the rollout slot`);
  // Comparison 6 for the whole cluster: `cairn freeze` closes every machine's gate at once.
  const freeze = await readClusterFreeze(tx, auth.plan.cluster);
  if (freeze?.frozen) {
    return refuse("gate-frozen", `cluster ${auth.plan.cluster} is frozen: ${freeze.reason}`);
  }
  await ctx.point("commit:checked");
  const row = {
    id: ctx.ids.newId("op"),
    plan_digest: auth.plan.digest,
    step: input.step,
    machine: auth.step.machine,
    cluster: auth.plan.cluster,
    state: "committed",
    owner: input.owner,
    owner_gen: 1,
    owner_epoch: inst.epoch,
    owner_since_ms: input.nowMs,
    attempts_used: 0,
    safe_retry_revision: null,
    safe_retry_gen: null,
    created_at_ms: input.nowMs,
  };
  await tx.insertInto("operations").values(row).execute();
  await ctx.point("commit:operation-inserted");
  await machineEvent(ctx, {
    machine: row.machine,
    kind: "commitment",
    operationId: row.id,
    actor: tokenText({ owner: row.owner, gen: 1, epoch: inst.epoch }),
    body: { plan: row.plan_digest, step: row.step, evidence: input.evidenceId, state: "committed" },
    nowMs: input.nowMs,
  });
  await ctx.point("commit:before-commit");
  return { ok: true, operation: toOperation(row) };
}

/**
 * Records a refusal in its own transaction. An attempt refused by comparison 1, 2, 3 or 6 also
 * moves a `committed` operation to `unresolved` (ER), fenced by the refused caller's token.
 */
export async function recordRefusalTx(
  ctx: Ctx,
  a: {
    transaction: "commitment" | "attempt";
    refused: Refused;
    planDigest?: string;
    step?: string;
    operationId?: string;
    token?: OwnerToken;
    actor: string;
    nowMs: number;
  },
): Promise<void> {
  const op = a.operationId ? await loadOperation(ctx.tx, a.operationId) : undefined;
  const body = {
    transaction: a.transaction,
    comparison: a.refused.comparison,
    cause: a.refused.cause,
    detail: a.refused.detail,
    plan: a.planDigest ?? op?.plan_digest,
    step: a.step ?? op?.step,
  };
  const e = { kind: "refusal", operationId: op?.id ?? null, actor: a.actor, body, nowMs: a.nowMs };
  if (op) await machineEvent(ctx, { machine: op.machine, ...e });
  else {
    await appendEvent(ctx.tx, { ...e, atMs: a.nowMs, epoch: ctx.inst.epoch });
  }
  if (!op || !a.token || op.state !== "committed") return;
  if (!refusalUnsettlesCommitted(a.refused.cause)) return;
  const t = a.token;
  const r = await ctx.tx.updateTable("operations").set({ state: "unresolved" })
    .where("id", "=", op.id).where("state", "=", "committed").where("owner", "=", t.owner)
    .where("owner_gen", "=", t.gen).where("owner_epoch", "=", t.epoch)
    .where("owner_epoch", "=", ctx.inst.epoch).executeTakeFirst();
  if (r.numUpdatedRows !== 1n) return;
  await machineEvent(ctx, {
    machine: op.machine,
    kind: "transition",
    operationId: op.id,
    actor: tokenText(t),
    body: { from: "committed", to: "unresolved", reason: `attempt refused: ${a.refused.cause}` },
    nowMs: a.nowMs,
  });
}
