/**
 * An embedded libSQL journal (`file:` and `:memory:`) on libSQL's native driver, under kysely.
 *
 * Why not @libsql/client: for an embedded database the client is a thin asynchronous wrapper over
 * this same native driver, and the wrapper was most of a journal act's cost (issues 16 and 18). It
 * prepares every statement anew on each call, probes it with `raw()` (which throws for a write)
 * and reads its columns twice, converts every integer through a BigInt, and builds every row with
 * one `Object.defineProperty` per column, which leaves the rows slow dictionary objects for the
 * code that reads them. Here each connection keeps its statements prepared (keyed by the SQL
 * text), integers come back as numbers and rows are plain objects.
 *
 * What stays exactly as it was, because the journal's fencing rests on it:
 * - one connection per journal, so per-connection pragmas hold and a `:memory:` journal is one
 *   database;
 * - every transaction is `BEGIN IMMEDIATE` (SQLite's write lock, held against other processes),
 *   with the same busy timeout for another process holding it;
 * - kysely's connection mutex (SQLite's adapter declares one connection) keeps every other query
 *   waiting while a transaction holds the connection, and a write batch that comes past kysely
 *   meanwhile is refused (`TRANSACTION_ACTIVE`, as the client's single-connection pool refused
 *   it) rather than run inside someone else's transaction;
 * - the same SQL text runs, bound with the same values (booleans as 0/1, dates as their
 *   milliseconds), and a write batch is `BEGIN IMMEDIATE`, its statements, `COMMIT`, rolled back
 *   whole when any statement fails, now in one synchronous call that nothing can interleave;
 * - errors carry SQLite's code (`SQLITE_CONSTRAINT_PRIMARYKEY`, `SQLITE_NOTADB`, …).
 *
 * Remote libSQL servers (`libsql:`, `http(s):`, `ws(s):`) still go through the client
 * (`open.ts`).
 */
