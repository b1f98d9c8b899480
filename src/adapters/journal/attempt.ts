/**
 * The attempt transaction (docs/operation-model.md#comparisons): comparisons 1–3, 6, 8 and 9 on one
 * consistent read, then comparison 7 (owner, generation, epoch, state) inside the conditional
 * UPDATE, then the attempt row and its timeline event.
 *
 * Two ways to run it, deciding the same thing with the same SQL:
 * - `attemptBatched`, the hot path, costs two round trips: one SELECT reads everything the
 *   comparisons need plus the timeline's head; one write batch (BEGIN IMMEDIATE … COMMIT in one
 *   call of the driver) runs the fenced UPDATE, then inserts the attempt, advances the machine counter and
 *   appends the event only if the UPDATE matched. The event takes the sequence number after the
 *   head that was read: every journal act appends an event, so if anything was written between the
 *   read and the batch the insert collides, the whole batch rolls back, and the read is repeated.
 *   What the comparisons saw is therefore exactly what the batch commits on.
 * - `attemptTx`, the interactive transaction, used for refusals (decided and named under the
 *   write lock) and whenever the batch cannot be used.
 */
import type { BatchStatement, WriteBatcher } from "./native_libsql.ts";
import { type Kysely, sql } from "kysely";
import { OBSERVED_CLASSES } from "../../domain/operation.ts";
import type { AttemptInput, AttemptRecord, OwnerToken, Refused } from "../../ports/journal.ts";
import { authorityColumns, type AuthorityRow, judgeAuthority, refuse } from "./comparisons.ts";
import { type Ctx, machineEvent } from "./context.ts";
import { canonicalJson, GENESIS_HASH, rowHash } from "./hash_chain.ts";
import { fail, toAttempt, tokenText } from "./rows.ts";
import type {
  EventTable,
  InstallationTable,
  JournalDB,
  OperationTable,
  PlanTable,
} from "./schema.ts";

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

/**
 * Response classes after which a step's next phase may go on from `sending`: an acceptance, or a
 * reading a resume recorded (written only together with the classification that admits the step
 * to go on; docs/recovery.md#resume-after-a-takeover). A literal, so the statement's text never varies.
 */
export const CONTINUABLE = sql.raw(
  `(${["accepted", ...OBSERVED_CLASSES].map((c) => `'${c}'`).join(",")})`,
);

/** Timeline kinds that void a safe-to-retry classification recorded before them (comparison 8). */
const RECLASSIFYING = ["response", "ownership", "classification", "accounting"] as const;

/** Everything an attempt is decided on, read by one statement. */
export interface AttemptRead {
  readonly inst: InstallationTable;
  readonly op: OperationTable;
  readonly plan: PlanTable | undefined;
  readonly authority: AuthorityRow;
  /** The first reclassifying event after the safe-to-retry classification, if any. */
  readonly later: { seq: number; kind: string } | null;
  /** The timeline's head and the machine's revision counter, as of this read. */
  readonly head: { seq: number; hash: string } | null;
  readonly machineRevision: number | null;
}

/** Installation, operation, plan, comparison 1–3/6/8 inputs and the chain head: one SELECT. */
export async function loadForAttempt(
  db: Kysely<JournalDB>,
  operationId: string,
  evidenceId: string,
): Promise<AttemptRead> {
  const r = await attemptReadQuery(operationId, evidenceId).execute(db);
  return parseAttemptRead(r.rows[0], operationId);
}

/** The row `attemptReadQuery` returns. */
export type AttemptReadRow =
  & OperationTable
  & AuthorityRow
  & PrefixedPlan
  & {
    inst_epoch: string;
    inst_recovery_mode: number;
    inst_created_at_ms: number;
    later_seq: number | null;
    later_kind: string | null;
    head_seq: number | null;
    head_hash: string | null;
    machine_rev: number | null;
  };

/**
 * The attempt's one read as a statement (its text never varies, only its parameters, so a
 * store may keep it prepared).
 */
