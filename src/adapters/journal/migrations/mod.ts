/**
 * The journal's migrations as an explicit ordered list (no file discovery), and the runner that
 * applies them. A journal whose schema is newer than this list is refused, never touched.
 */
import { type Kysely, sql } from "kysely";
import { CairnError } from "../../../domain/errors.ts";
import { up as init } from "./0001_init.ts";
import { up as postconditionReading } from "./0002_postcondition_reading.ts";
import { up as healthReader } from "./0003_health_reader.ts";
import { up as machineIdentity } from "./0004_machine_identity.ts";
import { up as healthObjectRef } from "./0005_health_object_ref.ts";
import { up as recoveryAttempt } from "./0006_recovery_attempt.ts";

/** One migration step. */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly up: (db: Kysely<unknown>) => Promise<void>;
}

/** Every migration, in order. Append only. */
export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: "0001_init", up: init },
  { version: 2, name: "0002_postcondition_reading", up: postconditionReading },
  { version: 3, name: "0003_health_reader", up: healthReader },
  { version: 4, name: "0004_machine_identity", up: machineIdentity },
  { version: 5, name: "0005_health_object_ref", up: healthObjectRef },
  { version: 6, name: "0006_recovery_attempt", up: recoveryAttempt },
];

/** The schema version this code writes. */
export const LATEST_SCHEMA = MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0;

/** Reads the stored schema version (0 for an empty database). */
export async function schemaVersion(db: Kysely<unknown>): Promise<number> {
  const t = await sql<{ n: number }>`SELECT count(*) AS n FROM sqlite_master
    WHERE type = 'table' AND name = 'journal_schema'`.execute(db);
  if ((t.rows[0]?.n ?? 0) === 0) return 0;
  const r = await sql<{ version: number }>`SELECT version FROM journal_schema WHERE id = 1`
    .execute(db);
  return r.rows[0]?.version ?? 0;
}

/** Refuses a journal written by newer code. */
export function assertKnownSchema(version: number, where: string): void {
  if (version > LATEST_SCHEMA) {
    throw new CairnError({
      reason: "JournalSchemaTooNew",
      message: `journal ${where} has schema version ${version}; this cairn knows up to ` +
        `${LATEST_SCHEMA}. Upgrade cairn; the journal was not modified.`,
      details: { version, known: LATEST_SCHEMA },
    });
  }
}

/** Applies every pending migration, each in its own transaction. Returns the versions applied. */
export async function migrate(db: Kysely<unknown>, where: string): Promise<number[]> {
  const applied: number[] = [];
  for (const m of MIGRATIONS) {
    await db.transaction().execute(async (tx) => {
      const current = await schemaVersion(tx);
      assertKnownSchema(current, where);
      if (current >= m.version) return;
      await m.up(tx);
      await sql`CREATE TABLE IF NOT EXISTS journal_schema
        (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)`.execute(tx);
      await sql`INSERT INTO journal_schema (id, version) VALUES (1, ${m.version})
        ON CONFLICT (id) DO UPDATE SET version = excluded.version`.execute(tx);
      applied.push(m.version);
    });
  }
  return applied;
}
