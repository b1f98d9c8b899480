/** The journal contract against PostgreSQL: one loopback server, a new database per test. */
import { journalContract } from "../../contract/journal_contract.ts";
import { harnessOn, postgresStore } from "../../_helpers/journal_stores.ts";
import { sharedPostgres } from "../../_helpers/postgres.ts";

const server = await sharedPostgres();
journalContract("postgres", harnessOn(postgresStore(server)));
