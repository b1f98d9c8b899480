/** `cairn journal verify` detects a rewritten event row, through the real CLI. */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { createClient } from "@libsql/client";
import { rowHash } from "../../src/adapters/journal/hash_chain.ts";
import { openJournal } from "../../src/adapters/journal/libsql_journal.ts";
import type { Journal } from "../../src/ports/journal.ts";
import {
  approvedPlan,
  attemptInput,
  committed,
  counterIds,
  T0,
} from "../_helpers/journal_world.ts";

const MAIN = new URL("../../src/main.ts", import.meta.url).pathname;

async function cairn(...argv: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, ...argv],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

async function populated(dir: string): Promise<{ url: string; rows: number }> {
  const url = `file:${dir}/journal.db`;
  const j: Journal = await openJournal({ url, ids: counterIds(), nowMs: T0 });
  const plan = (await approvedPlan(j)).digest;
  const c = await committed(j, { plan });
  await j.beginAttempt(attemptInput(c.op.id, c.token, c.evidence, T0 + 3000));
  const rows = (await j.events()).length;
  await j.close();
  return { url, rows };
}

/** Rewrites one event row the way an attacker with file access would (the triggers go first). */
async function tamper(url: string, sql: string): Promise<void> {
  const c = createClient({ url });
  await c.execute("DROP TRIGGER IF EXISTS events_no_update");
  await c.execute("DROP TRIGGER IF EXISTS events_no_delete");
  await c.execute(sql);
  c.close();
}

async function inTemp(fn: (dir: string) => Promise<void>) {
  const dir = await Deno.makeTempDir({ prefix: "cairn-verify-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("cairn journal verify passes an untouched journal and exports it as JSON", async () => {
  await inTemp(async (dir) => {
    const { url, rows } = await populated(dir);
    const ok = await cairn("journal", "verify", "--journal", url);
    assertEquals(ok.code, 0, ok.stderr);
    assert(ok.stdout.includes(`${rows} rows`), ok.stdout);
    const exp = await cairn("journal", "export", "--journal", url, "--output", "json");
    assertEquals(exp.code, 0, exp.stderr);
    const doc = JSON.parse(exp.stdout);
    assertEquals([doc.chain.ok, doc.tables.events.length], [true, rows]);
    const show = await cairn("journal", "show", "--journal", url);
    assert(/sending\s+worker-1/.test(show.stdout), show.stdout);
  });
});

Deno.test("cairn journal verify exits 1 naming the first rewritten row", async () => {
  await inTemp(async (dir) => {
    const { url, rows } = await populated(dir);
    const mid = Math.ceil(rows / 2);
    await tamper(url, `UPDATE events SET body = '{"forged":true}' WHERE seq = ${mid}`);
    const r = await cairn("journal", "verify", "--journal", url);
    assertEquals(r.code, 1);
    assert(r.stderr.includes(`JournalChainBroken: event row ${mid}:`), r.stderr);
  });
});

Deno.test("tampering with any single event row is detected, wherever it is", async () => {
  await inTemp(async (dir) => {
    const { url, rows } = await populated(dir);
    const raw = createClient({ url });
    await raw.execute("DROP TRIGGER events_no_update");
    const columns = ["at_ms = at_ms + 1", "kind = 'x'", "actor = 'mallory'", "hash = 'ff'"];
    for (let seq = 1; seq <= rows; seq++) {
      const col = columns[seq % columns.length]!;
      const orig = (await raw.execute({ sql: "SELECT * FROM events WHERE seq = ?", args: [seq] }))
        .rows[0]!;
      await raw.execute(`UPDATE events SET ${col} WHERE seq = ${seq}`);
      const j = await openJournal({ url, ids: counterIds(), nowMs: T0, migrate: false });
      const check = await j.verifyChain();
      await j.close();
      await raw.execute({
        sql: "UPDATE events SET at_ms = ?, kind = ?, actor = ?, hash = ? WHERE seq = ?",
        args: [orig["at_ms"]!, orig["kind"]!, orig["actor"]!, orig["hash"]!, seq],
      });
      assertEquals(check.ok ? 0 : check.seq, seq, `row ${seq} (${col}) not detected`);
    }
    raw.close();
    assertEquals((await cairn("journal", "verify", "--journal", url)).code, 0);
  });
});

Deno.test("a row rewritten with a recomputed hash breaks the next row's link; a deleted row leaves a gap", async () => {
  await inTemp(async (dir) => {
    const { url } = await populated(dir);
    const raw = createClient({ url });
    const row = (await raw.execute("SELECT * FROM events WHERE seq = 2")).rows[0]!;
    const forged = {
      seq: 2,
      at_ms: Number(row["at_ms"]),
      kind: String(row["kind"]),
      machine: row["machine"] as string | null,
      revision: row["revision"] === null ? null : Number(row["revision"]),
      operation_id: row["operation_id"] as string | null,
      epoch: String(row["epoch"]),
      actor: "mallory",
      body: String(row["body"]),
      prev_hash: String(row["prev_hash"]),
    };
    raw.close();
    const hash = await rowHash(forged);
    await tamper(url, `UPDATE events SET actor = 'mallory', hash = '${hash}' WHERE seq = 2`);
    const r = await cairn("journal", "verify", "--journal", url, "--output", "json");
    assertEquals(r.code, 1);
    assertEquals(JSON.parse(r.stdout).seq, 3, "the forged row's successor must break");
    await tamper(url, "DELETE FROM events WHERE seq = 5");
    await tamper(
      url,
      `UPDATE events SET actor = '${
        String(row["actor"])
      }', hash = (SELECT prev_hash FROM events WHERE seq = 3) WHERE seq = 2`,
    );
    const gap = await cairn("journal", "verify", "--journal", url);
    assertEquals(gap.code, 1);
    assert(gap.stderr.includes("event row 6: expected row 5"), gap.stderr);
  });
});
