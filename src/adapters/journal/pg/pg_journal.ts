/**
 * The journal on PostgreSQL (`postgres://…` / `postgresql://…`): the `JournalStore` under
 * `KyselyJournal`, through kysely's PostgreSQL dialect and node-postgres.
 *
 * Concurrency is PostgreSQL's own, never a lock in this process: every write transaction first
 * locks the installation row (`SELECT … FOR UPDATE`), so writers from any number of processes and
 * connections commit one after another, each reading (READ COMMITTED, a fresh snapshot per
 * statement) everything committed before it, as SQLite's `BEGIN IMMEDIATE` gives the libSQL
 * journal; the fenced UPDATEs decide admission inside that order. The attempt transaction's hot
 * path (`pg_attempt.ts`) is one read and one statement that takes the same lock. Reads that must
 * see one moment (a plan's history) run REPEATABLE READ, READ ONLY.
 *
 * A session that stalls inside a transaction (a process stopped by SIGSTOP while it holds the
 * lock) is ended by the server after `IDLE_IN_TRANSACTION_MS`, which rolls its transaction back,
 * so one stuck replica holds the other writers no longer than about a leader's lease; the URL's
 * own `idle_in_transaction_session_timeout` parameter (milliseconds), when given, wins.
 *
 * No statement waits forever: the server cancels one that runs (or waits for a lock) past
 * `STATEMENT_TIMEOUT_MS` (`statement_timeout`), and the client gives up on one the server does not
 * answer within `QUERY_DEADLINE_MS` (`query_timeout`: a server that is stopped or unreachable
 * cannot cancel anything). Either fails the journal act with `JournalTimedOut` (`deadlineError`),
 * so the loop reports not-ready instead of hanging; a transaction commits whole or not at all, so
 * the journal stays consistent, and an act whose outcome the client did not learn sent nothing.
 * The URL's `statement_timeout` and `query_timeout` parameters (milliseconds) win.
 */
import pg from "pg";
import { createHash } from "node:crypto";
import { type CompiledQuery, Kysely, PostgresDialect, sql, type Transaction } from "kysely";
import { CairnError } from "../../../domain/errors.ts";
import type { IdSource } from "../../../ports/clock.ts";
import type { AttemptInput, Journal, OpenJournalOptions } from "../../../ports/journal.ts";
import { attemptTx, loadForAttempt } from "../attempt.ts";
import { appendEvent } from "../hash_chain.ts";
import { shape } from "../compiled.ts";
import { KyselyJournal } from "../kysely_journal.ts";
import { assertKnownSchema, LATEST_SCHEMA } from "../migrations/mod.ts";
import { fail } from "../rows.ts";
import type { InstallationTable, JournalDB } from "../schema.ts";
import type { AttemptOutcome, JournalStore } from "../store.ts";
import { describeJournalUrl } from "../../../domain/journal_location.ts";
import { MIGRATION_LOCK, pgMigrate, pgSchemaVersion } from "./migrations.ts";
import { pgAttemptBatched } from "./pg_attempt.ts";

/** Connections per process: the reconciler's writes are sequential; reads may overlap them. */
const POOL_SIZE = 4;
/** How long connecting may take before the journal is reported unavailable. */
const CONNECT_TIMEOUT_MS = 10_000;
/**
 * A session idle inside a transaction this long is ended by the server (see the module doc). The
 * journal's transactions do no waiting of their own between statements, so a live process is
 * never idle anywhere near this long.
 */
const IDLE_IN_TRANSACTION_MS = 10_000;
/**
 * The server's deadline for one statement, lock waits included: longer than
 * `IDLE_IN_TRANSACTION_MS`, so a writer queued behind a stopped session is released by that
 * session's end before its own deadline; far beyond any journal statement's own work.
 */
const STATEMENT_TIMEOUT_MS = 15_000;
/** The client's deadline for an answer: past the server's, which normally answers first. */
const QUERY_DEADLINE_MS = 20_000;
/** Every pooled session's deadlines (node-postgres settings; the URL's own parameters win). */
export const SESSION_DEADLINES = {
  idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_MS,
  statement_timeout: STATEMENT_TIMEOUT_MS,
  query_timeout: QUERY_DEADLINE_MS,
} as const;
/** The installation row, locked first by every write transaction (`write`). */
const INSTALLATION_LOCKED = shape(
  [],
  (tx) => tx.selectFrom("installation").selectAll().where("id", "=", 1).forUpdate(),
);

/** Batched attempts tried before an interactive transaction (only another writer races). */
const ATTEMPT_BATCH_TRIES = 3;

