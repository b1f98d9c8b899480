// deno-lint-ignore-file no-console
/**
 * The 7-node home-ops TalosUpgrade rollout in one process (`src/app/inproc_rollout.ts`): the
 * twin's own models behind the in-process Kube and Talos ports, a libSQL `:memory:` journal and
 * the real executor, one fresh world per seed (the Talos model's seed changes boot IDs and etcd
 * member IDs). Figures: wall time per seed (median, min, max), seeds per second, and this
 * process's CPU time per seed — what a seeded simulation campaign (issue 16) can afford.
 * Baseline in the same run: the same rollout through the socket twin (a Node child process,
 * gRPC over mTLS and HTTPS through cairn's real adapters), timed from `run()` to its outcome.
 *
 * Usage: deno run -A bench/inproc_rollout_bench.ts [--seeds N] [--no-baseline]
 */
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { parse } from "yaml";
import { startInprocRollout } from "../src/app/inproc_rollout.ts";
import { workingTreeBoundFiles } from "../src/adapters/repo/bound_file_reader.ts";
import type { Logger } from "../src/ports/logger.ts";
import { ClusterDescriptionSchema } from "../src/sim/cluster_description.ts";
import { startTwinWorld } from "../test/_helpers/twin_world.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const { values } = parseArgs({
  args: Deno.args,
  options: {
    seeds: { type: "string", default: "20" },
    "no-baseline": { type: "boolean", default: false },
  },
});
const SEEDS = Number(values.seeds);

const silent: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child: () => silent,
};

const description = ClusterDescriptionSchema.parse(
  parse(await Deno.readTextFile(join(ROOT, "fixtures/clusters/home-ops.yaml"))),
);
const planFile = join(ROOT, "plans/talos-v1.14.2.yaml");
const planBytes = await Deno.readFile(planFile);
// The gate uses the plan's bound health policy, read from this repository as `cairn apply` does.
const files = workingTreeBoundFiles(planFile);

/** One seed: a fresh world, the whole rollout, its outcome checked. */
async function oneSeed(seed: number): Promise<{ ms: number; virtualMin: number }> {
  const t0 = performance.now();
  const r = await startInprocRollout({
    description: structuredClone(description),
    planBytes,
    planFile,
    authority: { files },
    log: silent,
    seed,
  });
  try {
    const start = r.twin.clock.now();
    const out = await r.run();
    if (out.state !== "completed") {
      throw new Error(`seed ${seed}: ${out.nodes.map((n) => `${n.node}:${n.reason}`).join(", ")}`);
    }
    return { ms: performance.now() - t0, virtualMin: (r.twin.clock.now() - start) / 60_000 };
  } finally {
    await r.close();
  }
}

const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

// One warm-up seed (module loading, JIT), not counted.
await oneSeed(0);
const times: number[] = [];
let virtualMin = 0;
const cpu0 = cpu();
const wall0 = performance.now();
for (let seed = 1; seed <= SEEDS; seed++) {
  const r = await oneSeed(seed);
  times.push(r.ms);
  virtualMin = r.virtualMin;
}
const wall = performance.now() - wall0;
const cpuPerSeed = (cpu() - cpu0) / SEEDS;
times.sort((a, b) => a - b);
const median = times[Math.floor(times.length / 2)]!;
const perSecond = SEEDS / (wall / 1000);
console.log(
  `in-process 7-node rollout: ${SEEDS} seeds, median ${median.toFixed(0)} ms ` +
    `(min ${times[0]!.toFixed(0)}, max ${times[times.length - 1]!.toFixed(0)}), ` +
    `${perSecond.toFixed(1)} seeds/s, CPU ${cpuPerSeed.toFixed(0)} ms/seed, ` +
    `${virtualMin.toFixed(1)} virtual minutes each`,
);

if (!values["no-baseline"]) {
  const w = await startTwinWorld();
  try {
    const t0 = performance.now();
    const out = await w.run();
    const ms = performance.now() - t0;
    if (out.state !== "completed") throw new Error(`socket twin: ${out.state}`);
    console.log(`baseline socket twin 7-node rollout: ${ms.toFixed(0)} ms (one run)`);
    console.log(`ratio socket/in-process (median): ${(ms / median).toFixed(1)}x`);
  } finally {
    await w.stop();
  }
}
