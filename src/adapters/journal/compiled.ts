/**
 * Query shapes compiled once. Kysely builds and compiles a query's operation tree on every call;
 * for the statements every journal act runs (the installation row, the event insert, the
 * operation by id, …) that was about a third of a simulated seed's CPU (issue 16). A `shape` is
 * built once per dialect with stand-ins for its parameters; each call binds its own values into
 * the compiled parameter list and executes the same SQL text. What runs is exactly what the
 * builder would have compiled for those values, so every guarded statement fences as before.
 *
 * Only shapes whose SQL does not depend on the values may be compiled this way: no `in` lists,
 * no columns left out for `undefined`, no branches on a value inside `build`. `shape` refuses a
 * build in which a stand-in did not become a parameter (inlined into the SQL text instead).
 */
import {
  type CompiledQuery,
  type InsertResult,
  type Kysely,
  NoResultError,
  type QueryNode,
  type QueryResult,
} from "kysely";
import type { JournalDB } from "./schema.ts";

/** Stands in for the argument `key` while a shape is compiled. */
class Slot {
  constructor(readonly key: string) {}
}

/** A compiled query: constant parameters kept, slots naming the argument to bind. */
interface Template {
  readonly compiled: CompiledQuery;
  readonly params: readonly (Slot | { readonly value: unknown })[];
}

type Db = Kysely<JournalDB>;

/** A query builder (`compile()`) or a raw `sql` template (`compile(db)`). */
interface Buildable<R> {
  compile(db: Db): CompiledQuery<R>;
}

/** A query of a fixed shape, executed on any `Kysely` or `Transaction` of a journal. */
export interface Shape<P, R> {
  /** Every row. */
  rows(db: Db, args: P): Promise<R[]>;
  /** The first row, if any. */
  first(db: Db, args: P): Promise<R | undefined>;
  /** The first row; kysely's `NoResultError` when there is none (as `executeTakeFirstOrThrow`). */
  firstOrThrow(db: Db, args: P): Promise<R>;
  /** The rows the statement changed (an UPDATE's guard, an INSERT's count). */
  affected(db: Db, args: P): Promise<bigint>;
  /** The whole result. */
  execute(db: Db, args: P): Promise<QueryResult<R>>;
  /** The compiled statement and, in order, each parameter: a constant or the argument it binds. */
  template(db: Db): {
    readonly compiled: CompiledQuery<R>;
    readonly params: readonly ({ readonly slot: string } | { readonly value: unknown })[];
  };
}

/**
 * Compiles `build` once per dialect (the dialect adapter is shared by a `Kysely` and its
 * transactions) with a stand-in for each of `keys`, and binds the arguments of each call.
 */
export function shape<P extends object, R>(
  keys: readonly (keyof P & string)[],
  build: (db: Db, p: P) => Buildable<R>,
): Shape<P, R> {
  const templates = new WeakMap<object, Template>();
  const template = (db: Db): Template => {
    const adapter = db.getExecutor().adapter;
    let t = templates.get(adapter);
    if (!t) {
      const slots = keys.map((k) => new Slot(k));
      const p = Object.fromEntries(slots.map((s) => [s.key, s])) as unknown as P;
      const compiled = build(db, p).compile(db);
      for (const s of slots) {
        if (!compiled.parameters.includes(s)) {
          throw new Error(`query shape: ${s.key} is not a parameter of ${compiled.sql}`);
        }
      }
      const params = compiled.parameters.map((v) => v instanceof Slot ? v : { value: v });
      t = { compiled, params };
      templates.set(adapter, t);
    }
    return t;
  };
  const compile = (db: Db, args: P): CompiledQuery<R> => {
    const t = template(db);
    const parameters = t.params.map((v) =>
      v instanceof Slot ? (args as Record<string, unknown>)[v.key] : v.value
    );
    return { ...t.compiled, parameters } as CompiledQuery<R>;
  };
  const execute = (db: Db, args: P) => db.executeQuery(compile(db, args));
  return {
    template: (db) => {
      const t = template(db);
      return {
        compiled: t.compiled as CompiledQuery<R>,
        params: t.params.map((v) => v instanceof Slot ? { slot: v.key } : v),
      };
    },
    execute,
    rows: async (db, args) => (await execute(db, args)).rows,
    first: async (db, args) => (await execute(db, args)).rows[0],
    firstOrThrow: async (db, args) => {
      const q = compile(db, args);
      const r = (await db.executeQuery(q)).rows;
      if (r.length === 0) throw new NoResultError(q.query as QueryNode);
      return r[0]!;
    },
    affected: async (db, args) => (await execute(db, args)).numAffectedRows ?? 0n,
  };
}