export function attemptReadQuery(operationId: string, evidenceId: string) {
  // Plain prefixed columns rather than a JSON object, so the statement is the same SQL on
  // libSQL and PostgreSQL.
  const planCols = sql.raw(PLAN_COLUMNS.map((c) => `pl.${c} AS p_${c}`).join(", "));
  const kinds = sql.join(RECLASSIFYING.map((k) => sql.lit(k)));
  return sql<AttemptReadRow>`
    SELECT o.*,
      i.epoch AS inst_epoch, i.recovery_mode AS inst_recovery_mode,
      i.created_at_ms AS inst_created_at_ms,
      ${planCols},
      ${authorityColumns(sql.ref("pl.name"), sql.ref("i.epoch"))},
      CASE WHEN o.safe_retry_revision IS NULL THEN NULL ELSE
        (SELECT l.seq FROM events l WHERE l.machine = o.machine
          AND l.revision > o.safe_retry_revision AND l.kind IN (${kinds})
          ORDER BY l.seq LIMIT 1) END AS later_seq,
      CASE WHEN o.safe_retry_revision IS NULL THEN NULL ELSE
        (SELECT l.kind FROM events l WHERE l.machine = o.machine
          AND l.revision > o.safe_retry_revision AND l.kind IN (${kinds})
          ORDER BY l.seq LIMIT 1) END AS later_kind,
      (SELECT seq FROM events ORDER BY seq DESC LIMIT 1) AS head_seq,
      (SELECT hash FROM events ORDER BY seq DESC LIMIT 1) AS head_hash,
      (SELECT revision_counter FROM machines m2 WHERE m2.machine = o.machine) AS machine_rev
    FROM operations o
      JOIN installation i ON i.id = 1
      LEFT JOIN plans pl ON pl.digest = o.plan_digest
      LEFT JOIN observations e ON e.id = ${evidenceId}
    WHERE o.id = ${operationId}`;
}

/** What the comparisons need, from the row `attemptReadQuery` returned (if any). */
export function parseAttemptRead(
  found: AttemptReadRow | undefined,
  operationId: string,
): AttemptRead {
  const row = found ?? fail("OperationNotFound", `no operation ${operationId} in the journal`);
  const { inst_epoch, inst_recovery_mode, inst_created_at_ms, ...r1 } = row;
  const { later_seq, later_kind, head_seq, head_hash, machine_rev, ...r2 } = r1;
  const { bound_digest, ev_id, ev_machine, ev_purpose, ev_plan, ev_digest, ev_at, ...r3 } = r2;
  const { newer_id, frozen, scope_state, ...r4 } = r3;
  const plan = unprefixPlan(r4);
  const op = Object.fromEntries(
    Object.entries(r4).filter(([k]) => !k.startsWith("p_")),
  ) as unknown as OperationTable;
  return {
    inst: {
      id: 1,
      epoch: inst_epoch,
      recovery_mode: inst_recovery_mode,
      created_at_ms: inst_created_at_ms,
    },
    op,
    plan,
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
    later: later_seq === null || later_kind === null ? null : { seq: later_seq, kind: later_kind },
    head: head_seq === null || head_hash === null ? null : { seq: head_seq, hash: head_hash },
    machineRevision: machine_rev,
  };
}

type PrefixedPlan = { [K in (typeof PLAN_COLUMNS)[number] as `p_${K}`]: PlanTable[K] | null };

/** The plan read under `p_` prefixes, or undefined when the LEFT JOIN found none. */
function unprefixPlan(row: PrefixedPlan): PlanTable | undefined {
  if (row.p_digest === null) return undefined;
  const plan: Record<string, unknown> = { bytes: "", signatures: "" };
  // the plan's bytes and signatures are not needed to decide an attempt
  for (const c of PLAN_COLUMNS) plan[c] = row[`p_${c}`];
  return plan as unknown as PlanTable;
}

