/** ER's commitment and attempt comparisons, evaluated inside the write transaction. */
import { sql, type Transaction } from "kysely";
import { REFUSAL_CAUSES, type RefusalCause } from "../../domain/operation.ts";
import type { Refused, StepBinding } from "../../ports/journal.ts";
import type { InstallationTable, JournalDB, PlanTable } from "./schema.ts";

type Tx = Transaction<JournalDB>;

/** Builds a refusal value for `cause`. */
export function refuse(cause: RefusalCause, detail: string): Refused {
  return { ok: false, comparison: REFUSAL_CAUSES[cause], cause, detail };
}

/** Comparison 1: approved in the current epoch, unexpired, not ended. */
export function checkApproval(
  plan: PlanTable | undefined,
  inst: InstallationTable,
  nowMs: number,
): Refused | null {
  if (!plan) return refuse("plan-unknown", "the plan is not in the journal");
  if (plan.state !== "approved") return refuse("plan-not-approved", `plan is ${plan.state}`);
  if (plan.expires_at_ms <= nowMs) {
    return refuse("plan-expired", `plan expired at ${plan.expires_at_ms}, now ${nowMs}`);
  }
  if (plan.approval_epoch !== inst.epoch) {
    return refuse("approval-epoch-stale", `approval epoch ${plan.approval_epoch} is not current`);
  }
  return null;
}

/** Comparison 6: the machine's scope gate is open (not frozen; recovery scope released). */
export async function checkGate(
  tx: Tx,
  machine: string,
  inst: InstallationTable,
): Promise<Refused | null> {
  const m = await tx.selectFrom("machines").select("frozen").where("machine", "=", machine)
    .executeTakeFirst();
  if (m?.frozen) return refuse("gate-frozen", `machine ${machine} is frozen`);
  if (inst.recovery_mode) {
    const s = await tx.selectFrom("recovery_scopes").select("state")
      .where("machine", "=", machine).where("epoch", "=", inst.epoch).executeTakeFirst();
    if (s?.state !== "released") {
      return refuse("gate-recovery", `recovery mode: scope ${machine} is ${s?.state ?? "held"}`);
    }
  }
  return null;
}

/** Everything comparisons 1–3 and 6 read, fetched by one statement. */
export interface AuthorityRow {
  bound_digest: string | null;
  ev_id: string | null;
  ev_machine: string | null;
  ev_purpose: string | null;
  ev_plan: string | null;
  ev_digest: string | null;
  ev_at: number | null;
  newer_id: string | null;
  frozen: number | null;
  scope_state: string | null;
}

/**
 * The SQL columns of an AuthorityRow for plan name `name` and evidence `e` (joined by the caller
 * as `e`), so the attempt transaction can fetch them with its operation in one statement.
 */
export function authorityColumns(name: unknown, epoch: unknown) {
  return sql`(SELECT digest FROM plan_names WHERE name = ${name}) AS bound_digest,
      e.id AS ev_id, e.machine AS ev_machine, e.purpose AS ev_purpose,
      e.plan_digest AS ev_plan, e.digest AS ev_digest, e.observed_at_ms AS ev_at,
      (SELECT n.id FROM observations n WHERE n.machine = e.machine AND n.basis > e.basis
        AND n.digest != e.digest AND n.purpose != 'health' ORDER BY n.basis, n.id LIMIT 1)
        AS newer_id,
      (SELECT frozen FROM machines m WHERE m.machine = e.machine) AS frozen,
      (SELECT state FROM recovery_scopes s WHERE s.machine = e.machine AND s.epoch = ${epoch})
        AS scope_state`;
}

async function readAuthority(
  tx: Tx,
  plan: PlanTable,
  evidenceId: string,
  epoch: string,
): Promise<AuthorityRow> {
  const r = await sql<AuthorityRow>`SELECT ${authorityColumns(plan.name, epoch)}
    FROM (SELECT 1) AS one LEFT JOIN observations e ON e.id = ${evidenceId}`.execute(tx);
  return r.rows[0]!;
}

function evidenceRefusal(
  a: AuthorityRow,
  plan: PlanTable,
  step: StepBinding,
  nowMs: number,
): Refused | null {
  if (
    a.ev_id === null || a.ev_purpose !== "evidence" || a.ev_plan !== plan.digest ||
    a.ev_machine !== step.machine || a.ev_at === null
  ) {
    return refuse("evidence-missing", "no evidence with that id for this plan and machine");
  }
  if (a.ev_at < nowMs - plan.max_evidence_age_ms) {
    return refuse("evidence-stale", `evidence observed at ${a.ev_at} is too old`);
  }
  if (plan.approved_at_ms === null || a.ev_at < plan.approved_at_ms) {
    return refuse("evidence-stale", "evidence was taken before the approval");
  }
  if (a.ev_digest !== step.preDigest) {
    return refuse(
      "evidence-digest-mismatch",
      `evidence digest ${a.ev_digest} is not the bound one`,
    );
  }
  if (a.newer_id !== null) return refuse("evidence-contradicted", `newer ${a.newer_id} differs`);
  return null;
}

/** Comparisons 1, 2, 3 and 6, shared by commitment and attempt; one read statement. */
export async function checkAuthority(
  tx: Tx,
  a: {
    plan: PlanTable | undefined;
    stepKey: string;
    inst: InstallationTable;
    evidenceId: string;
    nowMs: number;
    /** The row, when the caller already read it in this transaction. */
    preloaded?: AuthorityRow;
  },
): Promise<{ refused: Refused } | { step: StepBinding; plan: PlanTable }> {
  const r1 = checkApproval(a.plan, a.inst, a.nowMs);
  if (r1 || !a.plan) return { refused: r1 ?? refuse("plan-unknown", "no plan") };
  const row = a.preloaded ?? await readAuthority(tx, a.plan, a.evidenceId, a.inst.epoch);
  return judgeAuthority({ ...a, row });
}

/** Comparisons 1, 2, 3 and 6 on an authority row already read (no I/O). */
export function judgeAuthority(a: {
  plan: PlanTable | undefined;
  stepKey: string;
  inst: InstallationTable;
  nowMs: number;
  row: AuthorityRow;
}): { refused: Refused } | { step: StepBinding; plan: PlanTable } {
  const r1 = checkApproval(a.plan, a.inst, a.nowMs);
  if (r1 || !a.plan) return { refused: r1 ?? refuse("plan-unknown", "no plan") };
  const plan = a.plan;
  const step = (JSON.parse(plan.steps_json) as StepBinding[]).find((s) => s.step === a.stepKey);
  if (!step) return { refused: refuse("binding-changed", `plan has no step ${a.stepKey}`) };
  const row = a.row;
  if (row.bound_digest !== plan.digest) {
    const bound = row.bound_digest ?? "none";
    return { refused: refuse("binding-changed", `plan name ${plan.name} is bound to ${bound}`) };
  }
  const r3 = evidenceRefusal(row, plan, step, a.nowMs);
  if (r3) return { refused: r3 };
  if (row.frozen) return { refused: refuse("gate-frozen", `machine ${step.machine} is frozen`) };
  if (a.inst.recovery_mode && row.scope_state !== "released") {
    const st = row.scope_state ?? "held";
    return { refused: refuse("gate-recovery", `recovery mode: scope ${step.machine} is ${st}`) };
  }
  return { step, plan };
}
