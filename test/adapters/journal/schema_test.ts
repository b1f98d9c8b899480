import { deepStrictEqual as assertEquals, ok as assert, rejects } from "node:assert/strict";
import { createClient } from "@libsql/client";
import type { Kysely } from "kysely";
import { up as initSchema } from "../../../src/adapters/journal/migrations/0001_init.ts";
import { command as migrateCommand } from "../../../src/cli/journal_migrate.ts";
import { parseCommandArgs } from "../../../src/cli/command_args.ts";
import { connect, journalUrl } from "../../../src/adapters/journal/open.ts";
import { openJournal } from "../../../src/adapters/journal/libsql_journal.ts";
import { LATEST_SCHEMA } from "../../../src/adapters/journal/migrations/mod.ts";
import { rejectsWith } from "../../contract/journal_contract.ts";
import { counterIds, T0 } from "../../_helpers/journal_world.ts";

async function migrateViaCli(url: string) {
  let stdout = "";
  const io = {
    stdout: (t: string) => void (stdout += t),
    stderr: () => {},
    env: {},
    cwd: ".",
    color: false,
    tty: false,
    signal: new AbortController().signal,
  };
  const argv = ["--journal", url, "--output", "json"];
  const code = await migrateCommand.run(parseCommandArgs(migrateCommand, argv), io);
  return { code, out: JSON.parse(stdout) };
}

Deno.test("cairn journal migrate creates a WAL journal with its first epoch; a second run is a no-op", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const url = `file:${dir}/j.db`;
    assertEquals(await migrateViaCli(url), {
      code: 0,
      out: { journal: url, from: 0, to: LATEST_SCHEMA },
    });
    assertEquals((await migrateViaCli(url)).out.from, LATEST_SCHEMA);
    const c = createClient({ url });
    assertEquals((await c.execute("PRAGMA journal_mode")).rows[0]?.[0], "wal");
    c.close();
    const j = await openJournal({ url, ids: counterIds(), nowMs: T0, migrate: false });
    assert((await j.installation()).epoch.startsWith("ep_"));
    assertEquals((await j.verifyChain()).ok, true);
    await j.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a journal with a newer schema is refused and left untouched", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const url = `file:${dir}/j.db`;
    const j = await openJournal({ url, ids: counterIds(), nowMs: T0 });
    await j.close();
    const c = createClient({ url });
    await c.execute(`UPDATE journal_schema SET version = ${LATEST_SCHEMA + 1}`);
    await rejectsWith(openJournal({ url, ids: counterIds(), nowMs: T0 }), "JournalSchemaTooNew");
    assertEquals(
      (await c.execute("SELECT version FROM journal_schema")).rows[0]?.[0],
      LATEST_SCHEMA + 1,
    );
    c.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an unmigrated journal is refused when migration is not asked for", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await rejectsWith(
      openJournal({ url: `file:${dir}/j.db`, ids: counterIds(), nowMs: T0, migrate: false }),
      "JournalUnmigrated",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("journal locations: paths become file: URLs; remote libSQL URLs pass through", () => {
  assertEquals(journalUrl("var/journal.db"), "file:var/journal.db");
  assertEquals(journalUrl(":memory:"), ":memory:");
  for (const u of ["libsql://db.example", "http://127.0.0.1:8080", "https://db.example"]) {
    assertEquals(journalUrl(u), u);
  }
});

Deno.test("events are append-only: UPDATE and DELETE are refused by the schema", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const url = `file:${dir}/j.db`;
    await (await openJournal({ url, ids: counterIds(), nowMs: T0 })).close();
    const c = createClient({ url });
    for (const sql of ["UPDATE events SET kind = 'x'", "DELETE FROM events"]) {
      const err = await c.execute(sql).then(() => null, (e: Error) => e.message);
      assert(err?.includes("append-only"), `${sql}: ${err}`);
    }
    c.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("migration 0002 adds the postcondition reading; completion reads written before it decide nothing", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const url = `file:${dir}/j.db`;
    // A schema-1 journal: only the first migration applied.
    const c = createClient({ url });
    const db = await connect(url);
    await initSchema(db as unknown as Kysely<unknown>);
    await db.destroy();
    await c.execute("CREATE TABLE journal_schema (id INTEGER PRIMARY KEY, version INTEGER)");
    await c.execute("INSERT INTO journal_schema VALUES (1, 1)");
    await c.execute(
      "INSERT INTO installation (id, epoch, recovery_mode, created_at_ms) VALUES (1, 'ep_old', 0, 0)",
    );
    await c.execute(`INSERT INTO observations (id, machine, purpose, basis, revision, digest,
      object_uid, resource_version, observed_generation, observed_at_ms, summary)
      VALUES ('obs_old', 'worker-1', 'completion', 1, 1, 'v1.13.9', 'u', '1', 0, 0, 'old')`);
    assertEquals((await migrateViaCli(url)).out, { journal: url, from: 1, to: LATEST_SCHEMA });
    const row = await c.execute("SELECT postcondition FROM observations WHERE id = 'obs_old'");
    assertEquals(row.rows[0]?.[0], null);
    await rejects(
      c.execute("UPDATE observations SET postcondition = 'maybe' WHERE id = 'obs_old'"),
      /CHECK constraint/,
    );
    c.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