/** Comparisons 1–3, 6, 9 and 8 on what was read; the plan when they all pass. */
export function judgeAttempt(
  input: AttemptInput,
  read: AttemptRead,
): Refused | { plan: PlanTable } {
  if (input.transportDeadlineMs > input.verificationDeadlineMs) {
    throw new RangeError("the transport deadline must not be after the verification deadline");
  }
  const { op, inst } = read;
  const t = input.token;
  const auth = judgeAuthority({
    plan: read.plan,
    stepKey: op.step,
    inst,
    nowMs: input.nowMs,
    row: read.authority,
  });
  // A caller from a superseded epoch is told so rather than which authority it lacks; the epoch
  // itself is compared by the UPDATE, which alone admits an attempt.
  if ("refused" in auth) return t.epoch !== inst.epoch ? epochRefusal(t) : auth.refused;
  if (op.attempts_used >= auth.plan.max_attempts) {
    return refuse("attempts-exhausted", `${op.attempts_used} of ${auth.plan.max_attempts} used`);
  }
  if (op.state === "unresolved" && op.safe_retry_revision !== null && read.later) {
    const { kind, seq } = read.later;
    return refuse("reclassified", `${kind} (event ${seq}) after the class`);
  }
  return { plan: auth.plan };
}

/**
 * Comparison 7: owner, generation, epoch and state are checked by the UPDATE itself, each on its
 * own (a restore can rewind generations so that only the epoch tells a stale token apart). A
 * phase continuation from `sending` (every earlier attempt accepted) is not a state transition.
 */
function fencedUpdate(op: OperationTable, t: OwnerToken, maxAttempts: number) {
  return sql`UPDATE operations SET state = 'sending', attempts_used = attempts_used + 1,
      safe_retry_revision = NULL, safe_retry_gen = NULL
    WHERE id = ${op.id} AND owner = ${t.owner} AND owner_gen = ${t.gen}
      AND owner_epoch = ${t.epoch}
      AND owner_epoch = (SELECT epoch FROM installation WHERE id = 1)
      AND attempts_used < ${maxAttempts}
      AND (state = 'committed'
        OR (state = 'unresolved' AND safe_retry_revision IS NOT NULL
          AND safe_retry_gen = owner_gen)
        OR (state = 'sending' AND NOT EXISTS (SELECT 1 FROM attempts a
          WHERE a.operation_id = operations.id
            AND (accounted_by IS NULL OR response_class NOT IN ${CONTINUABLE}
              OR response_class IS NULL))))`;
}

