/** Opening a libSQL journal: client, dialect, pragmas, migrations, first epoch. */
import { type Client, createClient, type InArgs } from "@libsql/client";
import { LibsqlDialect } from "@libsql/kysely-libsql";
import { createRequire } from "node:module";
import { type Dialect, Kysely, sql } from "kysely";
import type { IdSource } from "../../ports/clock.ts";
import { appendEvent } from "./hash_chain.ts";
import { fail } from "./rows.ts";
import type { JournalDB } from "./schema.ts";
import { assertKnownSchema, LATEST_SCHEMA, migrate, schemaVersion } from "./migrations/mod.ts";
import { describeJournalUrl } from "../../domain/journal_location.ts";
import { openNativeLibsql, type WriteBatcher } from "./native_libsql.ts";
import { CairnError } from "../../domain/errors.ts";

/** True for an embedded file URL (pragmas apply; remote servers manage their own durability). */
export function isFileUrl(url: string): boolean {
  return url.startsWith("file:");
}

/** Normalises a CLI/config journal location into a libSQL URL. */
export function journalUrl(location: string): string {
  if (location === ":memory:" || /^(file|libsql|https?|wss?):/.test(location)) return location;
  return `file:${location}`;
}

/**
 * Busy timeout for another process holding the write lock. The native driver waits for it
 * synchronously, so connections inside one process must never contend: `serialise` queues
 * every write transaction of a process on the same database file.
 */
export const BUSY_TIMEOUT_MS = 10_000;

const queues = new Map<string, Promise<unknown>>();

/** Runs `fn` after every earlier write transaction of this process on `key` has settled. */
export function serialise<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const prev = queues.get(key) ?? Promise.resolve();
  const p = prev.then(fn, fn);
  const tail = p.catch(() => undefined);
  queues.set(key, tail);
  void tail.then(() => {
    if (queues.get(key) === tail) queues.delete(key);
  });
  return p;
}

/**
 * Runs the first statements against a journal location: a driver's failure there (a server
 * that does not answer, a file that is not a database) is the user's location, said as
 * `JournalUnavailable` naming it (without credentials), never an internal stack trace. A
 * CairnError (an unknown schema, an unmigrated journal) passes through as it is.
 */
export async function opening<T>(url: string, f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (e) {
    if (e instanceof CairnError) throw e;
    const code = (e as { code?: unknown }).code;
    const why = code === "SQLITE_NOTADB"
      ? "not a journal (the file is not a SQLite database)"
      : (e instanceof Error ? e.message : String(e)).split("\n")[0];
    throw new CairnError({
      reason: "JournalUnavailable",
      message: `cannot open journal ${describeJournalUrl(url)}: ${why}`,
    }, { cause: e });
  }
}

/**
 * Creates the kysely instance on one connection (per-connection pragmas stay in force, and this
 * process's writers are serialised on it).
 */
export async function connect(url: string): Promise<Kysely<JournalDB>> {
  return (await connectWithBatcher(url)).db;
}

/**
 * `connect`, also handing back the write batch on the same connection. An embedded journal
 * (`file:`, `:memory:`) runs on libSQL's native driver (`native_libsql.ts`); a libSQL server
 * through @libsql/client 0.18 (@libsql/kysely-libsql bundles an old client whose Deno build
 * refuses `file:` URLs, so the dialect is handed a current one).
 */
export async function connectWithBatcher(
  url: string,
): Promise<{ db: Kysely<JournalDB>; batcher: WriteBatcher }> {
  const embedded = embeddedPath(url);
  let dialect: Dialect;
  let batcher: WriteBatcher;
  if (embedded !== undefined) {
    ({ dialect, batcher } = await opening(
      url,
      () => Promise.resolve(openNativeLibsql(embedded, BUSY_TIMEOUT_MS)),
    ));
  } else {
    let client: Client;
    try {
      client = createClient({ url, concurrency: 1, timeout: BUSY_TIMEOUT_MS });
    } catch (e) {
      fail(
        "JournalUnavailable",
        `cannot open journal ${describeJournalUrl(url)}: ${(e as Error).message}`,
      );
    }
    dialect = new LibsqlDialect({ client: client as never });
    batcher = {
      async batch(statements) {
        const rs = await client.batch(
          statements.map((s) => ({ sql: s.sql, args: s.args as InArgs })),
          "write",
        );
        return rs.map((r) => ({ rowsAffected: r.rowsAffected }));
      },
    };
  }
  const db = await withPragmas(new Kysely<JournalDB>({ dialect }), url);
  return { db, batcher };
}

