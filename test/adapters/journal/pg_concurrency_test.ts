/**
 * PostgreSQL's own concurrency control is what keeps the journal linear (pg/pg_journal.ts): every
 * write transaction locks the installation row first, and the attempt's one-statement write takes
 * the same lock. Two connections (two replicas in production) writing at once must both succeed,
 * in some order, on one unbroken chain; and a batched attempt arriving while another writer is
 * mid-transaction must wait for it and be decided after it, never slip in underneath.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import pg from "pg";
import { openJournal } from "../../../src/adapters/journal/by_url.ts";
import type { Journal } from "../../../src/ports/journal.ts";
import {
  approvedPlan,
  attemptInput,
  committed,
  CONTROLLER,
  counterIds,
  T0,
} from "../../_helpers/journal_world.ts";
import { postgresStore } from "../../_helpers/journal_stores.ts";
import { sharedPostgres } from "../../_helpers/postgres.ts";

const store = postgresStore(await sharedPostgres());
const CRASH_CHILD = new URL("./crash_child.ts", import.meta.url).pathname;

/** Polls (generously bounded, no fixed sleep decides anything) until `cond` holds. */
async function until(what: string, cond: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

Deno.test("postgres: two connections writing at once both commit, one after the other, on one chain", async () => {
  const { url } = await store.fresh();
  const a = await openJournal({ url, ids: counterIds("a"), nowMs: T0 });
  const b = await openJournal({ url, ids: counterIds("b"), nowMs: T0 });
  try {
    const writes: Promise<number>[] = [];
    for (let i = 0; i < 15; i++) {
      writes.push(a.startObservation(`worker-${i % 3}`, CONTROLLER, T0 + i));
      writes.push(b.startObservation(`worker-${i % 3}`, CONTROLLER, T0 + i));
    }
    const revisions = await Promise.all(writes);
    // Each machine's revisions are 1..10, each handed out once.
    for (let m = 0; m < 3; m++) {
      const mine = revisions.filter((_, k) => Math.floor(k / 2) % 3 === m).sort((x, y) => x - y);
      assertEquals(mine, Array.from({ length: 10 }, (_, k) => k + 1));
    }
    const chain = await a.verifyChain();
    assert(chain.ok, "the chain broke under concurrent writers");
    assertEquals((await a.events()).filter((e) => e.kind === "observation-started").length, 30);
  } finally {
    await a.close();
    await b.close();
  }
});

Deno.test("postgres: a batched attempt waits for a writer that is mid-transaction and is decided after it", async () => {
  const { url } = await store.fresh();
  const monitor = new pg.Client({ connectionString: url });
  await monitor.connect();
  const peer: { j?: Journal; attempt?: Promise<unknown>; settled?: boolean } = {};
  let armed = false;
  const a = await openJournal({
    // The commitment waits inside its transaction on purpose, as long as a loaded machine needs:
    // the server must not end that session for being idle (the journal's default is 10 s).
    url: `${url}?idle_in_transaction_session_timeout=600000`,
    ids: counterIds("a"),
    nowMs: T0,
    writePoint: async (p) => {
      if (!armed || p !== "commit:checked" || !peer.j) return;
      armed = false;
      // The commitment's transaction holds the journal's write lock here. The peer's attempt
      // must queue behind it (seen as a lock wait on the server), not commit underneath it.
      peer.attempt = peer.j.beginAttempt(op.attempt).finally(() => (peer.settled = true));
      await until("the peer's attempt to wait on the lock, or to finish", async () => {
        if (peer.settled) return true;
        const r = await monitor.query(
          "SELECT count(*)::int AS n FROM pg_stat_activity " +
            "WHERE datname = current_database() AND wait_event_type = 'Lock'",
        );
        return r.rows[0].n > 0;
      });
      assert(!peer.settled, "the attempt committed while another writer held the lock");
    },
  });
  const op: { attempt: ReturnType<typeof attemptInput> } = {} as never;
  peer.j = await openJournal({ url, ids: counterIds("b"), nowMs: T0 });
  try {
    const first = (await approvedPlan(a)).digest;
    const c = await committed(a, { plan: first });
    op.attempt = attemptInput(c.op.id, c.token, c.evidence, T0 + 3000);
    const second = (await approvedPlan(a, {
      digest: "e".repeat(64),
      name: "other-cluster",
      cluster: "other-ops",
      steps: [{ step: "cp-1/0", machine: "cp-1", preDigest: "v1.13.9", postDigest: "v1.14.2" }],
    })).digest;
    armed = true;
    await committed(a, { plan: second, machine: "cp-1" });
    const r = (await peer.attempt) as { ok: boolean };
    assert(r.ok, "the attempt is admitted once the lock is free");
    const kinds = (await a.events()).map((e) => e.kind);
    assert(
      kinds.lastIndexOf("commitment") < kinds.lastIndexOf("attempt"),
      `the attempt landed under the commitment: ${kinds.join(",")}`,
    );
    assert((await a.verifyChain()).ok);
  } finally {
    await monitor.end();
    await peer.j.close();
    await a.close();
  }
});

Deno.test("postgres: a process stopped while it holds the write lock holds the other writers only until the server ends its session", async () => {
  const { url } = await store.fresh();
  // The child records a plan and a commitment, then its takeover stops inside its transaction, after its UPDATE (the write lock held);
  // then the child is stopped as SIGSTOP stops a replica. Its URL asks the server to end a
  // session idle in a transaction after one second (the journal's default is longer).
  const childUrl = `${url}?idle_in_transaction_session_timeout=1000`;
  const point = "takeover:operation-updated";
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CRASH_CHILD, childUrl, "takeover", point],
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const opened: { j?: Journal } = {};
  try {
    let out = "";
    while (!out.includes(`waiting ${point}`)) {
      const { value, done } = await lines.read();
      if (done) throw new Error(`the child ended before ${point}: ${out}`);
      out += value;
    }
    child.kill("SIGSTOP");
    const j = opened.j = await openJournal({ url, ids: counterIds("a"), nowMs: T0 });
    const [live] = await j.listOperations();
    assert(live, "the child's commitment is missing");
    // Another writer goes ahead once the server has ended the stopped session.
    const revision = await j.startObservation("worker-1", CONTROLLER, T0 + 4000);
    assert(revision > 0);
    const op = (await j.getOperation(live.id))!;
    assertEquals([op.ownerGen, op.state], [1, "committed"], "the stopped takeover was rolled back");
    assertEquals((await j.events()).filter((e) => e.kind === "ownership").length, 0);
    assert((await j.verifyChain()).ok);
  } finally {
    child.kill("SIGKILL");
    await child.status;
    await lines.cancel().catch(() => undefined);
    await child.stdin.close().catch(() => undefined);
    await opened.j?.close();
  }
});

