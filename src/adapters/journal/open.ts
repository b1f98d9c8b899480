/** Opening a libSQL journal: client, dialect, pragmas, migrations, first epoch. */
import { type Client, createClient } from "@libsql/client";
import { LibsqlDialect } from "@libsql/kysely-libsql";
import { Kysely, sql } from "kysely";
import type { IdSource } from "../../ports/clock.ts";
import { appendEvent } from "./hash_chain.ts";
import { fail } from "./rows.ts";
import type { JournalDB } from "./schema.ts";
import { assertKnownSchema, LATEST_SCHEMA, migrate, schemaVersion } from "./migrations/mod.ts";
import { describeJournalUrl } from "../../domain/journal_location.ts";
import { keepStatementsPrepared } from "./statement_cache.ts";
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
const BUSY_TIMEOUT_MS = 10_000;

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
 * Creates the kysely instance. The dialect gets a client from @libsql/client 0.18 because
 * @libsql/kysely-libsql bundles an old client whose Deno build refuses `file:` URLs; one
 * connection keeps per-connection pragmas in force and serialises this process's writers.
 */
export async function connect(url: string): Promise<Kysely<JournalDB>> {
  return (await connectWithClient(url)).db;
}

/** `connect`, also handing back the libSQL client (for single-call write batches). */
export async function connectWithClient(
  url: string,
): Promise<{ db: Kysely<JournalDB>; client: Client }> {
  let client: Client;
  keepStatementsPrepared();
  try {
    client = createClient({ url, concurrency: 1, timeout: BUSY_TIMEOUT_MS });
  } catch (e) {
    fail(
      "JournalUnavailable",
      `cannot open journal ${describeJournalUrl(url)}: ${(e as Error).message}`,
    );
  }
  const db = new Kysely<JournalDB>({ dialect: new LibsqlDialect({ client: client as never }) });
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
  return { db, client };
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