/** The connection settings every journal connection runs with (destroys `db` if they fail). */
export async function withPragmas(db: Kysely<JournalDB>, url: string): Promise<Kysely<JournalDB>> {
  if (isFileUrl(url)) {
    await opening(url, async () => {
      await sql`PRAGMA journal_mode = WAL`.execute(db);
      await sql`PRAGMA synchronous = FULL`.execute(db);
    }).catch(async (e) => {
      await db.destroy();
      throw e;
    });
  }
  await sql`PRAGMA foreign_keys = ON`.execute(db).catch(() => undefined);
  return db;
}

/**
 * The database path of an embedded journal URL (`:memory:` for an in-memory one), parsed as
 * @libsql/client parses it (percent-decoding, `file:///abs`, a host other than localhost
 * refused); undefined for a server URL.
 */
function embeddedPath(url: string): string | undefined {
  if (url === ":memory:") return ":memory:";
  if (!isFileUrl(url)) return undefined;
  const require = createRequire(import.meta.resolve("@libsql/client"));
  const { expandConfig } = require("@libsql/core/config") as {
    expandConfig(c: { url: string }, preferHttp: boolean): {
      path: string;
      authority?: { host: string; port?: string; userinfo?: unknown };
    };
  };
  let config: ReturnType<typeof expandConfig>;
  try {
    config = expandConfig({ url }, true);
  } catch (e) {
    // An unsupported parameter or a malformed URL is the user's location, said as such.
    fail(
      "JournalUnavailable",
      `cannot open journal ${describeJournalUrl(url)}: ${(e as Error).message.split("\n")[0]}`,
    );
  }
  const a = config.authority;
  if (a && ((a.host !== "" && a.host.toLowerCase() !== "localhost") || a.port || a.userinfo)) {
    fail(
      "JournalUnavailable",
      `cannot open journal ${describeJournalUrl(url)}: a file URL names a path, not a host ` +
        `(file:/absolute/path.db or file:relative/path.db)`,
    );
  }
  return config.path.startsWith(":memory:") ? ":memory:" : config.path;
}

/** Migrates (or checks) the schema and mints the first epoch of a new journal. */
export async function prepare(
  db: Kysely<JournalDB>,
  a: { url: string; migrate: boolean; ids: IdSource; nowMs: number },
): Promise<void> {
  const v = await schemaVersion(db as Kysely<unknown>);
  const where = describeJournalUrl(a.url);
  assertKnownSchema(v, where);
  if (v < LATEST_SCHEMA) {
    if (!a.migrate) {
      fail("JournalUnmigrated", `journal ${where} is at schema ${v}, code needs ${LATEST_SCHEMA}`);
    }
    await serialise(a.url, () => migrate(db as Kysely<unknown>, where));
  }
  await serialise(a.url, () =>
    db.transaction().execute(async (tx) => {
      const inst = await tx.selectFrom("installation").select("id").executeTakeFirst();
      if (inst) return;
      const epoch = a.ids.newId("ep");
      await tx.insertInto("installation")
        .values({ id: 1, epoch, recovery_mode: 0, created_at_ms: a.nowMs }).execute();
      await tx.insertInto("epochs").values({ epoch, minted_at_ms: a.nowMs, reason: "creation" })
        .execute();
      await appendEvent(tx, {
        atMs: a.nowMs,
        kind: "journal-created",
        epoch,
        actor: "cairn",
        body: { epoch, schema: LATEST_SCHEMA },
      });
    }));
}
