/**
 * Opening a journal by its location: `postgres://…` / `postgresql://…` is the PostgreSQL journal
 * (`pg/pg_journal.ts`), anything else libSQL (`libsql_journal.ts`: `file:…`, a path, `:memory:`,
 * `libsql://…`, `http(s)://…`). Each store, with its driver, is imported only when a journal of
 * its kind is opened, so commands that never open one, or open the other kind, do not load it.
 */
import type { IdSource } from "../../ports/clock.ts";
import type { Journal, OpenJournalOptions } from "../../ports/journal.ts";
import { isPostgresUrl } from "../../domain/journal_location.ts";

export { cryptoIdSource } from "./ids.ts";
export { describeJournalUrl, isPostgresUrl } from "../../domain/journal_location.ts";

/** Opens (and by default migrates) the journal at `opts.url`. */
export async function openJournal(opts: OpenJournalOptions): Promise<Journal> {
  if (isPostgresUrl(opts.url)) {
    const { openPgJournal } = await import("./pg/pg_journal.ts");
    return await openPgJournal(opts);
  }
  const { openJournal: openLibsql } = await import("./libsql_journal.ts");
  return await openLibsql(opts);
}

/** Applies pending migrations to the journal at `location`; the versions before and after. */
export async function migrateJournal(
  location: string,
  a: { ids: IdSource; nowMs: number },
): Promise<{ from: number; to: number }> {
  if (isPostgresUrl(location)) {
    const { migratePgJournal } = await import("./pg/pg_journal.ts");
    return await migratePgJournal(location, a);
  }
  const { migrateJournal: migrateLibsql } = await import("./libsql_journal.ts");
  return await migrateLibsql(location, a);
}
