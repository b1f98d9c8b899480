/**
 * A journal location that is not a journal is the user's location, not a cairn bug: a file that
 * is not a database, or a libSQL server that does not answer, is JournalUnavailable naming the
 * location (its token hidden), exit 1, never an internal error with a stack trace. The file is
 * left as it was.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { cryptoIdSource, openJournal } from "../../../src/adapters/journal/by_url.ts";
import { CairnError } from "../../../src/domain/errors.ts";
import { runCli } from "../../_helpers/cli_run.ts";

async function refusal(url: string): Promise<string> {
  try {
    const j = await openJournal({ url, ids: cryptoIdSource(), nowMs: 0 });
    await j.close();
  } catch (e) {
    assert(e instanceof CairnError, String(e));
    assertEquals(e.reason, "JournalUnavailable");
    return e.message;
  }
  throw new Error(`${url} opened as a journal`);
}

/** A loopback port nothing listens on (bound, then released). */
function closedPort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

Deno.test("a file that is not a database is refused as not a journal, and left as it was", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "notes.txt");
    const text = "these are notes, not a journal\n".repeat(200);
    await Deno.writeTextFile(path, text);
    const message = await refusal(`file:${path}`);
    assertEquals(
      message,
      `cannot open journal file:${path}: not a journal (the file is not a SQLite database)`,
    );
    assertEquals(await Deno.readTextFile(path), text);
    assertEquals([...Deno.readDirSync(dir)].map((e) => e.name), ["notes.txt"]);
    const cli = await runCli(["journal", "verify", "--journal", path]);
    assertEquals(cli.code, 1, cli.stderr);
    assert(cli.stderr.startsWith("JournalUnavailable: cannot open journal"), cli.stderr);
    assert(!cli.stderr.includes("Internal") && !cli.stderr.includes("    at "), cli.stderr);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a libSQL server that does not answer is JournalUnavailable, its token never shown", async () => {
  const url = `libsql://127.0.0.1:${closedPort()}?tls=0&authToken=SECRET-TOKEN-abc`;
  const message = await refusal(url);
  assert(message.startsWith("cannot open journal libsql://127.0.0.1:"), message);
  assert(!message.includes("SECRET-TOKEN"), message);
  const cli = await runCli(["status", "--journal", `http://127.0.0.1:${closedPort()}`]);
  assertEquals(cli.code, 1, cli.stderr);
  assert(cli.stderr.startsWith("JournalUnavailable: cannot open journal http://127.0.0.1:"));
  assert(!cli.stderr.includes("    at "), cli.stderr);
});

Deno.test("a file URL naming a host, or a parameter libSQL does not take, is JournalUnavailable; nothing is created", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const host = await refusal("file://evil.example/x.db");
    assert(host.includes("a file URL names a path, not a host"), host);
    const param = await refusal(`file:${dir}/j.db?mode=ro`);
    assert(param.startsWith(`cannot open journal file:${dir}/j.db?mode=ro: `), param);
    assert(param.includes(`"mode"`), param);
    assertEquals([...Deno.readDirSync(dir)], []);
    const cli = await runCli(["journal", "migrate", "--journal", `file:${dir}/j.db?mode=ro`]);
    assertEquals(cli.code, 1, cli.stderr);
    assert(cli.stderr.startsWith("JournalUnavailable: cannot open journal"), cli.stderr);
    assert(!cli.stderr.includes("Internal") && !cli.stderr.includes("    at "), cli.stderr);
    assertEquals([...Deno.readDirSync(dir)], []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
