// deno-lint-ignore-file no-console
/**
 * Fenced attempt transactions per second against bare single-row INSERT+COMMIT transactions on
 * the same store through the same driver stack, measured in one run on both journal stores:
 *
 * - libSQL: a WAL/synchronous=FULL file on the working directory's disk;
 * - PostgreSQL: Debian's server started on loopback for the run (`test/_helpers/postgres.ts`),
 *   durable as in production (fsync on, synchronous commit), the bare baseline on the same server.
 *
 * Goal per store: ratio ≥ 0.5 (fencing costs at most half of durability). The PostgreSQL figures
 * are also set against libSQL's, since that is the choice an operator makes.
 *
 * A fenced attempt is two round trips on both stores: one SELECT reading every comparison's
 * inputs and the timeline head, then one write (libSQL: a BEGIN IMMEDIATE … COMMIT batch;
 * PostgreSQL: one statement that locks the installation row and whose UPDATE compares owner,
 * generation, epoch and state; src/adapters/journal/attempt.ts, pg/pg_attempt.ts).
 *
 * Usage: deno run -A bench/journal_bench.ts [N]   (N attempts per side and store, default 1000)
 */
import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { openJournal } from "../src/adapters/journal/by_url.ts";
import { connect } from "../src/adapters/journal/open.ts";
import type { IdSource } from "../src/ports/clock.ts";
import { startPostgres } from "../test/_helpers/postgres.ts";

const N = Number(Deno.args[0] ?? 1000);
const T0 = Date.UTC(2026, 10, 1);
// Interleaved rounds so that disk and scheduler drift hit both sides alike.
const ROUNDS = 10;

function ids(): IdSource {
  let n = 0;
  return { newId: (p) => `${p}_${String(++n).padStart(26, "0")}` };
}

interface Side {
  /** Time (ms) spent in `n` transactions. */
  run(n: number): Promise<number>;
  close(): Promise<void>;
}

type Bare = Kysely<{ t: { id: number; v: string } }>;

/** `n` single-row INSERT+COMMIT transactions timed on `db`, whose table `t` exists. */
function bareSide(db: Bare): Side {
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

/** The journal's own connection (`open.ts`: the native driver, WAL, synchronous=FULL). */
async function bareLibsql(path: string): Promise<Side> {
  const db = await connect(`file:${path}`) as unknown as Bare;
  await sql`CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)`.execute(db);
  return bareSide(db);
}

async function barePostgres(url: string): Promise<Side> {
  const db: Bare = new Kysely({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }),
  });
  await sql`CREATE TABLE t (id BIGINT PRIMARY KEY, v TEXT NOT NULL)`.execute(db);
  return bareSide(db);
}

/** Sets up one committed operation; times `n` fenced attempt transactions on it. */
async function fenced(url: string): Promise<Side> {
  const j = await openJournal({ url, ids: ids(), nowMs: T0 });
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

interface Figures {
  readonly bare: number;
  readonly fenced: number;
  /** bare/fenced time ratio of each round, sorted. */
  readonly perRound: readonly number[];
}

/** Warms both sides up, then times them in interleaved rounds; closes both. */
async function measure(bare: Side, fence: Side): Promise<Figures> {
  try {
    await bare.run(20);
    await fence.run(20);
    let tb = 0;
    let tf = 0;
    const perRound: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const rb = await bare.run(N / ROUNDS);
      const rf = await fence.run(N / ROUNDS);
      tb += rb;
      tf += rf;
      perRound.push(rb / rf);
    }
    perRound.sort((x, y) => x - y);
    return { bare: N / (tb / 1000), fenced: N / (tf / 1000), perRound };
  } finally {
    await bare.close();
    await fence.close();
  }
}

function print(title: string, f: Figures): void {
  const q = (x: number) =>
    f.perRound[Math.min(f.perRound.length - 1, Math.floor(x * f.perRound.length))]!;
  console.log(title);
  console.log(`  bare INSERT+COMMIT:          ${f.bare.toFixed(0)} tx/s`);
  console.log(`  fenced attempt transaction:  ${f.fenced.toFixed(0)} tx/s (1 read + 1 write)`);
  // fsync latency on a shared disk drifts a lot within a run: show the spread of the rounds too.
  console.log(
    `  ratio per round:             min ${q(0).toFixed(2)}, median ${q(0.5).toFixed(2)}, ` +
      `max ${q(1).toFixed(2)} (${ROUNDS} interleaved rounds)`,
  );
  console.log(`  ratio fenced/bare:           ${(f.fenced / f.bare).toFixed(2)} (goal ≥ 0.5)`);
}

const dir = await Deno.makeTempDir({ dir: ".", prefix: ".journal-bench-" });
try {
  const libsql = await measure(
    await bareLibsql(`${dir}/bare.db`),
    await fenced(`file:${dir}/journal.db`),
  );
  print(`journal bench, libSQL (N=${N}, file on the working directory's disk, WAL + FULL)`, libsql);
  const server = await startPostgres({ durable: true });
  let postgres: Figures;
  try {
    postgres = await measure(
      await barePostgres(await server.newDatabase("bare")),
      await fenced(await server.newDatabase("journal")),
    );
  } finally {
    await server.stop();
  }
  print(
    `journal bench, PostgreSQL (N=${N}, a server on loopback, data in the temporary ` +
      "directory, fsync on, synchronous commit)",
    postgres,
  );
  console.log("PostgreSQL against libSQL (same run)");
  console.log(
    `  fenced attempts:             ${(postgres.fenced / libsql.fenced).toFixed(2)}× ` +
      `(${postgres.fenced.toFixed(0)} vs ${libsql.fenced.toFixed(0)} tx/s)`,
  );
  console.log(
    `  bare INSERT+COMMIT:          ${(postgres.bare / libsql.bare).toFixed(2)}× ` +
      `(${postgres.bare.toFixed(0)} vs ${libsql.bare.toFixed(0)} tx/s)`,
  );
} finally {
  await Deno.remove(dir, { recursive: true });
}
