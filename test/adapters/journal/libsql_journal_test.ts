/** The journal contract against in-memory libSQL and a WAL file journal. */
import { openJournal } from "../../../src/adapters/journal/libsql_journal.ts";
import { journalContract } from "../../contract/journal_contract.ts";
import { counterIds, T0 } from "../../_helpers/journal_world.ts";

journalContract("libsql :memory:", async () => {
  const journal = await openJournal({ url: ":memory:", ids: counterIds(), nowMs: T0 });
  return { journal, second: () => Promise.resolve(null), dispose: () => journal.close() };
});

journalContract("libsql file", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cairn-journal-" });
  const url = `file:${dir}/journal.db`;
  const journal = await openJournal({ url, ids: counterIds("a"), nowMs: T0 });
  return {
    journal,
    second: () => openJournal({ url, ids: counterIds("b"), nowMs: T0 }),
    dispose: async () => {
      await journal.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
});