/** `never` unless `C` names every column of `Row` (an INSERT that leaves none out). */
type Every<Row, C extends readonly string[]> = Exclude<keyof Row, C[number]> extends never ? C
  : never;

/**
 * The INSERT of one whole row of `table`, every column bound (none left to its default): the
 * statement `insertInto(table).values(row)` compiles for a row with all of `columns`.
 */
export function insertRow<T extends keyof JournalDB & string, const C extends readonly string[]>(
  table: T,
  columns: Every<JournalDB[T], C>,
): Shape<JournalDB[T], InsertResult> {
  return shape<JournalDB[T], InsertResult>(
    columns as unknown as (keyof JournalDB[T] & string)[],
    (db, row) => db.insertInto(table).values(row as never) as unknown as Buildable<InsertResult>,
  );
}

/**
 * The INSERT of whole rows of `table`, many per statement: one shape per row count, each the
 * statement `insertInto(table).values(rows)` compiles for that many rows with all of `columns`.
 */
export function insertRows<T extends keyof JournalDB & string, const C extends readonly string[]>(
  table: T,
  columns: Every<JournalDB[T], C>,
): (db: Db, rows: readonly JournalDB[T][]) => Promise<QueryResult<InsertResult>> {
  const cols = columns as readonly string[];
  const byCount = new Map<number, Shape<Record<string, unknown>, InsertResult>>();
  // Per dialect adapter and row count: each parameter's row and column (or its constant), so a
  // call binds its rows' values straight into the compiled order.
  const orders = new WeakMap<object, Map<number, Order>>();
  type Order = {
    readonly compiled: CompiledQuery<InsertResult>;
    readonly at: readonly ({ readonly row: number; readonly col: string } | {
      readonly value: unknown;
    })[];
  };
  return (db, rows) => {
    const adapter = db.getExecutor().adapter;
    let byAdapter = orders.get(adapter);
    if (!byAdapter) orders.set(adapter, byAdapter = new Map());
    let order = byAdapter.get(rows.length);
    if (!order) {
      let s = byCount.get(rows.length);
      if (!s) {
        const keys = rows.flatMap((_, i) => cols.map((c) => `${i}:${c}`));
        s = shape<Record<string, unknown>, InsertResult>(
          keys,
          (db, p) =>
            db.insertInto(table).values(
              rows.map((_, i) => Object.fromEntries(cols.map((c) => [c, p[`${i}:${c}`]]))) as never,
            ) as unknown as Buildable<InsertResult>,
        );
        byCount.set(rows.length, s);
      }
      const t = s.template(db);
      order = {
        compiled: t.compiled,
        at: t.params.map((p) => {
          if (!("slot" in p)) return p;
          const cut = p.slot.indexOf(":");
          return { row: Number(p.slot.slice(0, cut)), col: p.slot.slice(cut + 1) };
        }),
      };
      byAdapter.set(rows.length, order);
    }
    const parameters = order.at.map((a) =>
      "col" in a ? (rows[a.row] as unknown as Record<string, unknown>)[a.col] : a.value
    );
    return db.executeQuery({ ...order.compiled, parameters });
  };
}
