/**
 * The journal on libSQL (an embedded file, `:memory:`, or a libSQL server): the `JournalStore`
 * under `KyselyJournal`. Every write transaction is `BEGIN IMMEDIATE` (SQLite's write lock
 * excludes other processes) and this process's writers are queued per database (`serialise`),
 * because the native driver waits for the lock synchronously and must never contend with itself.
 */
import { Kysely, type Transaction } from "kysely";
import type { IdSource } from "../../ports/clock.ts";
import type { AttemptInput, Journal, OpenJournalOptions } from "../../ports/journal.ts";
import { attemptBatched, attemptTx, loadForAttempt } from "./attempt.ts";
import { copyRows, type JournalBackup, replaceRows } from "./libsql_backup.ts";
import { KyselyJournal } from "./kysely_journal.ts";
import { shape } from "./compiled.ts";
import { LATEST_SCHEMA, migrate, schemaVersion } from "./migrations/mod.ts";
import {
  BUSY_TIMEOUT_MS,
  connect,
  connectWithBatcher,
  journalUrl,
  opening,
  prepare,
  serialise,
  withPragmas,
} from "./open.ts";
import type { InstallationTable, JournalDB } from "./schema.ts";
import { NativeLibsqlDatabase, type WriteBatcher } from "./native_libsql.ts";
import type { AttemptOutcome, JournalStore } from "./store.ts";

/** Mints `<prefix>_<26 base32>` identifiers from 128 bits of the platform CSPRNG. */
export { cryptoIdSource } from "./ids.ts";

/**
 * Opens (and by default migrates) a journal. `url` is `file:…`, `:memory:`, `libsql://…` or
 * `http(s)://…`; a bare path is treated as a file.
 */
export async function openJournal(opts: OpenJournalOptions): Promise<Journal> {
  return (await openLibsql(opts)).journal;
}

/**
 * A journal opened with a backup and a restore of its whole contents (`libsql_backup.ts`), for
 * the simulation campaign's journal restore (app/dst/). Each waits for this process's write
 * transactions in flight and runs between them, never inside one; a restore replaces the rows
 * under a journal that stays open, as a restore under a process that was not stopped does.
 */
export interface RestorableJournal {
  readonly journal: Journal;
  backup(): Promise<JournalBackup>;
  restore(backup: JournalBackup): Promise<void>;
}

export async function openRestorableJournal(opts: OpenJournalOptions): Promise<RestorableJournal> {
  const { journal, store } = await openLibsql(opts);
  return restorable(journal, store);
}

/**
 * In-memory journals opened one after another in one process: the simulation campaign's seeds.
 * Each `open` hands out a journal exactly as a new `:memory:` one starts (the migrated schema, a
 * first epoch minted from the caller's ids, nothing else), on a database that a closed journal
 * gave back: its rows replaced with the ones it held right after migrating, in one write
 * transaction. libSQL keeps some of a closed `:memory:` database's memory (about 1 MB each, so a
 * long campaign ran out of it), and opening and migrating one was a tenth of a small seed. A
 * journal closed with a transaction still open is not given back; a straggler still holding a
 * closed journal is refused (`native_libsql.ts` leases), never let into the next one.
 */
export class MemoryJournalPool {
  readonly #idle: PooledDatabase[] = [];

  async open(opts: Omit<OpenJournalOptions, "url" | "migrate">): Promise<RestorableJournal> {
    const url = ":memory:";
    const reused = this.#idle.pop();
    const pooled = reused ?? { native: NativeLibsqlDatabase.open(url, BUSY_TIMEOUT_MS) };
    const { dialect, batcher } = pooled.native.lease((d) => {
      if (d.reusable && pooled.pristine) this.#idle.push(pooled);
      else d.close();
    });
    const db = await withPragmas(new Kysely<JournalDB>({ dialect }), url);
    try {
      if (pooled.pristine) {
        const pristine = pooled.pristine;
        await db.transaction().execute((tx) => replaceRows(tx, pristine));
      } else {
        await migrate(db as Kysely<unknown>, "the campaign's in-memory journal");
        pooled.pristine = await db.transaction().execute((tx) => copyRows(tx));
      }
      await prepare(db, { url, migrate: false, ids: opts.ids, nowMs: opts.nowMs });
    } catch (e) {
      pooled.pristine = undefined;
      await db.destroy();
      throw e;
    }
    const store = new LibsqlStore(db, batcher, `memory:${++memoryCount}`);
    return restorable(new KyselyJournal(store, { ids: opts.ids, point: opts.writePoint }), store);
  }

