/**
 * What the commands that read the journal share: the `--journal` flag (CLI frame); opening the
 * store is composition (`app/journal_open.ts`).
 */
import type { Journal } from "../ports/journal.ts";
import { describeJournalUrl } from "../domain/journal_location.ts";
import { type CommandIO, type ParsedArgs, UsageError } from "./command.ts";

/**
 * `--journal URL` (or CAIRN_JOURNAL): `file:…`, a path, `libsql://…`, `http(s)://…` or
 * `postgres://…`.
 */
export const JOURNAL_OPTION = { journal: { type: "string", short: "j" } } as const;

/** Help text for the journal flag. */
export const JOURNAL_HELP =
  "  --journal, -j URL   journal location: file:PATH, a path, libsql://…, http(s)://… or\n" +
  "                      postgres://USER[:PASSWORD]@HOST[:PORT]/DB\n" +
  "                      (default: $CAIRN_JOURNAL)";

/** The journal location from the flag or the environment. */
export function journalLocation(args: ParsedArgs, io: CommandIO): string {
  const v = args.values["journal"] ?? io.env["CAIRN_JOURNAL"];
  if (typeof v !== "string" || v === "") {
    throw new UsageError("--journal URL is required (or set CAIRN_JOURNAL)");
  }
  return v;
}

/** Opens an existing journal read-mostly: it is never migrated implicitly. */
export async function openForReading(args: ParsedArgs, io: CommandIO): Promise<Journal> {
  const { openJournalForReading } = await import("../app/journal_open.ts");
  return await openJournalForReading(journalLocation(args, io), Date.now());
}

/** The journal location as printed: a PostgreSQL password or a secret query value never is. */
export function journalShown(location: string): string {
  return describeJournalUrl(location);
}
