/**
 * The libSQL connections' prepared statements (src/adapters/journal/statement_cache.ts): a reused
 * statement answers as a fresh one would, after a schema change, after an error, and in a batch.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { createClient } from "@libsql/client";
import { keepStatementsPrepared } from "../../../src/adapters/journal/statement_cache.ts";

keepStatementsPrepared();

Deno.test("prepared statements: a schema change is seen by the same SELECT text", async () => {
  const c = createClient({ url: ":memory:" });
  try {
    await c.execute("CREATE TABLE t (a INTEGER)");
    await c.execute({ sql: "INSERT INTO t (a) VALUES (?)", args: [1] });
    const before = await c.execute("SELECT * FROM t");
    assertEquals(before.columns, ["a"]);
    await c.execute("ALTER TABLE t ADD COLUMN b TEXT DEFAULT 'x'");
    const after = await c.execute("SELECT * FROM t");
    assertEquals(after.columns, ["a", "b"]);
    assertEquals(after.rows[0]!["b"], "x");
  } finally {
    c.close();
  }
});

Deno.test("prepared statements: a write after a constraint error, and in a write batch", async () => {
  const c = createClient({ url: ":memory:" });
  try {
    await c.execute("CREATE TABLE t (a INTEGER PRIMARY KEY)");
    const insert = "INSERT INTO t (a) VALUES (?)";
    const r1 = await c.execute({ sql: insert, args: [1] });
    assertEquals(r1.rowsAffected, 1);
    const e = await c.execute({ sql: insert, args: [1] }).then(() => undefined, (x) => x);
    assert(String((e as { code?: string }).code).startsWith("SQLITE_CONSTRAINT"), String(e));
    const r2 = await c.execute({ sql: insert, args: [2] });
    assertEquals(r2.rowsAffected, 1);
    // A batch is one transaction: its failing statement rolls back the ones before it.
    const b = await c.batch([{ sql: insert, args: [3] }, { sql: insert, args: [3] }], "write")
      .then(() => undefined, (x) => x);
    assert(b, "the batch failed");
    const rows = await c.execute("SELECT a FROM t ORDER BY a");
    assertEquals(rows.rows.map((r) => Number(r["a"])), [1, 2]);
    const tx = await c.transaction("write");
    await tx.execute({ sql: insert, args: [4] });
    await tx.rollback();
    assertEquals((await c.execute("SELECT count(*) AS n FROM t")).rows[0]!["n"], 2);
  } finally {
    c.close();
  }
});

Deno.test("prepared statements: a write's probe stays a write, a read's rows stay fresh", async () => {
  const c = createClient({ url: ":memory:" });
  try {
    await c.execute("CREATE TABLE t (a INTEGER)");
    for (let i = 0; i < 3; i++) {
      const w = await c.execute({ sql: "INSERT INTO t (a) VALUES (?)", args: [i] });
      assertEquals(w.rowsAffected, 1);
      assertEquals(w.columns, []);
      const r = await c.execute("SELECT count(*) AS n FROM t");
      assertEquals(r.columns, ["n"]);
      assertEquals(Number(r.rows[0]!["n"]), i + 1);
    }
  } finally {
    c.close();
  }
});
