/**
 * Two processes race to take over the same generation of one operation on a shared journal (a
 * libSQL file: SQLite's write lock; PostgreSQL: the installation row lock); the conditional
 * UPDATE must elect exactly one winner.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { openJournal } from "../../../src/adapters/journal/by_url.ts";
import { approvedPlan, committed, counterIds, T0 } from "../../_helpers/journal_world.ts";
import {
  type JournalStoreKind,
  LIBSQL_FILE,
  postgresStore,
} from "../../_helpers/journal_stores.ts";
import { sharedPostgres } from "../../_helpers/postgres.ts";

const CHILD = new URL("./race_child.ts", import.meta.url).pathname;

async function readLine(r: ReadableStreamDefaultReader<string>, carry: { buf: string }) {
  for (;;) {
    const nl = carry.buf.indexOf("\n");
    if (nl >= 0) {
      const line = carry.buf.slice(0, nl);
      carry.buf = carry.buf.slice(nl + 1);
      return line;
    }
    const { value, done } = await r.read();
    if (done) return carry.buf;
    carry.buf += value;
  }
}

const STORES: readonly JournalStoreKind[] = [LIBSQL_FILE, postgresStore(await sharedPostgres())];

for (const store of STORES) {
  Deno.test(`${store.name}: two processes taking over one generation concurrently elect exactly one winner`, async () => {
    const { url, dispose } = await store.fresh();
    try {
      const j = await openJournal({ url, ids: counterIds(), nowMs: T0 });
      const plan = (await approvedPlan(j)).digest;
      const c = await committed(j, { plan });
      await j.close();
      const children = ["cairn-b", "cairn-c"].map((owner) => {
        const p = new Deno.Command(Deno.execPath(), {
          args: ["run", "-A", CHILD, url, c.op.id, "1", c.token.epoch, owner],
          stdin: "piped",
          stdout: "piped",
          stderr: "inherit",
        }).spawn();
        return {
          p,
          r: p.stdout.pipeThrough(new TextDecoderStream()).getReader(),
          carry: { buf: "" },
        };
      });
      for (const ch of children) assertEquals(await readLine(ch.r, ch.carry), "ready");
      const go = new Uint8Array([1]);
      const writers = children.map((ch) => ch.p.stdin.getWriter());
      await Promise.all(writers.map((w) => w.write(go)));
      const results = await Promise.all(children.map((ch) => readLine(ch.r, ch.carry)));
      for (const [i, ch] of children.entries()) {
        await writers[i]!.close();
        await ch.r.cancel();
        assertEquals((await ch.p.status).code, 0);
      }
      assertEquals(results.sort(), ["lost", "won"]);
      const k = await openJournal({ url, ids: counterIds("v"), nowMs: T0, migrate: false });
      const op = (await k.getOperation(c.op.id))!;
      assertEquals([op.ownerGen, op.state], [2, "unresolved"]);
      assertEquals((await k.events()).filter((e) => e.kind === "ownership").length, 1);
      assertEquals((await k.verifyChain()).ok, true);
      await k.close();
    } finally {
      await dispose();
    }
  });
}
