/** The first journal schema: ER records, fencing columns, scope/slot indexes, the event chain. */
import { type Kysely, sql } from "kysely";

const HOLDING = "('committed','sending','verifying','unresolved')";

const STATEMENTS = [
  `CREATE TABLE installation (id INTEGER PRIMARY KEY CHECK (id = 1), epoch TEXT NOT NULL,
    recovery_mode INTEGER NOT NULL DEFAULT 0, created_at_ms INTEGER NOT NULL)`,
  `CREATE TABLE epochs (epoch TEXT PRIMARY KEY, minted_at_ms INTEGER NOT NULL,
    reason TEXT NOT NULL)`,
  `CREATE TABLE machines (machine TEXT PRIMARY KEY, revision_counter INTEGER NOT NULL DEFAULT 0,
    frozen INTEGER NOT NULL DEFAULT 0)`,
  `CREATE TABLE plans (digest TEXT PRIMARY KEY, name TEXT NOT NULL, kind TEXT NOT NULL,
    cluster TEXT NOT NULL, state TEXT NOT NULL, approval_epoch TEXT, approved_at_ms INTEGER,
    expires_at_ms INTEGER NOT NULL, max_attempts INTEGER NOT NULL,
    max_evidence_age_ms INTEGER NOT NULL, first_seen_commit TEXT NOT NULL,
    first_seen_at_ms INTEGER NOT NULL, bytes TEXT NOT NULL, signatures TEXT NOT NULL,
    steps_json TEXT NOT NULL)`,
  `CREATE TABLE plan_names (name TEXT PRIMARY KEY, digest TEXT NOT NULL REFERENCES plans(digest))`,
  `CREATE TABLE operations (id TEXT PRIMARY KEY, plan_digest TEXT NOT NULL REFERENCES plans(digest),
    step TEXT NOT NULL, machine TEXT NOT NULL, cluster TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('committed','sending','verifying','completed','rejected',
      'failed','cancelled','unresolved')),
    owner TEXT NOT NULL, owner_gen INTEGER NOT NULL, owner_epoch TEXT NOT NULL,
    owner_since_ms INTEGER NOT NULL, attempts_used INTEGER NOT NULL DEFAULT 0,
    safe_retry_revision INTEGER, safe_retry_gen INTEGER, created_at_ms INTEGER NOT NULL)`,
  // Comparison 0: one operation per plan step.
  `CREATE UNIQUE INDEX operations_plan_step ON operations (plan_digest, step)`,
  // Comparison 4: the machine scope; comparison 5: the cluster rollout slot (limit 1).
  `CREATE UNIQUE INDEX operations_machine_scope ON operations (machine) WHERE state IN ${HOLDING}`,
  `CREATE UNIQUE INDEX operations_rollout_slot ON operations (cluster) WHERE state IN ${HOLDING}`,
  `CREATE TABLE attempts (id TEXT PRIMARY KEY, operation_id TEXT NOT NULL REFERENCES operations(id),
    number INTEGER NOT NULL, phase TEXT NOT NULL, request_digest TEXT NOT NULL, route TEXT NOT NULL,
    owner TEXT NOT NULL, owner_gen INTEGER NOT NULL, owner_epoch TEXT NOT NULL,
    evidence_id TEXT NOT NULL, sent_at_ms INTEGER NOT NULL,
    transport_deadline_ms INTEGER NOT NULL, verification_deadline_ms INTEGER NOT NULL,
    class_revision INTEGER, response_class TEXT, response_detail TEXT, response_at_ms INTEGER,
    accounted_by TEXT CHECK (accounted_by IN ('response','recovery')),
    accounted_revision INTEGER, UNIQUE (operation_id, number))`,
  // Phase continuation asks "is any attempt of this operation unaccounted or not accepted?".
  `CREATE INDEX attempts_open ON attempts (operation_id)
    WHERE accounted_by IS NULL OR response_class IS NOT 'accepted'`,
  `CREATE TABLE observations (id TEXT PRIMARY KEY, machine TEXT NOT NULL, purpose TEXT NOT NULL,
    plan_digest TEXT, operation_id TEXT, basis INTEGER NOT NULL, revision INTEGER NOT NULL,
    digest TEXT NOT NULL, object_uid TEXT NOT NULL, resource_version TEXT NOT NULL,
    resource_version_at_start TEXT, observed_generation INTEGER NOT NULL,
    observed_at_ms INTEGER NOT NULL, summary TEXT NOT NULL)`,
  `CREATE INDEX observations_machine_basis ON observations (machine, basis)`,
  `CREATE TABLE phases (id TEXT PRIMARY KEY, operation_id TEXT NOT NULL REFERENCES operations(id),
    phase TEXT NOT NULL, kind TEXT NOT NULL CHECK (kind IN ('intent','fact')),
    at_ms INTEGER NOT NULL, detail TEXT NOT NULL, revision INTEGER NOT NULL)`,
  `CREATE TABLE health_rounds (id TEXT PRIMARY KEY, cluster TEXT NOT NULL, operation_id TEXT,
    purpose TEXT NOT NULL, started_at_ms INTEGER NOT NULL, finished_at_ms INTEGER NOT NULL,
    verdict TEXT NOT NULL)`,
  `CREATE TABLE health_results (round_id TEXT NOT NULL REFERENCES health_rounds(id),
    idx INTEGER NOT NULL, binding TEXT NOT NULL, outcome TEXT NOT NULL, reason TEXT NOT NULL,
    object_uid TEXT, resource_version TEXT, observed_at_ms INTEGER NOT NULL,
    PRIMARY KEY (round_id, idx))`,
  `CREATE TABLE recoveries (id TEXT PRIMARY KEY, operation_id TEXT NOT NULL, attempt_id TEXT,
    kind TEXT NOT NULL, actor TEXT NOT NULL, evidence TEXT NOT NULL, explanation TEXT,
    observation_id TEXT, at_ms INTEGER NOT NULL, epoch TEXT NOT NULL)`,
  `CREATE TABLE recovery_scopes (machine TEXT NOT NULL, epoch TEXT NOT NULL, state TEXT NOT NULL,
    at_ms INTEGER NOT NULL, PRIMARY KEY (machine, epoch))`,
  `CREATE TABLE events (seq INTEGER PRIMARY KEY, at_ms INTEGER NOT NULL, kind TEXT NOT NULL,
    machine TEXT, revision INTEGER, operation_id TEXT, epoch TEXT NOT NULL, actor TEXT NOT NULL,
    body TEXT NOT NULL, prev_hash TEXT NOT NULL, hash TEXT NOT NULL)`,
  // The timeline is append-only; rewriting it needs dropping these first, which verify detects.
  `CREATE TRIGGER events_no_update BEFORE UPDATE ON events
    BEGIN SELECT RAISE(ABORT, 'events are append-only'); END`,
  `CREATE TRIGGER events_no_delete BEFORE DELETE ON events
    BEGIN SELECT RAISE(ABORT, 'events are append-only'); END`,
];

/** Applies migration 0001. */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const s of STATEMENTS) await sql.raw(s).execute(db);
}
