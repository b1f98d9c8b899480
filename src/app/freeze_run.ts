/**
 * What `cairn freeze` and `cairn unfreeze` wire: the journal the freeze is recorded in, opened
 * without migrating (a freeze never changes the schema under a running controller).
 */
import type { Journal } from "../ports/journal.ts";

/** The libSQL journal at `url`, loaded lazily so other commands do not load the adapter. */
export async function openJournalForFreeze(url: string, nowMs: number): Promise<Journal> {
  const { openJournal, cryptoIdSource } = await import("../adapters/journal/libsql_journal.ts");
  return await openJournal({ url, ids: cryptoIdSource(), nowMs, migrate: false });
}
