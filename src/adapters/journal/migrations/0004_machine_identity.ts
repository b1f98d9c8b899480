/**
 * Evidence observations record the machine identity they observed on both sides (SMBIOS UUID,
 * node name, address: `domain/machine_identity.ts`), so the identity a commitment bound is part
 * of its evidence record. Rows written before this migration have none: they bound no machine.
 */
import { type Kysely, sql } from "kysely";

/** Applies migration 0004. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE observations ADD COLUMN machine_identity TEXT`.execute(db);
}
