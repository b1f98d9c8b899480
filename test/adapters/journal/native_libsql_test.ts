/**
 * The embedded journal's native libSQL driver (src/adapters/journal/native_libsql.ts): a kept
 * statement answers as a fresh one would (after a schema change, after an error, in a batch),
 * a write batch is all or nothing, a write batch during an open transaction is refused, and
 * values cross as the client carried them (booleans 0/1, integers as numbers, first column of a
 * name wins).
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { Kysely, sql } from "kysely";
import {
  NativeLibsqlDatabase,
  openNativeLibsql,
} from "../../../src/adapters/journal/native_libsql.ts";

// deno-lint-ignore no-explicit-any
type Db = Kysely<any>;

function open(path = ":memory:") {
  const { dialect, batcher } = openNativeLibsql(path, 1000);
  return { db: new Kysely<never>({ dialect }) as Db, batcher };
}

const codeOf = (e: unknown) => String((e as { code?: string } | undefined)?.code);

Deno.test("native libSQL: a schema change is seen by the same SELECT text", async () => {
  const { db } = open();
  try {
    await sql`CREATE TABLE t (a INTEGER)`.execute(db);
    await sql`INSERT INTO t (a) VALUES (${1})`.execute(db);
    assertEquals((await sql`SELECT * FROM t`.execute(db)).rows, [{ a: 1 }]);
    await sql`ALTER TABLE t ADD COLUMN b TEXT DEFAULT 'x'`.execute(db);
    assertEquals((await sql`SELECT * FROM t`.execute(db)).rows, [{ a: 1, b: "x" }]);
  } finally {
    await db.destroy();
  }
});

Deno.test("native libSQL: constraint errors keep SQLite's code; a batch is all or nothing", async () => {
  const { db, batcher } = open();
  try {
    await sql`CREATE TABLE t (a INTEGER PRIMARY KEY)`.execute(db);
    const insert = "INSERT INTO t (a) VALUES (?)";
    assertEquals(await batcher.batch([{ sql: insert, args: [1] }]), [{ rowsAffected: 1 }]);
    const e = await sql`INSERT INTO t (a) VALUES (${1})`.execute(db).then(
      () => undefined,
      (x) => x,
    );
    assert(codeOf(e).startsWith("SQLITE_CONSTRAINT"), String(e));
    const r = await sql`INSERT INTO t (a) VALUES (${2})`.execute(db);
    assertEquals(r.numAffectedRows, 1n);
    // The failing statement rolls back the ones before it, and the connection is usable after.
    const b = await batcher.batch([{ sql: insert, args: [3] }, { sql: insert, args: [3] }])
      .then(() => undefined, (x) => x);
    assert(codeOf(b).startsWith("SQLITE_CONSTRAINT"), String(b));
    const rows = await sql<{ a: number }>`SELECT a FROM t ORDER BY a`.execute(db);
    assertEquals(rows.rows.map((x) => x.a), [1, 2]);
    const changed = await batcher.batch([
      { sql: "UPDATE t SET a = a + 10 WHERE a > ?", args: [0] },
      { sql: "DELETE FROM t WHERE a = ?", args: [99] },
    ]);
    assertEquals(changed, [{ rowsAffected: 2 }, { rowsAffected: 0 }]);
  } finally {
    await db.destroy();
  }
});

Deno.test("native libSQL: a transaction rolls back whole, and holds the connection while open", async () => {
  const { db, batcher } = open();
  try {
    await sql`CREATE TABLE t (a INTEGER)`.execute(db);
    const failed = await db.transaction().execute(async (tx) => {
      await sql`INSERT INTO t (a) VALUES (${4})`.execute(tx);
      // A write batch past kysely's connection mutex: refused, never run inside the transaction.
      const batch = await batcher.batch([{ sql: "INSERT INTO t (a) VALUES (?)", args: [6] }])
        .then(() => undefined, (x) => x);
      assertEquals(codeOf(batch), "TRANSACTION_ACTIVE");
      throw new Error("roll back");
    }).then(() => undefined, (x) => x);
    assertEquals((failed as Error).message, "roll back");
    assertEquals((await sql`SELECT count(*) AS n FROM t`.execute(db)).rows, [{ n: 0 }]);
    // The connection is free again.
    await db.transaction().execute((tx) => sql`INSERT INTO t (a) VALUES (${7})`.execute(tx));
    assertEquals((await sql`SELECT a FROM t`.execute(db)).rows, [{ a: 7 }]);
  } finally {
    await db.destroy();
  }
});

Deno.test("native libSQL: values cross as the client carried them", async () => {
  const { db } = open();
  try {
    await sql`CREATE TABLE t (a INTEGER, b TEXT, c REAL)`.execute(db);
    await sql`INSERT INTO t VALUES (${true}, ${"x"}, ${1.5}), (${false}, ${null}, ${2})`.execute(
      db,
    );
    const rows = await sql`SELECT * FROM t ORDER BY a`.execute(db);
    assertEquals(rows.rows, [{ a: 0, b: null, c: 2 }, { a: 1, b: "x", c: 1.5 }]);
    assertEquals(typeof (rows.rows[0] as { a: unknown }).a, "number");
    // Two columns of one name: the first wins, as @libsql/client's rows had it.
    const dup = await sql`SELECT 1 AS v, 2 AS v`.execute(db);
    assertEquals(dup.rows, [{ v: 1 }]);
    const bad = await sql`SELECT ${Number.NaN} AS v`.execute(db).then(() => undefined, (x) => x);
    assert(bad instanceof RangeError, String(bad));
  } finally {
    await db.destroy();
  }
});

Deno.test("native libSQL: a file that is not a database says SQLITE_NOTADB", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cairn-native-" });
  try {
    await Deno.writeTextFile(
      `${dir}/x.db`,
      "this is not a database, it is a text file\n".repeat(200),
    );
    const { db } = open(`${dir}/x.db`);
    const e = await sql`PRAGMA journal_mode = WAL`.execute(db).then(() => undefined, (x) => x);
    await db.destroy();
    assertEquals(codeOf(e), "SQLITE_NOTADB");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("native libSQL: a trigger dropped and created again binds the kept statements again", async () => {
  const { db } = open();
  try {
    await sql`CREATE TABLE t (a INTEGER)`.execute(db);
    const guard = sql`CREATE TRIGGER t_no_delete BEFORE DELETE ON t
      BEGIN SELECT RAISE(ABORT, 't is append-only'); END`;
    await guard.execute(db);
    await sql`INSERT INTO t (a) VALUES (${1}), (${2})`.execute(db);
    const del = () => sql`DELETE FROM t WHERE a = ${1}`.execute(db).then(() => "deleted", (e) => e);
    assert(String(await del()).includes("append-only"));
    await sql`DROP TRIGGER t_no_delete`.execute(db);
    assertEquals(await del(), "deleted");
    await guard.execute(db);
    assert(
      String(await sql`DELETE FROM t`.execute(db).then(() => "deleted", (e) => e)).includes(
        "append-only",
      ),
    );
    assertEquals((await sql`SELECT a FROM t`.execute(db)).rows, [{ a: 2 }]);
  } finally {
    await db.destroy();
  }
});

Deno.test("native libSQL: a lease ended refuses its holders; the database goes to the next one", async () => {
  const native = NativeLibsqlDatabase.open(":memory:", 1000);
  let ended = 0;
  const first = native.lease(() => ended++);
  const a = new Kysely<never>({ dialect: first.dialect }) as Db;
  await sql`CREATE TABLE t (a INTEGER)`.execute(a);
  await a.destroy();
  assertEquals(ended, 1);
  assert(native.reusable);
  // A straggler of the first lease: refused, both through kysely and through the batch.
  const late = await sql`INSERT INTO t (a) VALUES (${1})`.execute(a).then(
    () => undefined,
    (e) => e,
  );
  assert(late instanceof Error, String(late));
  assertEquals(
    codeOf(
      await first.batcher.batch([{ sql: "INSERT INTO t (a) VALUES (?)", args: [1] }])
        .then(() => undefined, (e) => e),
    ),
    "CLIENT_CLOSED",
  );
  const second = native.lease();
  const b = new Kysely<never>({ dialect: second.dialect }) as Db;
  assertEquals((await sql`SELECT count(*) AS n FROM t`.execute(b)).rows, [{ n: 0 }]);
  await b.destroy();
  assert(!native.reusable, "the default end closes the database");
});
