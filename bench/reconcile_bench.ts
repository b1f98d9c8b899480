// deno-lint-ignore-file no-console
/**
 * Reconcile loop figures:
 * 1. Time from the merge commit being pushed (git daemon on loopback) to the first durable phase
 *    intent in the journal, with a 1 s poll and with the webhook (`POST /hooks/git` on the ops
 *    server, poll interval 60 s so only the hook can explain a quick pickup). Ratio poll/hook.
 * 2. Fetch cost on a repository with 10,000 commits and 1,000 plans against one with 100
 *    commits and 10 plans: first fetch + full introductions walk, then one new merge: the
 *    incremental fetch, the incremental introductions walk and the tip listing. Incremental
 *    costs must not grow with history (ratio big/small ≈ 1).
 *
 * Usage: deno run -A bench/reconcile_bench.ts [RUNS]
 */
import { join } from "node:path";
import { GitRemote } from "../src/adapters/git/git_remote.ts";
import { startOpsServer } from "../src/adapters/http/ops_server.ts";
import { createCairnMetrics } from "../src/adapters/metrics/cairn_metrics.ts";
import type { Journal } from "../src/ports/journal.ts";
import { git, startGitDaemon } from "../test/_helpers/git_daemon.ts";
import { startReconcileWorld } from "../test/_helpers/reconcile_world.ts";

const RUNS = Number(Deno.args[0] ?? 3);
const PLAN = "talos-v1.14.2";

