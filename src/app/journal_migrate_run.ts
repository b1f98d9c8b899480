/**
 * What `cairn journal migrate` wires: the journal adapter the URL names (libSQL or PostgreSQL),
 * loaded lazily so that commands which never open a journal do not load it, with fresh ids for
 * the first epoch it may mint.
 */
/** The schema version before and after a migration. */
export interface MigrationResult {
  readonly from: number;
  readonly to: number;
}

/** Applies every pending migration of the journal at `location` (see the command's help). */
export async function migrateJournalAt(location: string, nowMs: number): Promise<MigrationResult> {
  const { migrateJournal, cryptoIdSource } = await import("../adapters/journal/by_url.ts");
  return await migrateJournal(location, { ids: cryptoIdSource(), nowMs });
}
