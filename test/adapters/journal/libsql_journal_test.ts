/** The journal contract against in-memory libSQL and a WAL file journal. */
import { journalContract } from "../../contract/journal_contract.ts";
import { harnessOn, LIBSQL_FILE, LIBSQL_MEMORY } from "../../_helpers/journal_stores.ts";

journalContract(LIBSQL_MEMORY.name, harnessOn(LIBSQL_MEMORY));
journalContract(LIBSQL_FILE.name, harnessOn(LIBSQL_FILE));