/** BIGINT (OID 20) as a JS number: every integer the journal stores is a safe integer. */
const INT8_OID = 20;
function parseInt8(text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new RangeError(`journal integer ${text} is out of range`);
  return n;
}

function connect(url: string): Kysely<JournalDB> {
  return connectPool(url).db;
}

function connectPool(url: string): { db: Kysely<JournalDB>; pool: pg.Pool } {
  const pool = new pg.Pool({
    connectionString: url,
    max: POOL_SIZE,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    ...SESSION_DEADLINES,
    types: {
      getTypeParser: ((oid: number, format?: string) =>
        oid === INT8_OID && format !== "binary"
          ? parseInt8
          : pg.types.getTypeParser(oid, format as "text")) as typeof pg.types.getTypeParser,
    },
  });
  // An idle pooled connection that breaks (server restart) must not crash the process; the next
  // query on the pool opens a new one or fails where it is awaited.
  pool.on("error", () => undefined);
  return { db: new Kysely<JournalDB>({ dialect: new PostgresDialect({ pool }) }), pool };
}

/**
 * Errors while opening name the journal by its redacted URL and never carry the password,
 * whatever the driver put into its message.
 */
export function unavailable(e: unknown, url: string, where: string): CairnError {
  if (e instanceof CairnError) return e;
  let message = e instanceof Error ? e.message : String(e);
  const password = passwordOf(url);
  if (password) {
    for (const p of new Set([password, decodeURIComponent(password)])) {
      message = message.replaceAll(p, "***");
    }
  }
  return new CairnError({
    reason: "JournalUnavailable",
    message: `cannot open journal ${where}: ${message}`,
  });
}

function passwordOf(url: string): string {
  try {
    return new URL(url).password;
  } catch {
    return "";
  }
}

/** The deadlines in force for `url` (its own parameters win), for messages. */
function deadlinesOf(url: string): { statementMs: string; queryMs: string } {
  let params: URLSearchParams | undefined;
  try {
    params = new URL(url).searchParams;
  } catch {
    params = undefined;
  }
  return {
    statementMs: params?.get("statement_timeout") ?? String(STATEMENT_TIMEOUT_MS),
    queryMs: params?.get("query_timeout") ?? String(QUERY_DEADLINE_MS),
  };
}

/** SQLSTATEs of a statement ended by a deadline: cancelled, lock wait, idle session ended. */
const DEADLINE_CODES: Record<string, string> = {
  "57014": "cancelled by the server at its statement_timeout",
  "55P03": "gave up waiting for a lock",
  "25P03": "its session was ended by the server, idle inside a transaction",
};

/**
 * A deadline that fired, as `JournalTimedOut` naming the journal (never its password), the
 * deadline and what happened to the transaction; any other error unchanged.
 */
export function deadlineError(e: unknown, url: string): unknown {
  const where = describeJournalUrl(url);
  const { statementMs, queryMs } = deadlinesOf(url);
  const code = (e as { code?: unknown })?.code;
  const message = e instanceof Error ? e.message : String(e);
  if (typeof code === "string" && DEADLINE_CODES[code]) {
    return new CairnError({
      reason: "JournalTimedOut",
      message: `journal ${where}: a statement ${DEADLINE_CODES[code]} (statement deadline ` +
        `${statementMs} ms; SQLSTATE ${code}); its transaction was rolled back`,
    });
  }
  if (message === "Query read timeout") {
    return new CairnError({
      reason: "JournalTimedOut",
      message: `journal ${where}: no answer from the server within ${queryMs} ms (client ` +
        "deadline); its transaction committed whole or not at all, and nothing that depends on " +
        "it was sent",
    });
  }
  if (/timeout exceeded when trying to connect/i.test(message)) {
    return new CairnError({
      reason: "JournalTimedOut",
      message: `journal ${where}: no connection within ${CONNECT_TIMEOUT_MS} ms`,
    });
  }
  return e;
}

/**
 * The journal with every act's deadline error told as `JournalTimedOut` (the acts themselves are
 * the store-independent `KyselyJournal`).
 */
function withDeadlineErrors(j: Journal, url: string): Journal {
  return new Proxy(j, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target);
      if (typeof v !== "function") return v;
      return (...args: unknown[]) => {
        const r = v.apply(target, args);
        return r instanceof Promise
          ? r.catch((e: unknown) => {
            throw deadlineError(e, url);
          })
          : r;
      };
    },
  });
}

