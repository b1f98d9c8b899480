import { type Command, EXIT, OUTPUT_OPTION, printJson, wantsJson } from "./command.ts";
import {
  JOURNAL_HELP,
  JOURNAL_OPTION,
  journalLocation,
  journalShown,
  openForReading,
} from "./journal_common.ts";

/** `cairn journal verify`: recomputes the event hash chain. */
export const command: Command = {
  path: ["journal", "verify"],
  summary: "Recompute the journal's event hash chain",
  usage: "--journal URL [--output json]",
  help: `Recomputes the SHA-256 chain over every event row from the first. Prints the row count
and head hash when the chain holds; otherwise names the first row that breaks it
(JournalChainBroken) and exits 1.

${JOURNAL_HELP}`,
  options: { ...OUTPUT_OPTION, ...JOURNAL_OPTION },
  async run(args, io) {
    const location = journalShown(journalLocation(args, io));
    const j = await openForReading(args, io);
    try {
      const r = await j.verifyChain();
      if (wantsJson(args)) printJson(io, { journal: location, ...r });
      if (r.ok) {
        if (!wantsJson(args)) io.stdout(`journal chain ok: ${r.rows} rows, head ${r.head}\n`);
        return EXIT.ok;
      }
      io.stderr(`${location}: JournalChainBroken: event row ${r.seq}: ${r.why}\n`);
      return EXIT.refused;
    } finally {
      await j.close();
    }
  },
};