function median(xs: number[]): number {
  const s = xs.slice().sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** Journal acts whose first occurrence marks a stage on the way to the first intent. */
const STAGES = ["recordPlan", "recordDispatchCheck", "recordHealthRound", "commit"] as const;
type Stage = (typeof STAGES)[number];

/**
 * Resolves with performance.now() of the first recorded phase intent; `stages` holds when each
 * of {@link STAGES} was first recorded (bound, dispatch check, first health round, commitment).
 */
function intentTimer(): {
  wrap: (j: Journal) => Journal;
  first: Promise<number>;
  stages: Map<Stage, number>;
} {
  let resolve!: (t: number) => void;
  const first = new Promise<number>((r) => (resolve = r));
  const stages = new Map<Stage, number>();
  const wrap = (j: Journal): Journal => {
    const recordPhase: Journal["recordPhase"] = async (input) => {
      await j.recordPhase(input);
      if (input.kind === "intent") resolve(performance.now());
    };
    return new Proxy(j, {
      get: (t, p) => {
        if (p === "recordPhase") return recordPhase;
        const v = Reflect.get(t, p, t);
        if (typeof v !== "function") return v;
        const stage = STAGES.find((s) => s === p);
        if (!stage) return v.bind(t);
        return async (...args: unknown[]) => {
          const r = await v.apply(t, args);
          if (!stages.has(stage)) stages.set(stage, performance.now());
          return r;
        };
      },
    });
  };
  return { wrap, first, stages };
}

async function untilPreview(bare: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await git([
        "--git-dir",
        bare,
        "cat-file",
        "-e",
        `cairn-reports:reports/${PLAN}/preview/plan~${PLAN}.md`,
      ]);
      return;
    } catch {
      if (Date.now() > deadline) throw new Error("no preview within 30 s");
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** The webhook's shared secret in the benchmark (hooks are always authenticated). */
const BENCH_HOOK_SECRET = "bench-only-hook-secret";

/** One pickup: ms from the push to the first intent, and to each stage on the way. */
interface Pickup {
  readonly ms: number;
  /** Plan bound (fetched, assessed, recorded). */
  readonly bound: number;
  /** First dispatch check recorded. */
  readonly dispatched: number;
  /** First health round (the gate before the first node) recorded. */
  readonly health: number;
  /** The first node's commitment recorded. */
  readonly committed: number;
}

/** One pickup measurement: push the plan branch, wait for its preview, merge, time the intent. */
async function pickup(mode: "poll" | "hook"): Promise<Pickup> {
  const timer = intentTimer();
  const w = await startReconcileWorld({
    pollIntervalMs: mode === "poll" ? 1_000 : 60_000,
    wrapJournal: timer.wrap,
  });
  const ops = await startOpsServer({
    port: 0,
    metrics: createCairnMetrics({ version: "bench" }),
    readiness: () => w.reconciler.readiness(),
    onGitHook: () => w.wakeup.nudge(),
    hookSecret: BENCH_HOOK_SECRET,
  });
  const hook = () =>
    fetch(`${ops.url}/hooks/git`, {
      method: "POST",
      headers: { "x-cairn-token": BENCH_HOOK_SECRET },
      body: "{}",
    }).then((r) => r.body?.cancel());
  const loop = w.reconciler.run();
  try {
    await w.wt.checkout(`plan/${PLAN}`, true);
    await w.wt.commit({
      [`plans/${PLAN}.yaml`]: w.planText,
      [`plans/${PLAN}.yaml.sig`]: await w.sign(w.planText, ["alice", "bob"]),
    }, "plan");
    await w.wt.push(`plan/${PLAN}`);
    if (mode === "hook") await hook();
    await untilPreview(w.bare);
    await w.wt.pull("main");
    await w.wt.merge(`plan/${PLAN}`);
    await w.wt.push("main");
    const pushed = performance.now();
    if (mode === "hook") await hook();
    const intent = await timer.first;
    const at = (s: Stage) => (timer.stages.get(s) ?? intent) - pushed;
    return {
      ms: intent - pushed,
      bound: at("recordPlan"),
      dispatched: at("recordDispatchCheck"),
      health: at("recordHealthRound"),
      committed: at("commit"),
    };
  } finally {
    w.stopper.abort();
    await loop;
    await ops.close();
    await w.stop();
  }
}

/** Builds a bare repository with `commits` commits, `plans` of which add a plan, by fast-import. */
async function historyRepo(dir: string, commits: number, plans: number): Promise<string> {
  const bare = join(dir, `r${commits}.git`);
  await git(["init", "--bare", "--quiet", "--initial-branch=main", bare]);
  const every = Math.floor(commits / plans);
  const lines: string[] = [];
  const t0 = 1_790_000_000;
  for (let i = 1; i <= commits; i++) {
    const files: string[] = [];
    if (i % every === 0) {
      const body = `# plan ${i}\nkind: TalosUpgrade\n`;
      files.push(
        `M 100644 inline plans/p-${String(i).padStart(6, "0")}.yaml`,
        `data ${body.length}`,
        body,
      );
    } else {
      const body = `${i}\n`;
      files.push("M 100644 inline notes.txt", `data ${body.length}`, body);
    }
    const msg = `c${i}`;
    lines.push(
      "commit refs/heads/main",
      `committer Bench <bench@example.com> ${t0 + i} +0000`,
      `data ${msg.length}`,
      msg,
      ...files,
      "",
    );
  }
  const stdin = new TextEncoder().encode(lines.join("\n") + "\n");
  await git(["--git-dir", bare, "fast-import", "--quiet"], undefined, stdin);
  return bare;
}

async function timed<T>(f: () => Promise<T>): Promise<[number, T]> {
  const t = performance.now();
  const v = await f();
  return [performance.now() - t, v];
}

interface FetchFigures {
  firstFetch: number;
  fullWalk: number;
  plans: number;
  incFetch: number;
  incWalk: number;
  tipList: number;
}

async function fetchCost(
  dir: string,
  commits: number,
  plans: number,
  /** The remote's URL for the bare repository (default `file://`). */
  urlOf: (bare: string) => string = (bare) => `file://${bare}`,
  tag = "",
): Promise<FetchFigures> {
  const bare = await historyRepo(join(dir, tag), commits, plans);
  const remote = await GitRemote.open({
    url: urlOf(bare),
    cacheDir: join(dir, `cache${tag}${commits}`),
    watchedBranch: "main",
  });
  const [firstFetch, f1] = await timed(() => remote.fetch());
  const [fullWalk, intros] = await timed(() => remote.introductions(f1.watched.commit));
  const inc: number[] = [], walk: number[] = [], list: number[] = [];
  let last = f1.watched.commit;
  const work = join(dir, `work${tag}${commits}`);
  await git(["clone", "--quiet", bare, work]);
  for (let k = 0; k < 5; k++) {
    await Deno.writeTextFile(join(work, `plans/new-${k}.yaml`), `# new ${k}\n`);
    await git(["-C", work, "add", "-A"]);
    await git([
      "-C",
      work,
      "-c",
      "user.name=B",
      "-c",
      "user.email=b@e",
      "commit",
      "-qm",
      `new ${k}`,
    ]);
    await git(["-C", work, "push", "--quiet", "origin", "main"]);
    const [a, f] = await timed(() => remote.fetch());
    const [b] = await timed(() => remote.introductions(f.watched.commit, last));
    const [c] = await timed(() => remote.listPlans(f.watched.commit));
    inc.push(a), walk.push(b), list.push(c);
    last = f.watched.commit;
  }
  return {
    firstFetch,
    fullWalk,
    plans: intros.length,
    incFetch: median(inc),
    incWalk: median(walk),
    tipList: median(list),
  };
}

const GOAL_HOOK_MS = 300;
const poll: Pickup[] = [], hook: Pickup[] = [];
for (let i = 0; i < RUNS; i++) {
  poll.push(await pickup("poll"));
  hook.push(await pickup("hook"));
}
const list = (xs: Pickup[]) => xs.map((x) => x.ms.toFixed(0)).join(", ");
const stagesOf = (xs: Pickup[]) =>
  `bound ${median(xs.map((x) => x.bound)).toFixed(0)} ms, dispatch check ${
    median(xs.map((x) => x.dispatched)).toFixed(0)
  } ms, first health round ${median(xs.map((x) => x.health)).toFixed(0)} ms, commitment ${
    median(xs.map((x) => x.committed)).toFixed(0)
  } ms`;
console.log(`merge push → first durable intent, ${RUNS} runs each (median):`);
console.log(`  1 s poll: ${median(poll.map((x) => x.ms)).toFixed(0)} ms  [${list(poll)}]`);
console.log(`  webhook:  ${median(hook.map((x) => x.ms)).toFixed(0)} ms  [${list(hook)}]`);
console.log(`  webhook stages after the push (medians): ${stagesOf(hook)}, then the intent`);
const hookMs = median(hook.map((x) => x.ms));
const pollMs = median(poll.map((x) => x.ms));
/** Printed last: the fetch-cost figures come between. */
const pickupSummary = [
  `  figure: webhook → first durable intent ${hookMs.toFixed(0)} ms median; baseline: 1 s poll ` +
  `${pollMs.toFixed(0)} ms (same run); ratio webhook/poll ${(hookMs / pollMs).toFixed(2)}; ` +
  `goal <= ${GOAL_HOOK_MS} ms: ${hookMs <= GOAL_HOOK_MS ? "met" : "NOT met"}`,
];

const dir = await Deno.makeTempDir({ prefix: "cairn-fetch-bench-" });
try {
  const small = await fetchCost(dir, 100, 10);
  const big = await fetchCost(dir, 10_000, 1_000);
  const row = (n: string, f: FetchFigures) =>
    `  ${n.padEnd(22)} first fetch ${f.firstFetch.toFixed(0)} ms, full walk ${
      f.fullWalk.toFixed(0)
    } ms ` +
    `(${f.plans} plans); per new merge: fetch ${f.incFetch.toFixed(1)} ms, walk ${
      f.incWalk.toFixed(1)
    } ms, ` +
    `list tip ${f.tipList.toFixed(1)} ms`;
  console.log("fetch cost (GitRemote over file://, medians of 5 incremental merges):");
  console.log(row("100 commits/10 plans", small));
  console.log(row("10k commits/1k plans", big));
  // The webhook path fetches over the git daemon (loopback TCP), not file://: the same small
  // repository over it shows what that transport adds to each fetch.
  const served = join(dir, "served");
  await Deno.mkdir(served, { recursive: true });
  const daemon = await startGitDaemon(served);
  let overDaemon: FetchFigures;
  try {
    overDaemon = await fetchCost(
      dir,
      100,
      10,
      (bare) => daemon.url(bare.slice(served.length + 1)),
      "served",
    );
  } finally {
    await daemon.stop();
  }
  console.log(
    `  100 commits over git daemon: per new merge fetch ${overDaemon.incFetch.toFixed(1)} ms ` +
      `(file:// ${small.incFetch.toFixed(1)} ms): the loopback daemon's exchange adds ${
        (overDaemon.incFetch - small.incFetch).toFixed(0)
      } ms to the webhook path's fetch (its pkt-lines are small writes that wait out TCP's delayed ` +
      `ACK, ~40 ms a round; GIT_TRACE_PACKET shows the gaps)`,
  );
  console.log(
    `  ratio big/small: incremental fetch ${(big.incFetch / small.incFetch).toFixed(2)}, ` +
      `incremental walk ${(big.incWalk / small.incWalk).toFixed(2)}, tip listing ${
        (big.tipList / small.tipList).toFixed(2)
      }, first fetch ${(big.firstFetch / small.firstFetch).toFixed(2)}`,
  );
} finally {
  await Deno.remove(dir, { recursive: true });
}
for (const line of pickupSummary) console.log(line);
