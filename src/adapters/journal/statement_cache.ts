/**
 * Keeps each libSQL connection's statements prepared. @libsql/client 0.18 prepares every statement
 * anew on each call, probes it with `raw()` (which throws for a statement that returns no rows) and
 * reads its columns twice: with kysely's compilation, about half of a simulated seed's CPU
 * (docs/dst.md, Budgets and speed). The client's connections are private to it, so the cache sits
 * on the native driver's `Database` class, the very module the client loads: `prepare` answers
 * from a per-connection map keyed by the SQL text, and the statement it hands back remembers what
 * cannot change while the schema stands (whether it returns rows, its columns, its integer mode).
 * Executing is unchanged: the same SQL, bound and run on the same connection in the same
 * transaction, so the journal's fencing (the guarded UPDATEs, the batch that is the commit) is the
 * same statement by statement. A schema statement (CREATE, ALTER, DROP, PRAGMA, …) is prepared
 * fresh and empties its connection's map, since it may change what a cached statement reads.
 */
import { createRequire } from "node:module";

/** The part of libsql's `Statement` the client (and this cache) uses. */
interface NativeStatement {
  raw(on?: boolean): unknown;
  safeIntegers(on?: boolean): unknown;
  columns(): unknown;
  run(...args: unknown[]): unknown;
  get(...args: unknown[]): unknown;
  all(...args: unknown[]): unknown;
  iterate(...args: unknown[]): unknown;
  pluck(on?: boolean): unknown;
  interrupt(): void;
  readonly reader: boolean;
}

const STATEMENTS = Symbol("cairn.preparedStatements");

interface NativeDatabase {
  prepare(sql: string): NativeStatement;
  close(): unknown;
  [STATEMENTS]?: Map<string, PreparedStatement>;
}

/** Statements that may change the schema (or a connection setting): never cached. */
const SCHEMA_STATEMENT = /^\s*(create|alter|drop|pragma|vacuum|attach|detach|reindex|analyze)\b/i;

/** Per connection; a journal uses a few dozen shapes (multi-row inserts vary by row count). */
const MAX_STATEMENTS = 512;

/** A prepared statement that remembers its answers to the client's per-call probes. */
class PreparedStatement {
  #raw: boolean | undefined;
  /** `raw(true)` refused: the statement returns no rows (the client's probe for a write). */
  #notReader: unknown;
  #safeIntegers: boolean | undefined;
  #columns: unknown;

  constructor(private readonly inner: NativeStatement) {}

  raw(on = true): this {
    if (on && this.#notReader !== undefined) throw this.#notReader;
    if (on !== this.#raw) {
      try {
        this.inner.raw(on);
      } catch (e) {
        if (on) this.#notReader = e;
        throw e;
      }
      this.#raw = on;
    }
    return this;
  }

  safeIntegers(on = true): this {
    if (on !== this.#safeIntegers) {
      this.inner.safeIntegers(on);
      this.#safeIntegers = on;
    }
    return this;
  }

  columns(): unknown {
    this.#columns ??= this.inner.columns();
    return this.#columns;
  }

  run(...args: unknown[]): unknown {
    return this.inner.run(...args);
  }

  get(...args: unknown[]): unknown {
    return this.inner.get(...args);
  }

  all(...args: unknown[]): unknown {
    return this.inner.all(...args);
  }

  iterate(...args: unknown[]): unknown {
    return this.inner.iterate(...args);
  }

  pluck(on?: boolean): this {
    this.inner.pluck(on);
    return this;
  }

  interrupt(): void {
    this.inner.interrupt();
  }

  get reader(): boolean {
    return this.inner.reader;
  }
}

let installed = false;

/** Installs the cache on the driver the libSQL client uses (once per process; idempotent). */
export function keepStatementsPrepared(): void {
  if (installed) return;
  installed = true;
  const require = createRequire(import.meta.resolve("@libsql/client"));
  const Database = require("libsql") as { prototype: NativeDatabase };
  const prepare = Database.prototype.prepare;
  const close = Database.prototype.close;
  Database.prototype.prepare = function (this: NativeDatabase, sql: string) {
    if (SCHEMA_STATEMENT.test(sql)) {
      this[STATEMENTS]?.clear();
      return prepare.call(this, sql);
    }
    const cache = this[STATEMENTS] ??= new Map();
    let s = cache.get(sql);
    if (!s) {
      if (cache.size >= MAX_STATEMENTS) cache.clear();
      s = new PreparedStatement(prepare.call(this, sql));
      cache.set(sql, s);
    }
    return s as unknown as NativeStatement;
  };
  Database.prototype.close = function (this: NativeDatabase) {
    this[STATEMENTS]?.clear();
    return close.call(this);
  };
}
