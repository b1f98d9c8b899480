import { type Command, EXIT, OUTPUT_OPTION, printJson, wantsJson } from "./command.ts";
import { JOURNAL_HELP, JOURNAL_OPTION, journalLocation, journalShown } from "./journal_common.ts";

/** `cairn journal migrate`: creates or upgrades a journal's schema. */
export const command: Command = {
  path: ["journal", "migrate"],
  summary: "Create or upgrade the journal schema",
  usage: "--journal URL [--output json]",
  help: `Applies every pending migration, each in its own transaction, and mints the first epoch
of a new journal. A journal written by a newer cairn is refused (JournalSchemaTooNew) and left
untouched.

${JOURNAL_HELP}`,
  options: { ...OUTPUT_OPTION, ...JOURNAL_OPTION },
  async run(args, io) {
    const { migrateJournalAt } = await import("../app/journal_migrate_run.ts");
    const location = journalLocation(args, io);
    const r = await migrateJournalAt(location, Date.now());
    const shown = journalShown(location);
    if (wantsJson(args)) printJson(io, { journal: shown, ...r });
    else io.stdout(`journal ${shown}: schema ${r.from} → ${r.to}\n`);
    return EXIT.ok;
  },
};
