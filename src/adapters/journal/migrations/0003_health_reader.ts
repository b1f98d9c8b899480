/**
 * Health results name the reader that produced them, so a report can tell which safeguard row a
 * binding evaluated (PDBs, workloads, a database operator) from the record itself. Rows written
 * before this migration keep a null reader: their rows stay unevaluated, never guessed.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE health_results ADD COLUMN reader TEXT`.execute(db);
}
