/**
 * The journal's schema on PostgreSQL: the same six migrations as libSQL (`../migrations/`), the
 * same tables, columns, constraints and partial indexes, in PostgreSQL's dialect. Integers are
 * BIGINT (times are milliseconds since the epoch); text sorts bytewise (`COLLATE "C"`, as SQLite
 * does), so reads ordered by an id or a step name come out the same on both stores. The
 * timeline's append-only rule is a trigger on UPDATE, DELETE and TRUNCATE.
 *
 * Migrations run one version per transaction under a transaction-scoped advisory lock, so two
 * processes opening a new journal at once apply each version exactly once.
 */
import { type Kysely, sql } from "kysely";
import { assertKnownSchema, LATEST_SCHEMA } from "../migrations/mod.ts";

/** Text compared and ordered bytewise, like SQLite's default. */
const T = `TEXT COLLATE "C"`;
const I = "BIGINT";
const HOLDING = "('committed','sending','verifying','unresolved')";

/** The advisory lock key every journal migration and creation takes (`cairn` in ASCII). */
export const MIGRATION_LOCK = 0x636169726e;

const V1 = [
  `CREATE TABLE installation (id ${I} PRIMARY KEY CHECK (id = 1), epoch ${T} NOT NULL,
    recovery_mode ${I} NOT NULL DEFAULT 0, created_at_ms ${I} NOT NULL)`,
  `CREATE TABLE epochs (epoch ${T} PRIMARY KEY, minted_at_ms ${I} NOT NULL, reason ${T} NOT NULL)`,
  `CREATE TABLE machines (machine ${T} PRIMARY KEY, revision_counter ${I} NOT NULL DEFAULT 0,
    frozen ${I} NOT NULL DEFAULT 0)`,
  `CREATE TABLE plans (digest ${T} PRIMARY KEY, name ${T} NOT NULL, kind ${T} NOT NULL,
    cluster ${T} NOT NULL, state ${T} NOT NULL, approval_epoch ${T}, approved_at_ms ${I},
    expires_at_ms ${I} NOT NULL, max_attempts ${I} NOT NULL, max_evidence_age_ms ${I} NOT NULL,
    first_seen_commit ${T} NOT NULL, first_seen_at_ms ${I} NOT NULL, bytes ${T} NOT NULL,
    signatures ${T} NOT NULL, steps_json ${T} NOT NULL)`,
  `CREATE TABLE plan_names (name ${T} PRIMARY KEY, digest ${T} NOT NULL REFERENCES plans(digest))`,
  `CREATE TABLE operations (id ${T} PRIMARY KEY,
    plan_digest ${T} NOT NULL REFERENCES plans(digest), step ${T} NOT NULL,
    machine ${T} NOT NULL, cluster ${T} NOT NULL,
    state ${T} NOT NULL CHECK (state IN ('committed','sending','verifying','completed','rejected',
      'failed','cancelled','unresolved')),
    owner ${T} NOT NULL, owner_gen ${I} NOT NULL, owner_epoch ${T} NOT NULL,
    owner_since_ms ${I} NOT NULL, attempts_used ${I} NOT NULL DEFAULT 0,
    safe_retry_revision ${I}, safe_retry_gen ${I}, created_at_ms ${I} NOT NULL)`,
  // Comparison 0: one operation per plan step.
  `CREATE UNIQUE INDEX operations_plan_step ON operations (plan_digest, step)`,
  // Comparison 4: the machine scope; comparison 5: the cluster rollout slot (limit 1).
  `CREATE UNIQUE INDEX operations_machine_scope ON operations (machine) WHERE state IN ${HOLDING}`,
  `CREATE UNIQUE INDEX operations_rollout_slot ON operations (cluster) WHERE state IN ${HOLDING}`,
  `CREATE TABLE attempts (id ${T} PRIMARY KEY,
    operation_id ${T} NOT NULL REFERENCES operations(id), number ${I} NOT NULL,
    phase ${T} NOT NULL, request_digest ${T} NOT NULL, route ${T} NOT NULL, owner ${T} NOT NULL,
    owner_gen ${I} NOT NULL, owner_epoch ${T} NOT NULL, evidence_id ${T} NOT NULL,
    sent_at_ms ${I} NOT NULL, transport_deadline_ms ${I} NOT NULL,
    verification_deadline_ms ${I} NOT NULL, class_revision ${I}, response_class ${T},
    response_detail ${T}, response_at_ms ${I},
    accounted_by ${T} CHECK (accounted_by IN ('response','recovery')),
    accounted_revision ${I}, UNIQUE (operation_id, number))`,
  `CREATE INDEX attempts_open ON attempts (operation_id)
    WHERE accounted_by IS NULL OR response_class IS DISTINCT FROM 'accepted'`,
  `CREATE TABLE observations (id ${T} PRIMARY KEY, machine ${T} NOT NULL, purpose ${T} NOT NULL,
    plan_digest ${T}, operation_id ${T}, basis ${I} NOT NULL, revision ${I} NOT NULL,
    digest ${T} NOT NULL, object_uid ${T} NOT NULL, resource_version ${T} NOT NULL,
    resource_version_at_start ${T}, observed_generation ${I} NOT NULL,
    observed_at_ms ${I} NOT NULL, summary ${T} NOT NULL)`,
  `CREATE INDEX observations_machine_basis ON observations (machine, basis)`,
  `CREATE TABLE phases (id ${T} PRIMARY KEY, operation_id ${T} NOT NULL REFERENCES operations(id),
    phase ${T} NOT NULL, kind ${T} NOT NULL CHECK (kind IN ('intent','fact')),
    at_ms ${I} NOT NULL, detail ${T} NOT NULL, revision ${I} NOT NULL)`,
  `CREATE TABLE health_rounds (id ${T} PRIMARY KEY, cluster ${T} NOT NULL, operation_id ${T},
    purpose ${T} NOT NULL, started_at_ms ${I} NOT NULL, finished_at_ms ${I} NOT NULL,
    verdict ${T} NOT NULL)`,
  `CREATE TABLE health_results (round_id ${T} NOT NULL REFERENCES health_rounds(id),
    idx ${I} NOT NULL, binding ${T} NOT NULL, outcome ${T} NOT NULL, reason ${T} NOT NULL,
    object_uid ${T}, resource_version ${T}, observed_at_ms ${I} NOT NULL,
    PRIMARY KEY (round_id, idx))`,
  `CREATE TABLE recoveries (id ${T} PRIMARY KEY, operation_id ${T} NOT NULL, attempt_id ${T},
    kind ${T} NOT NULL, actor ${T} NOT NULL, evidence ${T} NOT NULL, explanation ${T},
    observation_id ${T}, at_ms ${I} NOT NULL, epoch ${T} NOT NULL)`,
  `CREATE TABLE recovery_scopes (machine ${T} NOT NULL, epoch ${T} NOT NULL, state ${T} NOT NULL,
    at_ms ${I} NOT NULL, PRIMARY KEY (machine, epoch))`,
  `CREATE TABLE events (seq ${I} PRIMARY KEY, at_ms ${I} NOT NULL, kind ${T} NOT NULL,
    machine ${T}, revision ${I}, operation_id ${T}, epoch ${T} NOT NULL, actor ${T} NOT NULL,
    body ${T} NOT NULL, prev_hash ${T} NOT NULL, hash ${T} NOT NULL)`,
  // The timeline is append-only; rewriting it needs dropping these first, which verify detects.
  `CREATE FUNCTION events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'events are append-only'; END $$`,
  `CREATE TRIGGER events_no_update BEFORE UPDATE ON events
    FOR EACH ROW EXECUTE FUNCTION events_append_only()`,
  `CREATE TRIGGER events_no_delete BEFORE DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION events_append_only()`,
  `CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION events_append_only()`,
];

