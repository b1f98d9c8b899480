// deno-lint-ignore-file no-console
/**
 * Fenced attempt transactions per second on a WAL/synchronous=FULL file journal, against bare
 * single-row INSERT+COMMIT transactions on the same kind of file through the same client stack,
 * measured in the same run. Goal: ratio ≥ 0.5 (fencing costs at most half of durability).
 *
 * A fenced attempt is two round trips (issue 18): one SELECT reading every comparison's inputs
 * and the timeline head, then one write batch (BEGIN IMMEDIATE … COMMIT) whose UPDATE compares
 * owner, generation, epoch and state (src/adapters/journal/attempt.ts).
 *
 * Usage: deno run -A bench/journal_bench.ts [N]
 */
import { createClient } from "@libsql/client";
import { LibsqlDialect } from "@libsql/kysely-libsql";
import { Kysely, sql } from "kysely";
import { openJournal } from "../src/adapters/journal/libsql_journal.ts";
import type { IdSource } from "../src/ports/clock.ts";

const N = Number(Deno.args[0] ?? 1000);
const T0 = Date.UTC(2026, 10, 1);

function ids(): IdSource {
  let n = 0;
  return { newId: (p) => `${p}_${String(++n).padStart(26, "0")}` };
}

/** Opens the baseline table; returns a runner timing `n` single-row INSERT+COMMIT transactions. */
async function bare(path: string) {
  const client = createClient({ url: `file:${path}`, concurrency: 1 });
  const db = new Kysely<{ t: { id: number; v: string } }>({
    dialect: new LibsqlDialect({ client: client as never }),
  });
  await sql`PRAGMA journal_mode = WAL`.execute(db);
  await sql`PRAGMA synchronous = FULL`.execute(db);
  await sql`CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)`.execute(db);
  let next = 0;
  return {
    async run(n: number): Promise<number> {
      const start = performance.now();
      for (let i = 0; i < n; i++) {
        const id = next++;
        await db.transaction().execute((tx) => tx.insertInto("t").values({ id, v: "x" }).execute());
      }
      return performance.now() - start;
    },
    close: () => db.destroy(),
  };
}

/** Sets up one committed operation; returns a runner timing `n` fenced attempt transactions. */
async function fenced(path: string) {
  const j = await openJournal({ url: `file:${path}`, ids: ids(), nowMs: T0 });
  const step = { step: "w/0", machine: "w", preDigest: "pre", postDigest: "post" };
  const plan = await j.recordPlan({
    digest: "d".repeat(64),
    name: "bench",
    kind: "TalosUpgrade",
    cluster: "c",
    bytes: "x",
    signatures: "",
    firstSeenCommit: "c",
    expiresAtMs: T0 + 1e9,
    maxAttempts: N + 100,
    maxEvidenceAgeMs: 1e9,
    steps: [step],
    nowMs: T0,
  });
  const actor = { identity: "a", role: "approver" } as const;
  await j.approvePlan(plan.digest, actor, T0);
  const ev = await j.recordObservation({
    machine: "w",
    purpose: "evidence",
    planDigest: plan.digest,
    digest: "pre",
    objectUid: "u",
    resourceVersion: "1",
    observedGeneration: 1,
    observedAtMs: T0 + 1,
    summary: "",
    actor: { identity: "cairn", role: "controller" },
  });
  const { epoch } = await j.installation();
  const c = await j.commit({
    planDigest: plan.digest,
    step: "w/0",
    evidenceId: ev.id,
    owner: "cairn",
    epoch,
    nowMs: T0 + 2,
  });
  if (!c.ok) throw new Error(c.cause);
  const token = { owner: "cairn", gen: 1, epoch };
  let i = 0;
  return {
    async run(n: number): Promise<number> {
      let inAttempts = 0;
      for (const end = i + n; i < end; i++) {
        const t = T0 + 10 + i;
        const s = performance.now();
        const a = await j.beginAttempt({
          operationId: c.operation.id,
          token,
          phase: "pull",
          requestDigest: "r",
          route: "apid",
          evidenceId: ev.id,
          transportDeadlineMs: t + 1000,
          verificationDeadlineMs: t + 2000,
          nowMs: t,
        });
        inAttempts += performance.now() - s;
        if (!a.ok) throw new Error(`${a.cause}: ${a.detail}`);
        // phase continuation: the next attempt needs this one accepted (not timed)
        await j.recordResponse({
          attemptId: a.attempt.id,
          token,
          responseClass: "accepted",
          detail: "",
          nowMs: t,
        });
      }
      return inAttempts;
    },
    close: () => j.close(),
  };
}

// Interleaved rounds so that disk and scheduler drift hit both sides alike.
const ROUNDS = 10;
const dir = await Deno.makeTempDir({ dir: ".", prefix: ".journal-bench-" });
try {
  const b = await bare(`${dir}/bare.db`);
  const f = await fenced(`${dir}/journal.db`);
  await b.run(20);
  await f.run(20);
  let tb = 0;
  let tf = 0;
  const perRound: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const rb = await b.run(N / ROUNDS);
    const rf = await f.run(N / ROUNDS);
    tb += rb;
    tf += rf;
    perRound.push(rb / rf);
  }
  perRound.sort((x, y) => x - y);
  await b.close();
  await f.close();
  const base = N / (tb / 1000);
  const fence = N / (tf / 1000);
  console.log(`journal bench (N=${N}, file journal on the working directory's disk, WAL + FULL)`);
  console.log(`  bare INSERT+COMMIT:          ${base.toFixed(0)} tx/s`);
  console.log(`  fenced attempt transaction:  ${fence.toFixed(0)} tx/s (1 read + 1 write batch)`);
  // fsync latency on a shared disk drifts a lot within a run: show the spread of the rounds too.
  const q = (x: number) =>
    perRound[Math.min(perRound.length - 1, Math.floor(x * perRound.length))]!;
  console.log(
    `  ratio per round:             min ${q(0).toFixed(2)}, median ${q(0.5).toFixed(2)}, ` +
      `max ${q(1).toFixed(2)} (${ROUNDS} interleaved rounds)`,
  );
  console.log(`  ratio fenced/bare:           ${(fence / base).toFixed(2)} (goal ≥ 0.5)`);
} finally {
  await Deno.remove(dir, { recursive: true });
}
