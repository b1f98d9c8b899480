/**
 * A backup of a libSQL journal's whole contents and its restore, for the simulation campaign's
 * journal restore (app/dst/): every table's rows copied in one read transaction (one moment), and
 * later written back in one write transaction in place of whatever the tables hold then — what an
 * operator's restore of the database from a backup leaves behind. The schema is not copied (a
 * restore to an older schema is a migration's business, not this one's); the append-only
 * triggers are dropped for the restore and created again from their own text inside the same
 * transaction, so no other writer ever sees the tables without them.
 */
import { type Kysely, sql } from "kysely";
import type { JournalDB } from "./schema.ts";

/** Every table's rows at one moment, in the order the schema lists the tables. */
export interface JournalBackup {
  readonly tables: ReadonlyArray<{
    readonly name: string;
    readonly columns: readonly string[];
    readonly rows: ReadonlyArray<readonly unknown[]>;
  }>;
}

/** Rows per INSERT on restore (SQLite's bound-variable limit is far above rows × columns). */
const ROWS_PER_INSERT = 50;

const ident = (name: string) => sql.raw(`"${name.replaceAll('"', '""')}"`);

async function tableNames(db: Kysely<JournalDB>): Promise<string[]> {
  const r = await sql<{ name: string }>`SELECT name FROM sqlite_master
    WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`.execute(db);
  return r.rows.map((t) => t.name);
}

/** Copies every table's rows; run it inside one transaction (a backup is one moment). */
export async function copyRows(db: Kysely<JournalDB>): Promise<JournalBackup> {
  const tables = [];
  for (const name of await tableNames(db)) {
    const info = await sql<{ name: string }>`SELECT name FROM pragma_table_info(${name})
      ORDER BY cid`.execute(db);
    const columns = info.rows.map((c) => c.name);
    const r = await sql<Record<string, unknown>>`SELECT * FROM ${ident(name)}`.execute(db);
    tables.push({ name, columns, rows: r.rows.map((row) => columns.map((c) => row[c])) });
  }
  return { tables };
}

/**
 * Replaces every table's rows with the backup's; run it inside one write transaction. Foreign
 * keys are checked at its commit (`defer_foreign_keys`), so the order tables are emptied and
 * filled in does not matter.
 */
export async function replaceRows(db: Kysely<JournalDB>, backup: JournalBackup): Promise<void> {
  await sql`PRAGMA defer_foreign_keys = ON`.execute(db);
  const triggers = await sql<{ name: string; sql: string }>`SELECT name, sql FROM sqlite_master
    WHERE type = 'trigger' ORDER BY name`.execute(db);
  for (const t of triggers.rows) await sql`DROP TRIGGER ${ident(t.name)}`.execute(db);
  for (const name of await tableNames(db)) await sql`DELETE FROM ${ident(name)}`.execute(db);
  for (const t of backup.tables) {
    const cols = sql.join(t.columns.map(ident));
    for (let i = 0; i < t.rows.length; i += ROWS_PER_INSERT) {
      const chunk = t.rows.slice(i, i + ROWS_PER_INSERT);
      const values = sql.join(chunk.map((row) => sql`(${sql.join(row.map((v) => sql`${v}`))})`));
      await sql`INSERT INTO ${ident(t.name)} (${cols}) VALUES ${values}`.execute(db);
    }
  }
  for (const t of triggers.rows) await sql.raw(t.sql).execute(db);
}
