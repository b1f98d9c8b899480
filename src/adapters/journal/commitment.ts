/**
 * The commitment and attempt transactions (docs/operation-model.md#comparisons) and the recording
 * of refusals.
 */
import { sql, type Transaction } from "kysely";
import { HOLDING_STATES, refusalUnsettlesCommitted } from "../../domain/operation.ts";
import type {
  AttemptInput,
  AttemptRecord,
  CommitInput,
  OperationRecord,
  OwnerToken,
  Refused,
} from "../../ports/journal.ts";
import { authorityColumns, type AuthorityRow, checkAuthority, refuse } from "./comparisons.ts";
import { type Ctx, machineEvent } from "./context.ts";
import { appendEvent } from "./hash_chain.ts";
import { fail, loadOperation, loadPlan, toAttempt, tokenText, toOperation } from "./rows.ts";
import type { InstallationTable, JournalDB, OperationTable, PlanTable } from "./schema.ts";

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
  const slot = await tx.selectFrom("operations").select("id")
    .where("cluster", "=", auth.plan.cluster).where("state", "in", [...HOLDING_STATES])
    .executeTakeFirst();
  if (slot) return refuse("slot-held", `operation ${slot.id} holds the rollout slot`);
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

const PLAN_COLUMNS = [
  "digest",
  "name",
  "kind",
  "cluster",
  "state",
  "approval_epoch",
  "approved_at_ms",
  "expires_at_ms",
  "max_attempts",
  "max_evidence_age_ms",
  "first_seen_commit",
  "first_seen_at_ms",
  "steps_json",
] as const satisfies readonly (keyof PlanTable)[];

/** Installation, operation, plan and comparison 1–3/6 inputs in one statement (hot path). */
export async function loadForAttempt(
  tx: Transaction<JournalDB>,
  operationId: string,
  evidenceId: string,
): Promise<{
  inst: InstallationTable;
  op: OperationTable;
  plan: PlanTable | undefined;
  authority: AuthorityRow;
}> {
  const planJson = sql.raw(PLAN_COLUMNS.map((c) => `'${c}', p.${c}`).join(", "));
  const r = await sql<OperationTable & AuthorityRow & { inst: string; plan: string | null }>`
    SELECT o.*,
      json_object('id', i.id, 'epoch', i.epoch, 'recovery_mode', i.recovery_mode,
        'created_at_ms', i.created_at_ms) AS inst,
      (SELECT json_object(${planJson}) FROM plans p WHERE p.digest = o.plan_digest) AS plan,
      ${authorityColumns(sql.ref("pl.name"), sql.ref("i.epoch"))}
    FROM operations o
      JOIN installation i ON i.id = 1
      LEFT JOIN plans pl ON pl.digest = o.plan_digest
      LEFT JOIN observations e ON e.id = ${evidenceId}
    WHERE o.id = ${operationId}`.execute(tx);
  const row = r.rows[0] ?? fail("OperationNotFound", `no operation ${operationId} in the journal`);
  const { inst, plan, ...rest } = row;
  const { bound_digest, ev_id, ev_machine, ev_purpose, ev_plan, ev_digest, ev_at, ...rest2 } = rest;
  const { newer_id, frozen, scope_state, ...op } = rest2;
  return {
    inst: JSON.parse(inst) as InstallationTable,
    op,
    // the plan's bytes and signatures are not needed to decide an attempt
    plan: plan === null ? undefined : { bytes: "", signatures: "", ...JSON.parse(plan) },
    authority: {
      bound_digest,
      ev_id,
      ev_machine,
      ev_purpose,
      ev_plan,
      ev_digest,
      ev_at,
      newer_id,
      frozen,
      scope_state,
    },
  };
}

