/** Opening an existing journal for the commands that read it (status, show, export, recover). */
import type { Journal } from "../ports/journal.ts";

/**
 * Opens the journal at `url` read-mostly: it is never migrated implicitly, so a reader never
 * changes the schema under a running controller. The libSQL adapter is imported here, lazily,
 * so that commands which never open a journal do not load it.
 */
export async function openJournalForReading(url: string, nowMs: number): Promise<Journal> {
  const { openJournal, cryptoIdSource } = await import("../adapters/journal/libsql_journal.ts");
  return await openJournal({ url, ids: cryptoIdSource(), nowMs, migrate: false });
}
