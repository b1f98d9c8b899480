/**
 * A recovery-admin's mutation (today: lifting an operation-owned cordon) is an attempt of its
 * own: admitted on the recovery decision it executes rather than on the plan's attempt authority,
 * which a halted operation no longer has (docs/recovery.md#the-decisions-of-cairn-recover). It
 * is kept apart from `attempts` because it neither uses the plan's attempt budget nor needs
 * accounting before the operation can be classified.
 */
import { type Kysely, sql } from "kysely";

/** Applies migration 0006. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE TABLE recovery_attempts (id TEXT PRIMARY KEY, operation_id TEXT NOT NULL,
    machine TEXT NOT NULL, actor TEXT NOT NULL, role TEXT NOT NULL, decision TEXT NOT NULL,
    phase TEXT NOT NULL, request_digest TEXT NOT NULL, route TEXT NOT NULL,
    evidence TEXT NOT NULL, owner TEXT NOT NULL, owner_gen INTEGER NOT NULL,
    owner_epoch TEXT NOT NULL, begun_at_ms INTEGER NOT NULL, response_class TEXT,
    response_detail TEXT, responded_at_ms INTEGER)`.execute(db);
}
