/**
 * Query shapes compiled once (src/adapters/journal/compiled.ts): a shape executes the very SQL
 * and parameters kysely's builder compiles for the same values, on SQLite and PostgreSQL
 * compilers, and refuses a build in which an argument did not become a parameter.
 */
import { deepStrictEqual as assertEquals, throws as assertThrows } from "node:assert/strict";
import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  sql,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from "kysely";
import { insertRow, insertRows, shape } from "../../../src/adapters/journal/compiled.ts";
import type { JournalDB } from "../../../src/adapters/journal/schema.ts";

/** A kysely with a driver that records the compiled queries instead of running them. */
function recording(dialect: "sqlite" | "pg") {
  const seen: { sql: string; parameters: readonly unknown[] }[] = [];
  const db = new Kysely<JournalDB>({
    dialect: {
      createAdapter: () => dialect === "pg" ? new PostgresAdapter() : new SqliteAdapter(),
      createDriver: () => {
        const d = new DummyDriver();
        d.acquireConnection = () =>
          Promise.resolve({
            executeQuery: (q) => {
              seen.push({ sql: q.sql, parameters: q.parameters });
              return Promise.resolve({ rows: [] });
            },
            streamQuery: () => {
              throw new Error("no streams");
            },
          });
        return d;
      },
      createIntrospector: (db) =>
        dialect === "pg" ? new PostgresIntrospector(db) : new SqliteIntrospector(db),
      createQueryCompiler: () =>
        dialect === "pg" ? new PostgresQueryCompiler() : new SqliteQueryCompiler(),
    },
  });
  return { db, seen };
}

const MOVE = shape(
  ["to", "id", "gen"],
  (tx, p: { to: string; id: string; gen: number }) =>
    tx.updateTable("operations").set({ state: p.to }).where("id", "=", p.id)
      .where("owner_gen", "=", p.gen).where("owner_epoch", "=", "ep_1"),
);
const EVENT_COLUMNS = [
  "seq",
  "at_ms",
  "kind",
  "machine",
  "revision",
  "operation_id",
  "epoch",
  "actor",
  "body",
  "prev_hash",
  "hash",
] as const;
const EVENT = insertRow("events", EVENT_COLUMNS);
const EVENTS = insertRows("events", EVENT_COLUMNS);
const count = (machine: unknown) =>
  sql<{ n: number }>`SELECT count(*) AS n FROM events WHERE machine = ${machine} AND seq > ${7}`;
const HEAD = shape(["machine"], (_tx, p: { machine: string }) => count(p.machine));

function event(seq: number) {
  return {
    seq,
    at_ms: 10 + seq,
    kind: "k",
    machine: seq % 2 ? null : "m",
    revision: null,
    operation_id: null,
    epoch: "ep",
    actor: "a",
    body: "{}",
    prev_hash: "p",
    hash: `h${seq}`,
  };
}

for (const dialect of ["sqlite", "pg"] as const) {
  Deno.test(`query shapes (${dialect}): each call binds its values into the builder's SQL`, async () => {
    const { db, seen } = recording(dialect);
    await db.transaction().execute(async (tx) => {
      for (const [to, id, gen] of [["running", "op_1", 1], ["failed", "op_2", 2]] as const) {
        await MOVE.execute(tx, { to, id, gen });
        await tx.updateTable("operations").set({ state: to }).where("id", "=", id)
          .where("owner_gen", "=", gen).where("owner_epoch", "=", "ep_1").execute();
      }
      await EVENT.execute(tx, event(1));
      await tx.insertInto("events").values(event(1)).execute();
      for (const n of [1, 3, 3, 2]) {
        const rows = Array.from({ length: n }, (_, i) => event(i + n));
        await EVENTS(tx, rows);
        await tx.insertInto("events").values(rows).execute();
      }
      await HEAD.execute(tx, { machine: "m" });
      await count("m").execute(tx);
    });
    for (let i = 0; i < seen.length; i += 2) assertEquals(seen[i], seen[i + 1]);
    assertEquals(seen.length, 16);
  });
}

Deno.test("query shapes: an argument that is not a parameter is refused", async () => {
  const { db } = recording("sqlite");
  const inlined = shape(
    ["table"],
    (_tx, p: { table: string }) => sql`SELECT * FROM ${sql.raw(String(p.table))}`,
  );
  await db.transaction().execute((tx) => {
    assertThrows(() => inlined.execute(tx, { table: "events" }), /table is not a parameter/);
    return Promise.resolve();
  });
});
