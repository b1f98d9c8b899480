/** Opening an existing journal for the commands that read it (status, show, export, recover). */
import type { Journal } from "../ports/journal.ts";
import { CairnError } from "../domain/errors.ts";

/**
 * Opens the journal at `url` read-mostly: it is never migrated implicitly, so a reader never
 * changes the schema under a running controller. The store the URL names (libSQL or PostgreSQL,
 * `adapters/journal/by_url.ts`) is imported here, lazily, so that commands which never open a
 * journal do not load it.
 */
export async function openJournalForReading(url: string, nowMs: number): Promise<Journal> {
  await refuseMissingFile(url);
  const { openJournal, cryptoIdSource } = await import("../adapters/journal/by_url.ts");
  return await openJournal({ url, ids: cryptoIdSource(), nowMs, migrate: false });
}

/** The local file a journal location names (a path or `file:PATH`), or undefined for a server. */
export function localJournalFile(location: string): string | undefined {
  if (location === ":memory:") return undefined;
  if (location.startsWith("file:")) return location.slice("file:".length).split("?")[0];
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(location)) return undefined;
  return location;
}

/**
 * SQLite creates a missing file on open, so `cairn status --journal typo.db` used to leave an
 * empty database behind and report an empty journal. A reader refuses instead.
 */
async function refuseMissingFile(location: string): Promise<void> {
  const file = localJournalFile(location);
  if (file === undefined) return;
  try {
    await Deno.stat(file);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
    throw new CairnError({
      reason: "JournalMissing",
      message: `no journal at ${file} (nothing was created; a new journal is made by ` +
        `'cairn journal migrate --journal ${location}')`,
    });
  }
}
