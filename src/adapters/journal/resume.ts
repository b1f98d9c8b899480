/**
 * Resume after a takeover (docs/recovery.md#resume-after-a-takeover): the new owner of an operation
 * taken over in flight records what a fresh reading established about each earlier owner's
 * unaccounted attempt, then classifies the operation so that the step's next attempt transaction
 * may admit it (`unresolved` → `sending`, as a safe retry is admitted). Resume is not rerun:
 * accepted phases are never sent again, and only a phase whose effect the API server decides may
 * be classified from a reading.
 */
import {
  IN_FLIGHT_STATES,
  isOperatorStop,
  OBSERVABLE_PHASES,
  type Phase,
} from "../../domain/operation.ts";
import type { AttemptReading, OperationRecord, ResumeInput } from "../../ports/journal.ts";
import { checkApproval, checkGate } from "./comparisons.ts";
import { assertOwner, type Ctx, machineEvent } from "./context.ts";
import { fail, loadAttempts, loadOperation, loadPlan, tokenText, toOperation } from "./rows.ts";
import type { AttemptTable, OperationTable } from "./schema.ts";

/** The outcomes a reading may record for each observable phase. */
const OUTCOMES: Record<(typeof OBSERVABLE_PHASES)[number], readonly AttemptReading["outcome"][]> = {
  cordon: ["observed-in-effect", "observed-absent"],
  drain: ["observed-in-effect", "observed-incomplete"],
};

/** Classes an attempt may already carry for the step to go on: an acceptance or an earlier resume's. */
const CONTINUABLE = new Set([
  "accepted",
  "observed-in-effect",
  "observed-absent",
  "observed-incomplete",
]);

/** How the operation last became `unresolved`, from its timeline (seq order). */
async function lastEntry(
  ctx: Ctx,
  op: OperationTable,
): Promise<"takeover" | "stopped" | "halt" | "human" | "none"> {
  const events = await ctx.tx.selectFrom("events").select(["kind", "actor", "body"])
    .where("operation_id", "=", op.id).where("kind", "in", ["transition", "ownership"])
    .orderBy("seq").execute();
  let last: "takeover" | "stopped" | "halt" | "human" | "none" = "none";
  for (const e of events) {
    const body = JSON.parse(e.body) as Record<string, unknown>;
    if (e.kind === "transition" && body["to"] === "unresolved") {
      // An operator's stop left the step in flight, unclassified: it stands as a takeover would.
      last = isOperatorStop(body["reason"]) ? "stopped" : "halt";
    }
    if (e.kind !== "ownership") continue;
    // A recovery-admin's takeover hands the operation to a person: never resumed automatically.
    if (!e.actor.endsWith(" (controller)")) last = "human";
    else if (
      last !== "human" &&
      (IN_FLIGHT_STATES as readonly unknown[]).includes(body["stateBefore"]) &&
      body["stateAfter"] === "unresolved"
    ) last = "takeover";
  }
  return last;
}

function checkReading(
  op: OperationTable,
  att: AttemptTable,
  reading: AttemptReading,
  no: (why: string) => never,
): void {
  const phase = att.phase as Phase;
  const allowed = (OUTCOMES as Record<string, readonly string[] | undefined>)[phase];
  if (!allowed) no(`attempt ${att.number} (${phase}) cannot be classified from a reading`);
  if (!allowed.includes(reading.outcome)) {
    no(`a ${phase} attempt cannot be ${reading.outcome}`);
  }
  // Only an earlier owner's request is classified by reading; this owner's own awaits its answer.
  if (att.owner_gen >= op.owner_gen && att.owner_epoch === op.owner_epoch) {
    no(`attempt ${att.number} is this owner's own; it is answered, not read`);
  }
}

/** The resume act; see the module comment. */
export async function resumeTx(ctx: Ctx, input: ResumeInput): Promise<OperationRecord> {
  const op = await loadOperation(ctx.tx, input.operationId);
  assertOwner(ctx, op, input.token);
  const no = (why: string): never =>
    fail("ResumeRefused", `operation ${op.id} not resumed: ${why}`, { operation: op.id });
  if (op.state !== "unresolved") no(`it is ${op.state}`);
  const entry = await lastEntry(ctx, op);
  // A stopped executor's own attempts are still its own until a new owner takes it over (below).
  if (entry !== "takeover" && entry !== "stopped") {
    no(
      entry === "halt"
        ? "its executor classified it unresolved"
        : entry === "human"
        ? "a recovery-admin took it over"
        : "it was never taken over in flight",
    );
  }
  const atts = await loadAttempts(ctx.tx, op.id);
  const readings = new Map(input.readings.map((r) => [r.attemptId, r]));
  if (readings.size !== input.readings.length) no("an attempt is read twice");
  for (const att of atts) {
    const reading = readings.get(att.id);
    readings.delete(att.id);
    if (att.accounted_by === null) {
      if (!reading) {
        return no(`attempt ${att.number} (${att.phase}) is unaccounted and was not read`);
      }
      checkReading(op, att, reading, no);
      continue;
    }
    if (reading) no(`attempt ${att.number} is already accounted`);
    if (att.accounted_by !== "response" || !CONTINUABLE.has(att.response_class ?? "")) {
      no(
        `attempt ${att.number} (${att.phase}) was answered ${att.response_class ?? "by recovery"}`,
      );
    }
  }
  if (readings.size > 0) no(`no attempt ${[...readings.keys()].join(", ")} of this operation`);
  const plan = await loadPlan(ctx.tx, op.plan_digest);
  const r1 = checkApproval(plan, ctx.inst, input.nowMs);
  if (r1) no(r1.detail);
  const gate = await checkGate(ctx.tx, op.machine, ctx.inst);
  if (gate) no(gate.detail);
  const actor = tokenText(input.token);
  for (const r of input.readings) {
    const att = atts.find((a) => a.id === r.attemptId)!;
    const revision = await machineEvent(ctx, {
      machine: op.machine,
      kind: "response",
      operationId: op.id,
      actor,
      body: {
        attempt: att.id,
        class: r.outcome,
        by: "reading",
        evidence: r.evidence,
        accounts: true,
      },
      nowMs: input.nowMs,
    });
    const updated = await ctx.tx.updateTable("attempts").set({
      response_class: r.outcome,
      response_detail: `read after takeover: ${JSON.stringify(r.evidence)}`.slice(0, 2000),
      response_at_ms: input.nowMs,
      accounted_by: "response",
      accounted_revision: revision,
    }).where("id", "=", att.id).where("accounted_by", "is", null).executeTakeFirst();
    if (updated.numUpdatedRows !== 1n) no(`attempt ${att.number} was accounted meanwhile`);
  }
  const revision = await machineEvent(ctx, {
    machine: op.machine,
    kind: "classification",
    operationId: op.id,
    actor,
    body: { class: "resume", readings: input.readings.map((r) => r.attemptId) },
    nowMs: input.nowMs,
  });
  await ctx.tx.updateTable("operations")
    .set({ safe_retry_revision: revision, safe_retry_gen: op.owner_gen })
    .where("id", "=", op.id).where("owner_gen", "=", input.token.gen).execute();
  return toOperation(await loadOperation(ctx.tx, op.id));
}