  /** Closes the databases no journal holds. */
  close(): void {
    for (const p of this.#idle.splice(0)) p.native.close();
  }
}

interface PooledDatabase {
  readonly native: NativeLibsqlDatabase;
  /** The rows right after migrating (the schema version), once migrated. */
  pristine?: JournalBackup | undefined;
}

function restorable(journal: Journal, store: LibsqlStore): RestorableJournal {
  return {
    journal,
    backup: () => store.snapshot((tx) => copyRows(tx)),
    restore: (b) => store.write((tx) => replaceRows(tx, b)),
  };
}

async function openLibsql(
  opts: OpenJournalOptions,
): Promise<{ journal: Journal; store: LibsqlStore }> {
  const url = journalUrl(opts.url);
  const { db, batcher } = await connectWithBatcher(url);
  try {
    await opening(
      url,
      () => prepare(db, { url, migrate: opts.migrate ?? true, ids: opts.ids, nowMs: opts.nowMs }),
    );
  } catch (e) {
    await db.destroy();
    throw e;
  }
  // `:memory:` databases are private to their client; file journals share one queue per file.
  const key = url === ":memory:" ? `memory:${++memoryCount}` : url;
  const store = new LibsqlStore(db, batcher, key);
  return { journal: new KyselyJournal(store, { ids: opts.ids, point: opts.writePoint }), store };
}

let memoryCount = 0;

/** The installation row, read at the start of every write transaction (its epoch fences it). */
const INSTALLATION = shape([], (tx) => tx.selectFrom("installation").selectAll());

/** Batched attempts tried before an interactive transaction (only another process's writes race). */
const ATTEMPT_BATCH_TRIES = 3;

class LibsqlStore implements JournalStore {
  readonly db: Kysely<JournalDB>;
  /** The same connection as `db`, for single-call write batches. */
  readonly #batcher: WriteBatcher;
  readonly #key: string;

  constructor(db: Kysely<JournalDB>, batcher: WriteBatcher, key: string) {
    this.db = db;
    this.#batcher = batcher;
    this.#key = key;
  }

  write<T>(fn: (tx: Transaction<JournalDB>, inst: InstallationTable) => Promise<T>): Promise<T> {
    return serialise(this.#key, () =>
      this.db.transaction().execute(async (tx) => {
        const inst = await INSTALLATION.firstOrThrow(tx, {});
        return await fn(tx, inst);
      }));
  }

  /**
   * One connection and SQLite's transaction isolation: a transaction is one moment. Queued with
   * the writers: while this read transaction is open, the attempt's single-call write batch on the
   * same connection fails with libSQL's TRANSACTION_ACTIVE (seen when the loop's report reads met
   * a rollout's attempts). Never called from inside a write (it would wait for itself).
   */
  readonly snapshot: JournalStore["snapshot"] = (fn) =>
    serialise(this.#key, () => this.db.transaction().execute(fn));

  /**
   * The attempt transaction in two round trips when nothing contends (`attemptBatched`); a
   * refusal, or a journal that keeps moving under it, is decided in an interactive write
   * transaction instead. Runs inside this process's write queue.
   */
  attempt(
    input: AttemptInput,
    a: { newId: (prefix: string) => string; point: (name: string) => Promise<void> },
  ): Promise<AttemptOutcome> {
    return serialise(this.#key, async () => {
      const batched = { db: this.db, batcher: this.#batcher, ...a };
      for (let i = 0; i < ATTEMPT_BATCH_TRIES; i++) {
        const b = await attemptBatched(batched, input);
        if (b.kind === "done") return { ok: true, attempt: b.attempt };
        if (b.kind === "decide-under-lock") break;
      }
      return await this.db.transaction().execute(async (tx) => {
        const read = await loadForAttempt(tx, input.operationId, input.evidenceId);
        const ids = { newId: a.newId };
        return await attemptTx({ tx, inst: read.inst, ids, point: a.point }, input, read);
      });
    });
  }

  async close(): Promise<void> {
    await serialise(this.#key, () => Promise.resolve());
    await this.db.destroy();
  }
}

/** Applies pending migrations to the journal at `location`; returns the versions before and after. */
export async function migrateJournal(
  location: string,
  a: { ids: IdSource; nowMs: number },
): Promise<{ from: number; to: number }> {
  const url = journalUrl(location);
  const db = await connect(url);
  try {
    const from = await opening(url, () => schemaVersion(db as Kysely<unknown>));
    await opening(url, () => prepare(db, { url, migrate: true, ids: a.ids, nowMs: a.nowMs }));
    return { from, to: LATEST_SCHEMA };
  } finally {
    await db.destroy();
  }
}
