import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { createClient } from "@libsql/client";
import { command as migrateCommand } from "../../../src/cli/journal_migrate.ts";
import { parseCommandArgs } from "../../../src/cli/command.ts";
import { journalUrl } from "../../../src/adapters/journal/open.ts";
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
    assertEquals(await migrateViaCli(url), { code: 0, out: { journal: url, from: 0, to: 1 } });
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
    assertEquals((await c.execute("SELECT version FROM journal_schema")).rows[0]?.[0], 2);
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