Deno.test("postgres: an uncontended attempt is two statements on the wire: the read and the locked write", async () => {
  const { url } = await store.fresh();
  const j = await openJournal({ url, ids: counterIds("a"), nowMs: T0 });
  const sent: string[] = [];
  // Every statement of every pooled connection goes through Client.prototype.query.
  const proto = pg.Client.prototype as unknown as { query: (...a: unknown[]) => unknown };
  const original = proto.query;
  try {
    const plan = (await approvedPlan(j)).digest;
    const c = await committed(j, { plan });
    proto.query = function (this: unknown, ...a: unknown[]) {
      const q = a[0];
      sent.push(typeof q === "string" ? q : String((q as { text?: string }).text));
      return original.apply(this, a);
    };
    const r = await j.beginAttempt(attemptInput(c.op.id, c.token, c.evidence, T0 + 3000));
    proto.query = original;
    assert(r.ok);
    assertEquals(sent.length, 2, sent.map((s) => s.slice(0, 60)).join("\n"));
    assert(/^\s*SELECT o\.\*/.test(sent[0]!), sent[0]);
    assert(
      /^\s*WITH lk AS \(SELECT epoch FROM installation WHERE id = 1 FOR UPDATE\)/.test(sent[1]!),
    );
  } finally {
    proto.query = original;
    await j.close();
  }
});