/** Migrations 0001–0006, by version (see `../migrations/` for why each exists). */
const STEPS: Readonly<Record<number, readonly string[]>> = {
  1: V1,
  2: [`ALTER TABLE observations ADD COLUMN postcondition ${T}
    CHECK (postcondition IN ('established','contradicted','unreadable'))`],
  3: [`ALTER TABLE health_results ADD COLUMN reader ${T}`],
  4: [`ALTER TABLE observations ADD COLUMN machine_identity ${T}`],
  5: [`ALTER TABLE health_results ADD COLUMN object_ref ${T}`],
  6: [`CREATE TABLE recovery_attempts (id ${T} PRIMARY KEY, operation_id ${T} NOT NULL,
    machine ${T} NOT NULL, actor ${T} NOT NULL, role ${T} NOT NULL, decision ${T} NOT NULL,
    phase ${T} NOT NULL, request_digest ${T} NOT NULL, route ${T} NOT NULL,
    evidence ${T} NOT NULL, owner ${T} NOT NULL, owner_gen ${I} NOT NULL,
    owner_epoch ${T} NOT NULL, begun_at_ms ${I} NOT NULL, response_class ${T},
    response_detail ${T}, responded_at_ms ${I})`],
};

/**
 * Reads the stored schema version (0 for an empty database). The table's existence is read from
 * `pg_tables` with the statement's snapshot, not through `to_regclass`: that goes through the
 * session's catalog cache, which can still hold "no such table" from before another session's
 * migration committed (invalidations are not processed while waiting on an advisory lock), and
 * a second migrator would then run version 1 again.
 */
export async function pgSchemaVersion(db: Kysely<unknown>): Promise<number> {
  const t = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_catalog.pg_tables
    WHERE schemaname = current_schema() AND tablename = 'journal_schema'`.execute(db);
  if ((t.rows[0]?.n ?? 0) === 0) return 0;
  const r = await sql<{ version: number }>`SELECT version FROM journal_schema WHERE id = 1`
    .execute(db);
  return Number(r.rows[0]?.version ?? 0);
}

/** Applies every pending migration, each in its own transaction. Returns the versions applied. */
export async function pgMigrate(db: Kysely<unknown>, where: string): Promise<number[]> {
  const applied: number[] = [];
  for (let version = 1; version <= LATEST_SCHEMA; version++) {
    const statements = STEPS[version];
    if (!statements) throw new Error(`no PostgreSQL migration for schema version ${version}`);
    await db.transaction().execute(async (tx) => {
      await sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`.execute(tx);
      const current = await pgSchemaVersion(tx);
      assertKnownSchema(current, where);
      if (current >= version) return;
      for (const s of statements) await sql.raw(s).execute(tx);
      await sql`CREATE TABLE IF NOT EXISTS journal_schema
        (id BIGINT PRIMARY KEY CHECK (id = 1), version BIGINT NOT NULL)`.execute(tx);
      await sql`INSERT INTO journal_schema (id, version) VALUES (1, ${version})
        ON CONFLICT (id) DO UPDATE SET version = excluded.version`.execute(tx);
      applied.push(version);
    });
  }
  return applied;
}