export function attemptRow(id: string, input: AttemptInput, op: OperationTable) {
  const t = input.token;
  return {
    id,
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
}

export function attemptEventBody(row: ReturnType<typeof attemptRow>, from: string) {
  return { attempt: row.id, number: row.number, phase: row.phase, from, to: "sending" };
}

/** The interactive attempt transaction (the caller runs it under `BEGIN IMMEDIATE`). */
export async function attemptTx(
  ctx: Ctx,
  input: AttemptInput,
  read: AttemptRead,
): Promise<{ ok: true; attempt: AttemptRecord } | Refused> {
  const judged = judgeAttempt(input, read);
  if ("ok" in judged) return judged;
  const { op, inst } = read;
  const t = input.token;
  const r = await fencedUpdate(op, t, judged.plan.max_attempts).execute(ctx.tx);
  if (r.numAffectedRows !== 1n) return fenceRefusal(op, t, inst);
  await ctx.point("attempt:operation-updated");
  const row = attemptRow(ctx.ids.newId("att"), input, op);
  await ctx.tx.insertInto("attempts").values(row).execute();
  await ctx.point("attempt:attempt-inserted");
  await machineEvent(ctx, {
    machine: op.machine,
    kind: "attempt",
    operationId: op.id,
    actor: tokenText(t),
    body: attemptEventBody(row, op.state),
    nowMs: input.nowMs,
  });
  await ctx.point("attempt:before-commit");
  return { ok: true, attempt: toAttempt(row) };
}

/**
 * What the batched path concluded: the attempt is recorded; or a comparison refused (on the read
 * or in the UPDATE) and the caller decides it again under the write lock (`attemptTx`), so a
 * refusal is always decided and named on current state; or the journal moved between the read
 * and the batch, which rolled back, and the read is repeated.
 */
export type BatchedAttempt =
  | { readonly kind: "done"; readonly attempt: AttemptRecord }
  | { readonly kind: "decide-under-lock" }
  | { readonly kind: "raced" };

/** The two-round-trip attempt transaction (see the module comment). */
export async function attemptBatched(
  a: {
    db: Kysely<JournalDB>;
    batcher: WriteBatcher;
    newId: (prefix: string) => string;
    point: (name: string) => Promise<void>;
  },
  input: AttemptInput,
): Promise<BatchedAttempt> {
  const read = await loadForAttempt(a.db, input.operationId, input.evidenceId);
  const judged = judgeAttempt(input, read);
  if ("ok" in judged || read.machineRevision === null) return { kind: "decide-under-lock" };
  const { op, inst } = read;
  const t = input.token;
  const row = attemptRow(a.newId("att"), input, op);
  const revision = read.machineRevision + 1;
  const event: Omit<EventTable, "hash"> = {
    seq: (read.head?.seq ?? 0) + 1,
    at_ms: input.nowMs,
    kind: "attempt",
    machine: op.machine,
    revision,
    operation_id: op.id,
    epoch: inst.epoch,
    actor: tokenText(t),
    body: canonicalJson(attemptEventBody(row, op.state)),
    prev_hash: read.head?.hash ?? GENESIS_HASH,
  };
  const hash = await rowHash(event);
  const written = sql`EXISTS (SELECT 1 FROM attempts WHERE id = ${row.id})`;
  const cols = Object.keys(row) as (keyof typeof row)[];
  const statements = [
    fencedUpdate(op, t, judged.plan.max_attempts),
    // The rest happens only when the fenced UPDATE matched (changes() is that UPDATE's count).
    sql`INSERT INTO attempts (${sql.join(cols.map((c) => sql.ref(c)))})
      SELECT ${sql.join(cols.map((c) => sql`${row[c]}`))} WHERE changes() = 1`,
    sql`UPDATE machines SET revision_counter = ${revision}
      WHERE machine = ${op.machine} AND revision_counter = ${read.machineRevision} AND ${written}`,
    // seq is the primary key: taken by any act since the read, it aborts the whole batch.
    sql`INSERT INTO events (seq, at_ms, kind, machine, revision, operation_id, epoch, actor, body,
        prev_hash, hash)
      SELECT ${event.seq}, ${event.at_ms}, ${event.kind}, ${event.machine}, ${event.revision},
        ${event.operation_id}, ${event.epoch}, ${event.actor}, ${event.body}, ${event.prev_hash},
        ${hash} WHERE ${written}`,
  ].map((q): BatchStatement => {
    const c = q.compile(a.db);
    return { sql: c.sql, args: c.parameters };
  });
  // The batch is the commit: a crash before it leaves nothing, after it everything.
  await a.point("attempt:before-commit");
  let results;
  try {
    results = await a.batcher.batch(statements);
  } catch (e) {
    // A sequence number (or attempt number) taken since the read: another process wrote.
    if ((e as { code?: string }).code?.startsWith("SQLITE_CONSTRAINT")) return { kind: "raced" };
    throw e;
  }
  // The fence refused on current state: decide and name it again under the write lock.
  if (results[0]!.rowsAffected !== 1) return { kind: "decide-under-lock" };
  if (results[2]!.rowsAffected !== 1 || results[3]!.rowsAffected !== 1) {
    fail(
      "Internal",
      `attempt ${row.id}: the machine counter or the timeline moved under the batch`,
    );
  }
  return { kind: "done", attempt: toAttempt(row) };
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
