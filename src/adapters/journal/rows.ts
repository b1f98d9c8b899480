/** Row ↔ record conversion and small shared helpers of the libSQL journal. */
import { type Kysely, sql, type Transaction } from "kysely";
import { shape } from "./compiled.ts";
import { CairnError } from "../../domain/errors.ts";
import type { Reason } from "../../domain/reasons.ts";
import type {
  OperationState,
  Phase,
  PostconditionReading,
  ResponseClass,
} from "../../domain/operation.ts";
import type {
  Actor,
  AttemptRecord,
  ObservationPurpose,
  ObservationRecord,
  OperationRecord,
  OwnerToken,
  PlanRecord,
  PlanState,
  StepBinding,
} from "../../ports/journal.ts";
import type {
  AttemptTable,
  JournalDB,
  ObservationTable,
  OperationTable,
  PlanTable,
} from "./schema.ts";

/** Throws a CairnError with `reason`. */
export function fail(
  reason: Reason,
  message: string,
  details?: Record<string, string | number | boolean>,
): never {
  throw new CairnError({ reason, message, ...(details ? { details } : {}) });
}

/** `identity (role)` as stored on the timeline. */
export function actorText(a: Actor): string {
  return `${a.identity} (${a.role})`;
}

/** `owner/gen@epoch` as stored on the timeline. */
export function tokenText(t: OwnerToken): string {
  return `${t.owner}/${t.gen}@${t.epoch}`;
}

export function toPlan(r: PlanTable): PlanRecord {
  return {
    digest: r.digest,
    name: r.name,
    kind: r.kind,
    cluster: r.cluster,
    state: r.state as PlanState,
    approvalEpoch: r.approval_epoch,
    approvedAtMs: r.approved_at_ms,
    expiresAtMs: r.expires_at_ms,
    maxAttempts: r.max_attempts,
    maxEvidenceAgeMs: r.max_evidence_age_ms,
    firstSeenCommit: r.first_seen_commit,
    firstSeenAtMs: r.first_seen_at_ms,
    bytes: r.bytes,
    signatures: r.signatures,
    steps: JSON.parse(r.steps_json) as StepBinding[],
  };
}

export function toOperation(r: OperationTable): OperationRecord {
  return {
    id: r.id,
    planDigest: r.plan_digest,
    step: r.step,
    machine: r.machine,
    cluster: r.cluster,
    state: r.state as OperationState,
    owner: r.owner,
    ownerGen: r.owner_gen,
    ownerEpoch: r.owner_epoch,
    attemptsUsed: r.attempts_used,
    safeRetryRevision: r.safe_retry_revision,
    createdAtMs: r.created_at_ms,
  };
}

export function toAttempt(r: AttemptTable): AttemptRecord {
  return {
    id: r.id,
    operationId: r.operation_id,
    number: r.number,
    phase: r.phase as Phase,
    requestDigest: r.request_digest,
    route: r.route,
    ownerGen: r.owner_gen,
    ownerEpoch: r.owner_epoch,
    evidenceId: r.evidence_id,
    sentAtMs: r.sent_at_ms,
    transportDeadlineMs: r.transport_deadline_ms,
    verificationDeadlineMs: r.verification_deadline_ms,
    classRevision: r.class_revision,
    responseClass: r.response_class as ResponseClass | null,
    accountedBy: r.accounted_by as "response" | "recovery" | null,
    accountedRevision: r.accounted_revision,
  };
}

export function toObservation(r: ObservationTable): ObservationRecord {
  return {
    id: r.id,
    machine: r.machine,
    purpose: r.purpose as ObservationPurpose,
    ...(r.plan_digest !== null ? { planDigest: r.plan_digest } : {}),
    ...(r.operation_id !== null ? { operationId: r.operation_id } : {}),
    basis: r.basis,
    revision: r.revision,
    digest: r.digest,
    objectUid: r.object_uid,
    resourceVersion: r.resource_version,
    ...(r.resource_version_at_start !== null
      ? { resourceVersionAtStart: r.resource_version_at_start }
      : {}),
    observedGeneration: r.observed_generation,
    observedAtMs: r.observed_at_ms,
    summary: r.summary,
    ...(r.postcondition !== null ? { postcondition: r.postcondition as PostconditionReading } : {}),
    ...(r.machine_identity !== null ? { machineIdentity: r.machine_identity } : {}),
  };
}

type Tx = Transaction<JournalDB>;

const NEXT_REVISION = shape(
  ["machine"],
  (_tx, { machine }: { machine: string }) =>
    sql<{ revision_counter: number; seq: number | null; hash: string | null }>`
    INSERT INTO machines (machine, revision_counter, frozen) VALUES (${machine}, 1, 0)
    ON CONFLICT (machine) DO UPDATE SET revision_counter = machines.revision_counter + 1
    RETURNING revision_counter,
      (SELECT seq FROM events ORDER BY seq DESC LIMIT 1) AS seq,
      (SELECT hash FROM events ORDER BY seq DESC LIMIT 1) AS hash`,
);

/**
 * Allocates the next revision of `machine`'s counter inside `tx` (creating the machine row) and,
 * in the same statement, reads the event chain's head.
 */
export async function nextRevision(
  tx: Tx,
  machine: string,
): Promise<{ revision: number; head: { seq: number; hash: string } | null }> {
  const r = await NEXT_REVISION.execute(tx, { machine });
  const row = r.rows[0]!;
  const head = row.seq === null || row.hash === null ? null : { seq: row.seq, hash: row.hash };
  return { revision: row.revision_counter, head };
}

const OPERATION = shape(
  ["id"],
  (tx, p: { id: string }) => tx.selectFrom("operations").selectAll().where("id", "=", p.id),
);
const PLAN = shape(
  ["digest"],
  (tx, p: { digest: string }) => tx.selectFrom("plans").selectAll().where("digest", "=", p.digest),
);
const ATTEMPTS = shape(
  ["op"],
  (tx, p: { op: string }) =>
    tx.selectFrom("attempts").selectAll().where("operation_id", "=", p.op).orderBy("number"),
);

/** The operation row `id`, read with a statement compiled once (`compiled.ts`). */
export function findOperation(
  tx: Kysely<JournalDB>,
  id: string,
): Promise<OperationTable | undefined> {
  return OPERATION.first(tx, { id });
}

export async function loadOperation(tx: Tx, id: string): Promise<OperationTable> {
  const r = await OPERATION.first(tx, { id });
  return r ?? fail("OperationNotFound", `no operation ${id} in the journal`, { operation: id });
}

export async function loadPlan(
  tx: Kysely<JournalDB>,
  digest: string,
): Promise<PlanTable | undefined> {
  return await PLAN.first(tx, { digest });
}

export async function loadAttempts(tx: Tx, operationId: string): Promise<AttemptTable[]> {
  return await ATTEMPTS.rows(tx, { op: operationId });
}

/** True when every attempt is accounted for (vacuously true with none). */
export function allAccounted(atts: readonly AttemptTable[]): boolean {
  return atts.every((a) => a.accounted_by !== null);
}

/** The highest revision at which any attempt was accounted, or 0. */
export function lastAccounting(atts: readonly AttemptTable[]): number {
  return atts.reduce((m, a) => Math.max(m, a.accounted_revision ?? 0), 0);
}
