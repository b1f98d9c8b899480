/** ER's commitment and attempt comparisons, evaluated inside the write transaction. */
import type { Transaction } from "kysely";
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

/** Comparison 2: the plan's name is still bound to its digest. */
export async function checkBinding(tx: Tx, plan: PlanTable): Promise<Refused | null> {
  const b = await tx.selectFrom("plan_names").select("digest").where("name", "=", plan.name)
    .executeTakeFirst();
  if (b?.digest !== plan.digest) {
    return refuse("binding-changed", `plan name ${plan.name} is bound to ${b?.digest ?? "none"}`);
  }
  return null;
}

/** Comparison 3: fresh pre-dispatch evidence recorded for this plan and machine. */
export async function checkEvidence(
  tx: Tx,
  a: { plan: PlanTable; step: StepBinding; evidenceId: string; nowMs: number },
): Promise<Refused | null> {
  const ev = await tx.selectFrom("observations").selectAll().where("id", "=", a.evidenceId)
    .executeTakeFirst();
  if (
    !ev || ev.purpose !== "evidence" || ev.plan_digest !== a.plan.digest ||
    ev.machine !== a.step.machine
  ) {
    return refuse("evidence-missing", `no evidence ${a.evidenceId} for this plan and machine`);
  }
  if (ev.observed_at_ms < a.nowMs - a.plan.max_evidence_age_ms) {
    return refuse("evidence-stale", `evidence observed at ${ev.observed_at_ms} is too old`);
  }
  if (a.plan.approved_at_ms === null || ev.observed_at_ms < a.plan.approved_at_ms) {
    return refuse("evidence-stale", "evidence was taken before the approval");
  }
  if (ev.digest !== a.step.preDigest) {
    return refuse("evidence-digest-mismatch", `evidence digest ${ev.digest} is not the bound one`);
  }
  const newer = await tx.selectFrom("observations").select(["id", "digest"])
    .where("machine", "=", a.step.machine).where("basis", ">", ev.basis)
    .where("digest", "!=", ev.digest).where("purpose", "!=", "health").executeTakeFirst();
  if (newer) return refuse("evidence-contradicted", `newer observation ${newer.id} differs`);
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

/** Comparisons 1, 2, 3 and 6, shared by commitment and attempt. */
export async function checkAuthority(
  tx: Tx,
  a: {
    plan: PlanTable | undefined;
    stepKey: string;
    inst: InstallationTable;
    evidenceId: string;
    nowMs: number;
  },
): Promise<{ refused: Refused } | { step: StepBinding; plan: PlanTable }> {
  const r1 = checkApproval(a.plan, a.inst, a.nowMs);
  if (r1 || !a.plan) return { refused: r1 ?? refuse("plan-unknown", "no plan") };
  const steps = JSON.parse(a.plan.steps_json) as StepBinding[];
  const step = steps.find((s) => s.step === a.stepKey);
  if (!step) return { refused: refuse("binding-changed", `plan has no step ${a.stepKey}`) };
  const r2 = await checkBinding(tx, a.plan);
  if (r2) return { refused: r2 };
  const r3 = await checkEvidence(tx, {
    plan: a.plan,
    step,
    evidenceId: a.evidenceId,
    nowMs: a.nowMs,
  });
  if (r3) return { refused: r3 };
  const r6 = await checkGate(tx, step.machine, a.inst);
  if (r6) return { refused: r6 };
  return { step, plan: a.plan };
}
