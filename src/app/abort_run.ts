/**
 * What `cairn abort` wires: the journal it revokes a plan in, opened without migrating (an abort
 * never changes the schema under a running controller). The revocation itself is the engine's.
 */
import type { Journal } from "../ports/journal.ts";

/** The journal at `url` (libSQL or PostgreSQL), loaded lazily so other commands do not load it. */
export async function openJournalForAbort(url: string, nowMs: number): Promise<Journal> {
  const { openJournal, cryptoIdSource } = await import("../adapters/journal/by_url.ts");
  return await openJournal({ url, ids: cryptoIdSource(), nowMs, migrate: false });
}
