/**
 * Completion observations record what they established about the bound postconditions as a typed
 * fact (`established`, `contradicted`, `unreadable`), so the store itself can refuse `failed` on
 * an unreadable read. Rows written before this migration have none and can neither complete nor
 * fail an operation; a fresh completion read is needed.
 */
import { type Kysely, sql } from "kysely";

/** Applies migration 0002. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE observations ADD COLUMN postcondition TEXT
    CHECK (postcondition IN ('established','contradicted','unreadable'))`.execute(db);
}