import { createRequire } from "node:module";
import {
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from "kysely";

/** A statement of a write batch: SQL text and positional arguments. */
export interface BatchStatement {
  readonly sql: string;
  readonly args: readonly unknown[];
}

/** Runs statements as one write transaction, all or nothing; each one's changed-row count. */
export interface WriteBatcher {
  batch(statements: readonly BatchStatement[]): Promise<{ readonly rowsAffected: number }[]>;
}

/** The part of libsql's native `Statement` used here. */
interface NativeStatement {
  readonly reader: boolean;
  raw(on?: boolean): NativeStatement;
  safeIntegers(on?: boolean): NativeStatement;
  run(args: unknown[]): { changes: number; lastInsertRowid: number | bigint };
  all(args: unknown[]): unknown[][];
}

/** The part of libsql's native `Database` used here. */
interface NativeDatabase {
  readonly open: boolean;
  readonly inTransaction: boolean;
  prepare(sql: string): NativeStatement;
  close(): void;
}

type NativeDatabaseClass = new (path: string, opts: { timeout: number }) => NativeDatabase;

/** The libsql module the client itself loads (same build, same native library). */
function nativeDatabaseClass(): NativeDatabaseClass {
  const require = createRequire(import.meta.resolve("@libsql/client"));
  return require("libsql") as NativeDatabaseClass;
}

/** Statements that may change the schema or a connection setting: prepared fresh, never kept. */
const SCHEMA_STATEMENT = /^\s*(create|alter|drop|pragma|vacuum|attach|detach|reindex|analyze)\b/i;

/**
 * Schema statements after which a kept statement's column list may be wrong (`SELECT *` of a
 * table whose columns changed): they empty the connection's kept statements. SQLite itself
 * prepares a kept statement again whenever the schema changed, so a trigger or an index dropped
 * and created again (the campaign's restore does) needs nothing more.
 */
const COLUMNS_MAY_CHANGE =
  /^\s*((create|alter|drop)\s+((temp|temporary|virtual)\s+)?(table|view)|attach|detach)\b/i;

/** Per connection; a journal uses a few dozen shapes (multi-row inserts vary by row count). */
const MAX_STATEMENTS = 512;

/** A prepared statement and what cannot change about it while the schema stands. */
interface Prepared {
  readonly stmt: NativeStatement;
  /** Column names of a statement that returns rows (first occurrence wins, as the client). */
  readonly columns: readonly string[] | undefined;
}

/** An error the journal's callers can tell apart by `code`, as the client's errors. */
export class NativeLibsqlError extends Error {
  constructor(message: string, readonly code: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "LibsqlError";
  }
}

function toSql(value: unknown): unknown {
  switch (typeof value) {
    case "boolean":
      return value ? 1 : 0;
    case "number":
      if (!Number.isFinite(value)) {
        throw new RangeError("only finite numbers can be bound to a journal statement");
      }
      return value;
    case "undefined":
      throw new TypeError("undefined cannot be bound to a journal statement");
    default:
      if (value instanceof Date) return value.valueOf();
      return value;
  }
}

function bind(args: readonly unknown[]): unknown[] {
  const out = new Array<unknown>(args.length);
  for (let i = 0; i < args.length; i++) out[i] = toSql(args[i]);
  return out;
}

/** One native connection; `owner` is the handle whose transaction is open, if any. */
class NativeConnection {
  readonly #db: NativeDatabase;
  readonly #statements = new Map<string, Prepared>();
  owner: NativeHandle | undefined;

  constructor(db: NativeDatabase) {
    this.#db = db;
  }

  get open(): boolean {
    return this.#db.open;
  }

  #prepare(sql: string): Prepared {
    if (SCHEMA_STATEMENT.test(sql)) {
      if (COLUMNS_MAY_CHANGE.test(sql)) this.#statements.clear();
      return describe(this.#db.prepare(sql));
    }
    let p = this.#statements.get(sql);
    if (!p) {
      if (this.#statements.size >= MAX_STATEMENTS) this.#statements.clear();
      p = describe(this.#db.prepare(sql));
      this.#statements.set(sql, p);
    }
    return p;
  }

  execute<R>(sql: string, args: readonly unknown[]): QueryResult<R> {
    const p = this.#prepare(sql);
    const bound = bind(args);
    if (p.columns) {
      const raw = p.stmt.all(bound);
      const rows = new Array<R>(raw.length);
      const cols = p.columns;
      for (let r = 0; r < raw.length; r++) {
        const values = raw[r]!;
        const row: Record<string, unknown> = {};
        for (let c = 0; c < cols.length; c++) {
          const name = cols[c]!;
          if (!(name in row)) row[name] = values[c];
        }
        rows[r] = row as R;
      }
      // As the client: a statement that returns rows reports no changed-row count.
      return { rows, numAffectedRows: 0n };
    }
    const info = p.stmt.run(bound);
    return {
      rows: [],
      numAffectedRows: BigInt(info.changes),
      insertId: BigInt(info.lastInsertRowid),
    };
  }

  /** A statement's changed-row count, for the write batch. */
  run(sql: string, args: readonly unknown[]): number {
    return Number(this.execute(sql, args).numAffectedRows ?? 0n);
  }

  get inTransaction(): boolean {
    return this.#db.open && this.#db.inTransaction;
  }

  close(): void {
    this.#statements.clear();
    if (this.#db.open) this.#db.close();
  }
}

function describe(stmt: NativeStatement): Prepared {
  stmt.safeIntegers(false);
  if (!stmt.reader) return { stmt, columns: undefined };
  stmt.raw(true);
  const columns = (stmt as unknown as { columns(): { name: string }[] }).columns().map((c) =>
    c.name
  );
  return { stmt, columns };
}

/** Maps the native driver's error to one with a `code` (its SQLite code) and a clean message. */
function mapError(e: unknown): unknown {
  if (e instanceof NativeLibsqlError) return e;
  if (e instanceof Error && typeof (e as { code?: unknown }).code === "string") {
    return new NativeLibsqlError(e.message, (e as unknown as { code: string }).code, { cause: e });
  }
  return e;
}

function refuseBusy(): never {
  throw new NativeLibsqlError(
    "This journal has a single connection, which an open transaction is holding",
    "TRANSACTION_ACTIVE",
  );
}

/** What kysely holds for one acquisition of the shared connection (its mutex makes it exclusive). */
class NativeHandle implements DatabaseConnection {
  constructor(private readonly lease: Lease) {}

  private get conn(): NativeConnection {
    return this.lease.connection();
  }

  executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    return attempt(() => this.conn.execute<R>(compiled.sql, compiled.parameters));
  }

  // deno-lint-ignore require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error("the journal's libSQL driver does not stream");
  }

  begin(): void {
    if (this.conn.owner !== undefined) refuseBusy();
    this.conn.execute("BEGIN IMMEDIATE", []);
    this.conn.owner = this;
  }

  end(sql: "COMMIT" | "ROLLBACK"): void {
    try {
      if (sql === "COMMIT" || this.conn.inTransaction) this.conn.execute(sql, []);
    } finally {
      // A failed COMMIT leaves SQLite's transaction open; kysely rolls back next, as its owner.
      if (sql === "ROLLBACK" || !this.conn.inTransaction) this.conn.owner = undefined;
    }
  }
}

class NativeDriver implements Driver {
  constructor(private readonly lease: Lease) {}

  init(): Promise<void> {
    return Promise.resolve();
  }

  acquireConnection(): Promise<DatabaseConnection> {
    return attempt(() => {
      this.lease.connection();
      return new NativeHandle(this.lease);
    });
  }

  beginTransaction(connection: DatabaseConnection): Promise<void> {
    return attempt(() => (connection as NativeHandle).begin());
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return attempt(() => (connection as NativeHandle).end("COMMIT"));
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return attempt(() => (connection as NativeHandle).end("ROLLBACK"));
  }

  releaseConnection(): Promise<void> {
    return Promise.resolve();
  }

  destroy(): Promise<void> {
    return attempt(() => this.lease.end());
  }
}

function attempt<T>(f: () => T): Promise<T> {
  try {
    return Promise.resolve(f());
  } catch (e) {
    return Promise.reject(mapError(e));
  }
}

/** One user's time on a connection: once ended, whatever still holds it is refused. */
class Lease {
  #conn: NativeConnection | undefined;

  constructor(conn: NativeConnection, private readonly onEnd: (c: NativeConnection) => void) {
    this.#conn = conn;
  }

  connection(): NativeConnection {
    if (!this.#conn) {
      throw new NativeLibsqlError("the journal is closed", "CLIENT_CLOSED");
    }
    return this.#conn;
  }

  end(): void {
    const conn = this.#conn;
    this.#conn = undefined;
    if (conn) this.onEnd(conn);
  }
}

/** A dialect over one native connection, and the write batch on the same connection. */
export interface NativeJournalConnection {
  readonly dialect: Dialect;
  readonly batcher: WriteBatcher;
}

/**
 * An open native connection, handed to one user at a time (`lease`). The simulation campaign
 * reuses one in-memory database across seeds this way: libSQL keeps some of a closed `:memory:`
 * database's memory, and opening and migrating a journal is a tenth of a small seed.
 */
export class NativeLibsqlDatabase {
  readonly #conn: NativeConnection;

  private constructor(conn: NativeConnection) {
    this.#conn = conn;
  }

  /**
   * Opens `path` (a file path or `:memory:`), waiting up to `busyTimeoutMs` for another
   * process's write lock. Throws the driver's error (with its SQLite code) when the database
   * cannot be opened.
   */
  static open(path: string, busyTimeoutMs: number): NativeLibsqlDatabase {
    const Database = nativeDatabaseClass();
    let db: NativeDatabase;
    try {
      db = new Database(path, { timeout: busyTimeoutMs });
    } catch (e) {
      throw mapError(e);
    }
    const conn = new NativeConnection(db);
    // Fail fast when the database cannot be used at all (as the client's probe on opening).
    try {
      conn.execute("SELECT 1 AS checkThatTheDatabaseCanBeOpened", []);
    } catch (e) {
      conn.close();
      throw mapError(e);
    }
    return new NativeLibsqlDatabase(conn);
  }

  /**
   * A dialect and batch for one user. Destroying the user's kysely ends the lease: `onEnd` runs
   * once (by default it closes the database), and anything still holding the lease's kysely or
   * batch is refused from then on, so a straggler of one user never writes into the next one's.
   */
  lease(onEnd: (db: NativeLibsqlDatabase) => void = (d) => d.close()): NativeJournalConnection {
    const lease = new Lease(this.#conn, () => onEnd(this));
    const driver = new NativeDriver(lease);
    const dialect: Dialect = {
      createAdapter: () => new SqliteAdapter(),
      createDriver: () => driver,
      createIntrospector: (k: Kysely<unknown>) => new SqliteIntrospector(k),
      createQueryCompiler: () => new SqliteQueryCompiler(),
    };
    const batcher: WriteBatcher = {
      batch(statements) {
        return attempt(() => {
          const conn = lease.connection();
          if (conn.owner !== undefined) refuseBusy();
          conn.execute("BEGIN IMMEDIATE", []);
          try {
            const out = statements.map((s) => ({ rowsAffected: conn.run(s.sql, s.args) }));
            conn.execute("COMMIT", []);
            return out;
          } finally {
            if (conn.inTransaction) conn.execute("ROLLBACK", []);
          }
        });
      },
    };
    return { dialect, batcher };
  }

  /** False once closed, or when a transaction was left open (then it is not fit to reuse). */
  get reusable(): boolean {
    return this.#conn.open && !this.#conn.inTransaction && this.#conn.owner === undefined;
  }

  close(): void {
    this.#conn.close();
  }
}

/** Opens `path` on the native driver for one user (closed when that user's kysely is destroyed). */
export function openNativeLibsql(path: string, busyTimeoutMs: number): NativeJournalConnection {
  return NativeLibsqlDatabase.open(path, busyTimeoutMs).lease();
}
