/**
 * Health results name the object they read as `Kind namespace/name` (or `Kind name` for a
 * cluster-scoped object) beside its UID, so a report names objects as a reviewer knows them.
 * Rows written before this migration keep a null reference: reports fall back to the UID.
 */
import { type Kysely, sql } from "kysely";

/** Applies migration 0005. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE health_results ADD COLUMN object_ref TEXT`.execute(db);
}
