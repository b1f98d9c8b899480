/**
 * The journal stores the journal's suites run on, each handing out the location of a new empty
 * journal: libSQL `:memory:`, a libSQL WAL file, and a database on a loopback PostgreSQL server
 * (`postgres.ts`; the test file starts the server at load, so the server is no test's leak).
 */
import { openJournal } from "../../src/adapters/journal/by_url.ts";
import type { JournalHarness } from "../contract/journal_contract.ts";
import { counterIds, T0 } from "./journal_world.ts";
import type { PostgresServer } from "./postgres.ts";
import { createClient } from "@libsql/client";
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { pgMigrate } from "../../src/adapters/journal/pg/migrations.ts";

export interface JournalStoreKind {
  readonly name: string;
  /** False when a second connection sees a different database (`:memory:`). */
  readonly shared: boolean;
  /** A location for a new, empty journal; `dispose` removes what it made. */
  fresh(): Promise<{ url: string; dispose: () => Promise<void> }>;
  /**
   * Runs raw SQL statements in one transaction on the journal at `url`, past the journal's API
   * (what a restore from backup or an operator's hand would do).
   */
  exec(url: string, statements: readonly string[]): Promise<void>;
}

async function execLibsql(url: string, statements: readonly string[]): Promise<void> {
  const raw = createClient({ url });
  try {
    await raw.batch([...statements], "write");
  } finally {
    raw.close();
  }
}

export const LIBSQL_MEMORY: JournalStoreKind = {
  name: "libsql :memory:",
  shared: false,
  fresh: () => Promise.resolve({ url: ":memory:", dispose: () => Promise.resolve() }),
  exec: () => Promise.reject(new Error("a :memory: journal has no second connection")),
};

export const LIBSQL_FILE: JournalStoreKind = {
  name: "libsql file",
  shared: true,
  async fresh() {
    const dir = await Deno.makeTempDir({ prefix: "cairn-journal-" });
    return {
      url: `file:${dir}/journal.db`,
      dispose: () => Deno.remove(dir, { recursive: true }),
    };
  },
  exec: execLibsql,
};

/**
 * A new database per journal on `server`, copied from a template that already holds the
 * migrated schema (copying is much faster than migrating every test's database; opening still
 * checks the schema version and creates the installation). Dropping them is left to the
 * server's removal.
 */
export function postgresStore(server: PostgresServer): JournalStoreKind {
  let template: Promise<string> | undefined;
  return {
    name: "postgres",
    shared: true,
    async fresh() {
      template ??= migratedTemplate(server);
      return {
        url: await server.newDatabase("j", await template),
        dispose: () => Promise.resolve(),
      };
    },
    async exec(url, statements) {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        await c.query("BEGIN");
        for (const st of statements) await c.query(st);
        await c.query("COMMIT");
      } finally {
        await c.end();
      }
    },
  };
}

async function migratedTemplate(server: PostgresServer): Promise<string> {
  const url = await server.newDatabase("template");
  const db = new Kysely<unknown>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }),
  });
  try {
    await pgMigrate(db, "the template");
  } finally {
    await db.destroy();
  }
  return new URL(url).pathname.slice(1);
}

/** The contract suite's factory on `kind`: a new journal, and a second connection to it. */
export function harnessOn(kind: JournalStoreKind): () => Promise<JournalHarness> {
  return async () => {
    const { url, dispose } = await kind.fresh();
    const journal = await openJournal({ url, ids: counterIds("a"), nowMs: T0 });
    return {
      journal,
      second: () =>
        kind.shared ? openJournal({ url, ids: counterIds("b"), nowMs: T0 }) : Promise.resolve(null),
      dispose: async () => {
        await journal.close();
        await dispose();
      },
    };
  };
}
