/**
 * The attempt transaction on PostgreSQL in two round trips (docs/operation-model.md#comparisons):
 * the same read as libSQL (`loadForAttempt`: every comparison's inputs and the timeline head, one
 * SELECT), judged by the same code, then ONE statement that PostgreSQL runs atomically:
 *
 * - `lk` takes the journal's write exclusion (the installation row, `FOR UPDATE`, the lock every
 *   interactive write transaction takes first), so no writer that is mid-transaction ever sees
 *   this attempt appear under it;
 * - `upd` is the fenced UPDATE (comparison 7): owner, generation and epoch each compared, the
 *   epoch against the installation row just locked, with the state condition and the budget;
 * - the attempt row, the machine's revision and the timeline event are written only from what
 *   `upd` returned, so nothing is written when the fence refuses;
 * - the event takes the sequence number after the head that was read. Every journal act appends
 *   an event, so if anything was written since the read the primary key is taken, the whole
 *   statement fails (unique violation) and nothing of it remains; the attempt is then read and
 *   decided again. What the comparisons saw is exactly what the statement commits on.
 *
 * A refusal is never decided here: the caller decides and names it under the write exclusion.
 */
import { type CompiledQuery, type Kysely, type RawBuilder, sql } from "kysely";
import type { AttemptInput, OwnerToken } from "../../../ports/journal.ts";
import {
  attemptEventBody,
  attemptReadQuery,
  attemptRow,
  type BatchedAttempt,
  CONTINUABLE,
  judgeAttempt,
  parseAttemptRead,
} from "../attempt.ts";
import { canonicalJson, GENESIS_HASH, rowHash } from "../hash_chain.ts";
import { fail, toAttempt, tokenText } from "../rows.ts";
import type { EventTable, JournalDB, OperationTable } from "../schema.ts";

/** PostgreSQL's SQLSTATE for a unique violation: a sequence or attempt number taken meanwhile. */
export const UNIQUE_VIOLATION = "23505";

/** A parameter with its column's type (an INSERT … SELECT does not infer it from the column). */
function typed(v: string | number | null, type: "bigint" | "text"): RawBuilder<unknown> {
  return type === "bigint" ? sql`${v}::bigint` : sql`${v}::text`;
}

/**
 * Comparison 7 inside the statement: the operation row as it is when the lock is held (a row
 * changed meanwhile is re-read by PostgreSQL before the UPDATE decides), the epoch compared with
 * the locked installation row's.
 */
function fencedUpdate(op: OperationTable, t: OwnerToken, maxAttempts: number) {
  return sql`UPDATE operations o SET state = 'sending', attempts_used = o.attempts_used + 1,
      safe_retry_revision = NULL, safe_retry_gen = NULL
    FROM lk
    WHERE o.id = ${op.id} AND o.owner = ${t.owner} AND o.owner_gen = ${t.gen}
      AND o.owner_epoch = ${t.epoch} AND o.owner_epoch = lk.epoch
      AND o.attempts_used < ${maxAttempts}
      AND (o.state = 'committed'
        OR (o.state = 'unresolved' AND o.safe_retry_revision IS NOT NULL
          AND o.safe_retry_gen = o.owner_gen)
        OR (o.state = 'sending' AND NOT EXISTS (SELECT 1 FROM attempts a
          WHERE a.operation_id = o.id
            AND (a.accounted_by IS NULL OR a.response_class NOT IN ${CONTINUABLE}
              OR a.response_class IS NULL))))
    RETURNING o.id`;
}

const BIGINT_COLUMNS = new Set([
  "number",
  "owner_gen",
  "sent_at_ms",
  "transport_deadline_ms",
  "verification_deadline_ms",
  "class_revision",
  "response_at_ms",
  "accounted_revision",
  "seq",
  "at_ms",
  "revision",
]);

function values(row: Record<string, string | number | null>) {
  const cols = Object.keys(row);
  return {
    cols: sql.join(cols.map((c) => sql.ref(c))),
    vals: sql.join(
      cols.map((c) => typed(row[c] ?? null, BIGINT_COLUMNS.has(c) ? "bigint" : "text")),
    ),
  };
}

/** The two-round-trip attempt transaction on PostgreSQL (see the module comment). */
export async function pgAttemptBatched(
  a: {
    /** Compiles the statements. */
    db: Kysely<JournalDB>;
    /** Runs a compiled statement (as a prepared statement: both texts are fixed). */
    query: <R>(q: CompiledQuery<R>) => Promise<R[]>;
    newId: (prefix: string) => string;
    point: (name: string) => Promise<void>;
  },
  input: AttemptInput,
): Promise<BatchedAttempt> {
  const rows = await a.query(attemptReadQuery(input.operationId, input.evidenceId).compile(a.db));
  const read = parseAttemptRead(rows[0], input.operationId);
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
  const att = values(row);
  const ev = values({ ...event, hash });
  const statement = sql<{ updated: number; counted: number; appended: number }>`
    WITH lk AS (SELECT epoch FROM installation WHERE id = 1 FOR UPDATE),
    upd AS (${fencedUpdate(op, t, judged.plan.max_attempts)}),
    ins AS (INSERT INTO attempts (${att.cols}) SELECT ${att.vals} FROM upd RETURNING id),
    mach AS (UPDATE machines SET revision_counter = ${revision}
      WHERE machine = ${op.machine} AND revision_counter = ${read.machineRevision}
        AND EXISTS (SELECT 1 FROM ins) RETURNING machine),
    ev AS (INSERT INTO events (${ev.cols}) SELECT ${ev.vals} FROM ins RETURNING seq)
    SELECT (SELECT count(*) FROM upd) AS updated, (SELECT count(*) FROM mach) AS counted,
      (SELECT count(*) FROM ev) AS appended`;
  // The statement is the commit: a crash before it leaves nothing, after it everything.
  await a.point("attempt:before-commit");
  let result;
  try {
    result = (await a.query(statement.compile(a.db)))[0]!;
  } catch (e) {
    // A sequence number (or attempt number) taken since the read: another writer was first.
    if ((e as { code?: string }).code === UNIQUE_VIOLATION) return { kind: "raced" };
    throw e;
  }
  // The fence refused on current state: decide and name it again under the write exclusion.
  if (Number(result.updated) !== 1) return { kind: "decide-under-lock" };
  if (Number(result.counted) !== 1 || Number(result.appended) !== 1) {
    fail("Internal", `attempt ${row.id}: the machine counter or the timeline moved under it`);
  }
  return { kind: "done", attempt: toAttempt(row) };
}
