/**
 * No journal statement on PostgreSQL waits forever (pg/pg_journal.ts): a write queued behind a
 * lock another session never releases is cancelled by the server at its statement deadline, and a
 * server that stops answering (its processes frozen with SIGSTOP) is given up by the client at its
 * own deadline. Both fail the act with `JournalTimedOut`, the journal stays consistent (the chain
 * verifies, nothing half-written), and once the stall ends the same journal writes again. The
 * deadlines are the URL's (short here; the defaults are 15 s and 20 s). The stall never ends
 * while the act waits, so no timer races the work.
 */
import { deepStrictEqual as assertEquals, ok as assert, rejects } from "node:assert/strict";
import pg from "pg";
import { openJournal } from "../../../src/adapters/journal/by_url.ts";
import { CairnError } from "../../../src/domain/errors.ts";
import { SESSION_DEADLINES } from "../../../src/adapters/journal/pg/pg_journal.ts";
import { CONTROLLER, counterIds, T0 } from "../../_helpers/journal_world.ts";
import { postgresStore } from "../../_helpers/journal_stores.ts";
import { sharedPostgres, startPostgres } from "../../_helpers/postgres.ts";

Deno.test("postgres: every pooled session has a statement deadline, a client deadline past it, and an idle-in-transaction end before it", () => {
  const d = SESSION_DEADLINES;
  assert(d.statement_timeout > 0 && d.query_timeout > d.statement_timeout, JSON.stringify(d));
  // A writer queued behind a stopped session is released by that session's end first.
  assert(d.idle_in_transaction_session_timeout < d.statement_timeout, JSON.stringify(d));
});

function timedOut(what: RegExp) {
  return (e: unknown) => {
    assert(e instanceof CairnError && e.reason === "JournalTimedOut", String(e));
    assert(what.test(e.message), e.message);
    assert(!e.message.includes("password"), e.message);
    return true;
  };
}

Deno.test("postgres: a write behind a lock held by another session fails at the statement deadline; the journal stays consistent", async () => {
  const { url } = await postgresStore(await sharedPostgres()).fresh();
  const j = await openJournal({
    url: `${url}?statement_timeout=300`,
    ids: counterIds(),
    nowMs: T0,
  });
  const holder = new pg.Client({ connectionString: url });
  await holder.connect();
  try {
    await j.startObservation("worker-1", CONTROLLER, T0 + 1);
    // Another session takes the journal's write lock and keeps it.
    await holder.query("BEGIN");
    await holder.query("SELECT id FROM installation WHERE id = 1 FOR UPDATE");
    const started = performance.now();
    await rejects(
      j.startObservation("worker-1", CONTROLLER, T0 + 2),
      timedOut(/statement deadline 300 ms; SQLSTATE 57014\); its transaction was rolled back/),
    );
    // deno-lint-ignore no-console -- the figure the report quotes
    console.log(
      `lock held elsewhere: JournalTimedOut after ${
        Math.round(performance.now() - started)
      } ms (deadline 300 ms)`,
    );
    await holder.query("ROLLBACK");
    // Released: the same journal writes again, on an unbroken chain.
    await j.startObservation("worker-1", CONTROLLER, T0 + 3);
    const chain = await j.verifyChain();
    assert(chain.ok, JSON.stringify(chain));
  } finally {
    await holder.end().catch(() => undefined);
    await j.close();
  }
});

/**
 * Signals one of the server's processes. A backend listed a moment ago may have exited since (the
 * listing's own connection closes just before): a process that is gone needs no signal.
 */
function signal(pid: number, sig: Deno.Signal): void {
  try {
    Deno.kill(pid, sig);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
}

/** The server's processes: the postmaster (from its pid file) and its children. */
async function serverPids(url: string): Promise<number[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  let dataDir: string;
  try {
    dataDir = (await c.query("SHOW data_directory")).rows[0].data_directory;
  } finally {
    await c.end();
  }
  const postmaster = Number((await Deno.readTextFile(`${dataDir}/postmaster.pid`)).split("\n")[0]);
  const pids = [postmaster];
  for await (const e of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const stat = await Deno.readTextFile(`/proc/${e.name}/stat`);
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === postmaster) pids.push(Number(e.name));
    } catch { /* exited meanwhile */ }
  }
  return pids;
}

Deno.test("postgres: a server frozen with SIGSTOP is given up at the client deadline; resumed, the journal writes again", async () => {
  const server = await startPostgres();
  const url = await server.newDatabase("frozen");
  const j = await openJournal({
    url: `${url}?query_timeout=800`,
    ids: counterIds(),
    nowMs: T0,
  });
  let pids: number[] = [];
  try {
    await j.startObservation("worker-1", CONTROLLER, T0 + 1);
    pids = await serverPids(url);
    assert(pids.length > 1, `postmaster and backends: ${pids}`);
    for (const p of pids) signal(p, "SIGSTOP");
    const started = performance.now();
    await rejects(
      j.startObservation("worker-1", CONTROLLER, T0 + 2),
      timedOut(/no answer from the server within 800 ms \(client deadline\)|no connection within/),
    );
    // deno-lint-ignore no-console -- the figure the report quotes
    console.log(
      `server frozen: JournalTimedOut after ${
        Math.round(performance.now() - started)
      } ms (client deadline 800 ms)`,
    );
    for (const p of pids.splice(0)) signal(p, "SIGCONT");
    // Resumed: writes commit again and the chain verifies (the frozen act committed whole or not
    // at all; here its BEGIN never ran before the client gave up and rolled back).
    let wrote = false;
    for (let i = 0; i < 100 && !wrote; i++) {
      try {
        await j.startObservation("worker-1", CONTROLLER, T0 + 3 + i);
        wrote = true;
      } catch (e) {
        if (!(e instanceof CairnError && e.reason === "JournalTimedOut")) throw e;
      }
    }
    assert(wrote, "the journal writes again once the server answers");
    const chain = await j.verifyChain();
    assert(chain.ok, JSON.stringify(chain));
    assertEquals(chain.ok && chain.rows >= 3, true);
  } finally {
    for (const p of pids) signal(p, "SIGCONT");
    await j.close().catch(() => undefined);
    await server.stop();
  }
});
