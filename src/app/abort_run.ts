/**
 * What `cairn abort` wires: the journal it revokes a plan in, opened without migrating (an abort
 * never changes the schema under a running controller). The revocation itself is the engine's.
 */
import type { Journal } from "../ports/journal.ts";

/** The libSQL journal at `url`, loaded lazily so other commands do not load the adapter. */
export async function openJournalForAbort(url: string, nowMs: number): Promise<Journal> {
  const { openJournal, cryptoIdSource } = await import("../adapters/journal/libsql_journal.ts");
  return await openJournal({ url, ids: cryptoIdSource(), nowMs, migrate: false });
}
