/**
 * The PostgreSQL journal's schema and its location: `cairn journal migrate` on `postgres://…`
 * applies the same six versions as libSQL and mints the first epoch once (also when two openers
 * race); a newer schema is refused untouched; an unmigrated database is refused to a reader; the
 * timeline refuses UPDATE, DELETE and TRUNCATE; and a password in the URL never appears in an
 * error, in command output or in what the CLI prints.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { createClient } from "@libsql/client";
import pg from "pg";
import { migrateJournal, openJournal } from "../../../src/adapters/journal/by_url.ts";
import { LATEST_SCHEMA } from "../../../src/adapters/journal/migrations/mod.ts";
import { unavailable } from "../../../src/adapters/journal/pg/pg_journal.ts";
import { describeJournalUrl, isPostgresUrl } from "../../../src/domain/journal_location.ts";
import { rejectsWith } from "../../contract/journal_contract.ts";
import { runCli } from "../../_helpers/cli_run.ts";
import { counterIds, T0 } from "../../_helpers/journal_world.ts";
import { sharedPostgres } from "../../_helpers/postgres.ts";

const server = await sharedPostgres();

async function query(url: string, text: string): Promise<Record<string, unknown>[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(text)).rows;
  } finally {
    await c.end();
  }
}

Deno.test("postgres: cairn journal migrate applies every version and mints one epoch; a second run is a no-op", async () => {
  const url = await server.newDatabase();
  const first = await runCli(["journal", "migrate", "--journal", url, "--output", "json"]);
  assertEquals(first.code, 0, first.stderr);
  assertEquals(JSON.parse(first.stdout), { journal: url, from: 0, to: LATEST_SCHEMA });
  const again = await runCli(["journal", "migrate", "--journal", url, "--output", "json"]);
  assertEquals(JSON.parse(again.stdout).from, LATEST_SCHEMA);
  assertEquals(await query(url, "SELECT version FROM journal_schema"), [{
    version: String(LATEST_SCHEMA),
  }]);
  const j = await openJournal({ url, ids: counterIds(), nowMs: T0, migrate: false });
  try {
    assert((await j.installation()).epoch.startsWith("ep_"));
    const events = await j.events();
    assertEquals(events.map((e) => e.kind), ["journal-created"]);
    assertEquals((await j.verifyChain()).ok, true);
  } finally {
    await j.close();
  }
});

Deno.test("postgres: two openers of a new database migrate it once and agree on its first epoch", async () => {
  const url = await server.newDatabase();
  const [a, b] = await Promise.all([
    openJournal({ url, ids: counterIds("a"), nowMs: T0 }),
    openJournal({ url, ids: counterIds("b"), nowMs: T0 }),
  ]);
  try {
    assertEquals((await a.installation()).epoch, (await b.installation()).epoch);
    assertEquals((await a.events()).filter((e) => e.kind === "journal-created").length, 1);
  } finally {
    await a.close();
    await b.close();
  }
});

Deno.test("postgres: a newer schema is refused and left untouched; an unmigrated database is refused to a reader", async () => {
  const url = await server.newDatabase();
  await (await openJournal({ url, ids: counterIds(), nowMs: T0 })).close();
  await query(url, `UPDATE journal_schema SET version = ${LATEST_SCHEMA + 1}`);
  await rejectsWith(openJournal({ url, ids: counterIds(), nowMs: T0 }), "JournalSchemaTooNew");
  assertEquals(await query(url, "SELECT version FROM journal_schema"), [{
    version: String(LATEST_SCHEMA + 1),
  }]);
  const empty = await server.newDatabase();
  await rejectsWith(
    openJournal({ url: empty, ids: counterIds(), nowMs: T0, migrate: false }),
    "JournalUnmigrated",
  );
  assertEquals(await query(empty, "SELECT to_regclass('journal_schema') AS t"), [{ t: null }]);
});

Deno.test("postgres: events are append-only: UPDATE, DELETE and TRUNCATE are refused by the schema", async () => {
  const url = await server.newDatabase();
  await (await openJournal({ url, ids: counterIds(), nowMs: T0 })).close();
  for (const sql of ["UPDATE events SET kind = 'x'", "DELETE FROM events", "TRUNCATE events"]) {
    const err = await query(url, sql).then(() => null, (e: Error) => e.message);
    assert(err?.includes("append-only"), `${sql}: ${err}`);
  }
  assertEquals((await query(url, "SELECT count(*)::int AS n FROM events"))[0], { n: 1 });
});

Deno.test("journal locations: postgres URLs are recognised and shown without their password", () => {
  assert(isPostgresUrl("postgres://h/db") && isPostgresUrl("postgresql://h/db"));
  assert(!isPostgresUrl("file:j.db") && !isPostgresUrl("libsql://db.example"));
  assertEquals(
    describeJournalUrl("postgres://cairn:s3cr%40t@db.example:5432/cairn?sslmode=require"),
    "postgres://cairn@db.example:5432/cairn?sslmode=require",
  );
  assertEquals(
    describeJournalUrl("postgresql://db.example/cairn?password=hunter2&application_name=x"),
    "postgresql://db.example/cairn?password=***&application_name=x",
  );
  assertEquals(
    describeJournalUrl("file:/var/lib/cairn/journal.db"),
    "file:/var/lib/cairn/journal.db",
  );
  assertEquals(describeJournalUrl("var/journal.db"), "var/journal.db");
});

Deno.test("postgres: a password in the journal URL never reaches an error or the CLI's output", async () => {
  const secret = "Pw-9f3kq7zX";
  const port = server.port;
  // The test server trusts loopback, so any password connects; the database does not exist.
  const missing = `postgres://cairn:${secret}@127.0.0.1:${port}/no_such_journal`;
  // Nothing listens on port 1: the driver's own error.
  const refused = `postgres://cairn:${secret}@127.0.0.1:1/cairn`;
  for (const url of [missing, refused]) {
    const e = await openJournal({ url, ids: counterIds(), nowMs: T0 }).then(
      () => new Error("opened"),
      (e: Error) => e,
    );
    assert(!e.message.includes(secret), e.message);
    assert(!(e.stack ?? "").includes(secret), "the stack names the password");
    assert(e.message.includes(describeJournalUrl(url)), e.message);
    for (const argv of [["status"], ["journal", "verify"], ["journal", "migrate"]]) {
      const r = await runCli([...argv, "--journal", url]);
      assert(r.code !== 0, `${argv.join(" ")} succeeded`);
      assert(!r.stderr.includes(secret) && !r.stdout.includes(secret), r.stderr + r.stdout);
      const env = await runCli(argv, { CAIRN_JOURNAL: url });
      assert(!env.stderr.includes(secret) && !env.stdout.includes(secret), env.stderr);
    }
  }
  const ok = await server.newDatabase();
  const withPassword = ok.replace("://cairn@", `://cairn:${secret}@`);
  const r = await runCli(["journal", "migrate", "--journal", withPassword, "--output", "json"]);
  assertEquals(r.code, 0, r.stderr);
  assert(!r.stdout.includes(secret), r.stdout);
  assertEquals(JSON.parse(r.stdout).journal, ok);
  assertEquals((await migrateJournal(withPassword, { ids: counterIds(), nowMs: T0 })).from, 6);
});

Deno.test("an open error is scrubbed of the URL's password whatever the driver wrote (plain or URL-encoded)", () => {
  const url = "postgres://cairn:p%40ss-w0rd@db.example/cairn";
  const where = describeJournalUrl(url);
  for (const leaked of ["p%40ss-w0rd", "p@ss-w0rd"]) {
    const e = unavailable(new Error(`auth failed for ${leaked} at ${url}`), url, where);
    assertEquals(e.reason, "JournalUnavailable");
    assert(!e.message.includes("ss-w0rd"), e.message);
    assert(e.message.startsWith(`cannot open journal ${where}: `), e.message);
  }
});

Deno.test("postgres: the migrated schema has libSQL's tables and columns, column for column", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cairn-schema-" });
  try {
    const file = `file:${dir}/j.db`;
    await (await openJournal({ url: file, ids: counterIds(), nowMs: T0 })).close();
    const lite = createClient({ url: file });
    const sqlite = new Map<string, string[]>();
    try {
      const tables = await lite.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
      );
      for (const t of tables.rows) {
        const name = String(t["name"]);
        const cols = await lite.execute(`PRAGMA table_info(${name})`);
        sqlite.set(name, cols.rows.map((c) => String(c["name"])));
      }
    } finally {
      lite.close();
    }
    const url = await server.newDatabase();
    await (await openJournal({ url, ids: counterIds(), nowMs: T0 })).close();
    const rows = await query(
      url,
      "SELECT table_name, column_name FROM information_schema.columns " +
        "WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position",
    );
    const postgres = new Map<string, string[]>();
    for (const r of rows) {
      const t = String(r["table_name"]);
      postgres.set(t, [...(postgres.get(t) ?? []), String(r["column_name"])]);
    }
    assertEquals([...postgres.keys()].sort(), [...sqlite.keys()].sort());
    for (const [t, cols] of sqlite) assertEquals(postgres.get(t), cols, `table ${t}`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