/** Comparisons 1–3, 6, 9, 8, then 7 inside the conditional UPDATE; then the attempt row. */
export async function attemptTx(
  ctx: Ctx,
  input: AttemptInput,
  loaded: { op: OperationTable; plan: PlanTable | undefined; authority?: AuthorityRow },
): Promise<{ ok: true; attempt: AttemptRecord } | Refused> {
  if (input.transportDeadlineMs > input.verificationDeadlineMs) {
    throw new RangeError("the transport deadline must not be after the verification deadline");
  }
  const { tx, inst } = ctx;
  const { op, plan } = loaded;
  const t = input.token;
  const { evidenceId, nowMs } = input;
  const auth = await checkAuthority(tx, {
    plan,
    stepKey: op.step,
    evidenceId,
    nowMs,
    inst,
    ...(loaded.authority ? { preloaded: loaded.authority } : {}),
  });
  // A caller from a superseded epoch is told so rather than which authority it lacks; the epoch
  // itself is compared by the UPDATE below, which alone admits an attempt.
  if ("refused" in auth) return t.epoch !== inst.epoch ? epochRefusal(t) : auth.refused;
  if (op.attempts_used >= auth.plan.max_attempts) {
    return refuse("attempts-exhausted", `${op.attempts_used} of ${auth.plan.max_attempts} used`);
  }
  if (op.state === "unresolved" && op.safe_retry_revision !== null) {
    const later = await tx.selectFrom("events").select(["seq", "kind"])
      .where("machine", "=", op.machine).where("revision", ">", op.safe_retry_revision)
      .where("kind", "in", ["response", "ownership", "classification", "accounting"])
      .executeTakeFirst();
    if (later) return refuse("reclassified", `${later.kind} (event ${later.seq}) after the class`);
  }
  // Comparison 7: owner, generation, epoch and state are checked by the UPDATE itself, each on
  // its own (a restore can rewind generations so that only the epoch tells a stale token apart).
  // A phase continuation from `sending` (every earlier attempt accepted) is not a transition.
  const r = await sql`UPDATE operations SET state = 'sending', attempts_used = attempts_used + 1,
      safe_retry_revision = NULL, safe_retry_gen = NULL
    WHERE id = ${op.id} AND owner = ${t.owner} AND owner_gen = ${t.gen}
      AND owner_epoch = ${t.epoch}
      AND owner_epoch = (SELECT epoch FROM installation WHERE id = 1)
      AND attempts_used < ${auth.plan.max_attempts}
      AND (state = 'committed'
        OR (state = 'unresolved' AND safe_retry_revision IS NOT NULL
          AND safe_retry_gen = owner_gen)
        OR (state = 'sending' AND NOT EXISTS (SELECT 1 FROM attempts a
          WHERE a.operation_id = operations.id
            AND (accounted_by IS NULL OR response_class IS NOT 'accepted'))))`
    .execute(tx);
  if (r.numAffectedRows !== 1n) return fenceRefusal(op, t, inst);
  await ctx.point("attempt:operation-updated");
  const row = {
    id: ctx.ids.newId("att"),
    operation_id: op.id,
    number: op.attempts_used + 1,
    phase: input.phase,
    request_digest: input.requestDigest,
    route: input.route,
    owner: t.owner,
    owner_gen: t.gen,
    owner_epoch: t.epoch,
    evidence_id: input.evidenceId,
    sent_at_ms: input.nowMs,
    transport_deadline_ms: input.transportDeadlineMs,
    verification_deadline_ms: input.verificationDeadlineMs,
    class_revision: op.state === "unresolved" ? op.safe_retry_revision : null,
    response_class: null,
    response_detail: null,
    response_at_ms: null,
    accounted_by: null,
    accounted_revision: null,
  };
  await tx.insertInto("attempts").values(row).execute();
  await ctx.point("attempt:attempt-inserted");
  await machineEvent(ctx, {
    machine: op.machine,
    kind: "attempt",
    operationId: op.id,
    actor: tokenText(t),
    body: { attempt: row.id, number: row.number, phase: row.phase, from: op.state, to: "sending" },
    nowMs: input.nowMs,
  });
  await ctx.point("attempt:before-commit");
  return { ok: true, attempt: toAttempt(row) };
}

function epochRefusal(t: OwnerToken): Refused {
  return refuse("epoch-superseded", `epoch ${t.epoch} is not current`);
}

/** Why the fenced UPDATE matched no row (read only to name the cause; it decided nothing). */
function fenceRefusal(
  op: { owner: string; owner_gen: number; owner_epoch: string; state: string },
  t: OwnerToken,
  inst: InstallationTable,
): Refused {
  if (t.epoch !== inst.epoch) return epochRefusal(t);
  if (op.owner !== t.owner || op.owner_gen !== t.gen || op.owner_epoch !== t.epoch) {
    return refuse(
      "fence-mismatch",
      `owner is ${op.owner}/${op.owner_gen}@${op.owner_epoch}, not ${tokenText(t)}`,
    );
  }
  return refuse("state-not-attemptable", `operation is ${op.state} and not classified for retry`);
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