/** Opens (and by default migrates) a PostgreSQL journal. */
export async function openPgJournal(opts: OpenJournalOptions): Promise<Journal> {
  const where = describeJournalUrl(opts.url);
  const { db, pool } = connectPool(opts.url);
  try {
    await prepare(db, { where, migrate: opts.migrate ?? true, ids: opts.ids, nowMs: opts.nowMs });
  } catch (e) {
    await db.destroy().catch(() => undefined);
    throw unavailable(e, opts.url, where);
  }
  return withDeadlineErrors(
    new KyselyJournal(new PgStore(db, pool), { ids: opts.ids, point: opts.writePoint }),
    opts.url,
  );
}

/** Applies pending migrations to the PostgreSQL journal at `url`; the versions before and after. */
export async function migratePgJournal(
  url: string,
  a: { ids: IdSource; nowMs: number },
): Promise<{ from: number; to: number }> {
  const where = describeJournalUrl(url);
  const db = connect(url);
  try {
    const from = await pgSchemaVersion(db as Kysely<unknown>);
    await prepare(db, { where, migrate: true, ids: a.ids, nowMs: a.nowMs });
    return { from, to: LATEST_SCHEMA };
  } catch (e) {
    throw unavailable(e, url, where);
  } finally {
    await db.destroy().catch(() => undefined);
  }
}

/** Migrates (or checks) the schema and mints the first epoch of a new journal. */
async function prepare(
  db: Kysely<JournalDB>,
  a: { where: string; migrate: boolean; ids: IdSource; nowMs: number },
): Promise<void> {
  const v = await pgSchemaVersion(db as Kysely<unknown>);
  assertKnownSchema(v, a.where);
  if (v < LATEST_SCHEMA) {
    if (!a.migrate) {
      fail(
        "JournalUnmigrated",
        `journal ${a.where} is at schema ${v}, code needs ${LATEST_SCHEMA}`,
      );
    }
    await pgMigrate(db as Kysely<unknown>, a.where);
  }
  await db.transaction().execute(async (tx) => {
    // Two processes creating one journal: the second finds the first's installation row.
    await sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`.execute(tx);
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
  });
}

/**
 * The name a statement is prepared under on each pooled connection: derived from its text, so
 * one name never stands for two texts. Preparing the attempt's two statements saves PostgreSQL
 * parsing and planning them on every attempt (most of their cost on a busy machine).
 */
function preparedName(text: string): string {
  return `cairn_${createHash("sha256").update(text).digest("hex").slice(0, 24)}`;
}

class PgStore implements JournalStore {
  readonly db: Kysely<JournalDB>;
  readonly #pool: pg.Pool;
  readonly #names = new Map<string, string>();

  constructor(db: Kysely<JournalDB>, pool: pg.Pool) {
    this.db = db;
    this.#pool = pool;
  }

  /** Runs a compiled statement as a named prepared statement. */
  readonly #query = async <R>(q: CompiledQuery<R>): Promise<R[]> => {
    let name = this.#names.get(q.sql);
    if (name === undefined) {
      name = preparedName(q.sql);
      this.#names.set(q.sql, name);
    }
    const r = await this.#pool.query({ name, text: q.sql, values: [...q.parameters] });
    return r.rows as R[];
  };

  /** The installation row locked first: every writer of the journal queues on it. */
  write<T>(fn: (tx: Transaction<JournalDB>, inst: InstallationTable) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(async (tx) => {
      const inst = await INSTALLATION_LOCKED.firstOrThrow(tx, {});
      return await fn(tx, inst);
    });
  }

  readonly snapshot: JournalStore["snapshot"] = (fn) =>
    this.db.transaction().setIsolationLevel("repeatable read").setAccessMode("read only")
      .execute(fn);

  async attempt(
    input: AttemptInput,
    a: { newId: (prefix: string) => string; point: (name: string) => Promise<void> },
  ): Promise<AttemptOutcome> {
    for (let i = 0; i < ATTEMPT_BATCH_TRIES; i++) {
      const b = await pgAttemptBatched({ db: this.db, query: this.#query, ...a }, input);
      if (b.kind === "done") return { ok: true, attempt: b.attempt };
      if (b.kind === "decide-under-lock") break;
    }
    return await this.write(async (tx) => {
      const read = await loadForAttempt(tx, input.operationId, input.evidenceId);
      const ctx = { tx, inst: read.inst, ids: { newId: a.newId }, point: a.point };
      return await attemptTx(ctx, input, read);
    });
  }

  async close(): Promise<void> {
    await this.db.destroy();
  }
}
