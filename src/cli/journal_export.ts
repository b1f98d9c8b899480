import { type Command, EXIT, OUTPUT_OPTION, printJson } from "./command.ts";
import {
  JOURNAL_HELP,
  JOURNAL_OPTION,
  journalLocation,
  journalShown,
  openForReading,
} from "./journal_common.ts";

/** `cairn journal export`: every journal table as JSON. */
export const command: Command = {
  path: ["journal", "export"],
  summary: "Export every journal table as JSON",
  usage: "--journal URL [--output json]",
  help: `Writes one JSON object with every table's rows and the result of recomputing the event
hash chain. The output is always JSON.

${JOURNAL_HELP}`,
  options: { ...OUTPUT_OPTION, ...JOURNAL_OPTION },
  async run(args, io) {
    const location = journalLocation(args, io);
    const j = await openForReading(args, io);
    try {
      printJson(io, {
        journal: journalShown(location),
        chain: await j.verifyChain(),
        tables: await j.exportAll(),
      });
      return EXIT.ok;
    } finally {
      await j.close();
    }
  },
};
