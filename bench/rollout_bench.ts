// deno-lint-ignore-file no-console
/**
 * A 100-node TalosUpgrade rollout on the twin in virtual time, through cairn's real adapters
 * (gRPC over mTLS to the Talos simulator, client-node over HTTPS to the Kubernetes simulator, a
 * libSQL journal file). Figures:
 * - cairn's own CPU time (this process, user+system) per node, next to the twin's CPU (its
 *   /proc/<pid>/stat utime+stime) and wall time;
 * - virtual duration of the rollout against the inherent waits the twin's model imposes per node
 *   (pull + install + the longest pod termination actually waited in the drain + reboot; a
 *   health round takes no virtual time), and the overhead (virtual − inherent) / virtual,
 *   goal ≤ 1 %. Where the extra virtual time went is broken down by the executor's sleeps.
 * - requests the twin served and journal calls, per node (what a node costs, by kind).
 * Baseline in the same run: the 7-node home-ops rollout of the example plan.
 *
 * Usage: deno run -A bench/rollout_bench.ts [--nodes N] [--poll-ms MS ...]
 * Each `--poll-ms` value runs the large rollout once with that executor poll interval
 * (default: 5000, what `cairn apply` uses, and 1000). Two 100-node rollouts take about
 * 15–20 minutes of wall time on 2 cores (health rounds read every node, so cost per node grows
 * with the cluster). Nodes that do not complete are printed with their reason.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { parse, stringify } from "yaml";
import { openJournal } from "../src/adapters/journal/libsql_journal.ts";
import { cryptoIdSource } from "../src/adapters/journal/ids.ts";
import { syncingPort, TwinClock } from "../src/adapters/clock/twin_clock.ts";
import { startTwinProcess, TEST_PKI_CACHE, type TwinProcess } from "../src/app/twin_process.ts";
import { TwinControl } from "../src/sim/twin_control.ts";
import { connectCluster } from "../src/app/run_plan.ts";
import { bindPlan, executePlan } from "../src/engine/executor/run_plan.ts";
import { workingTreeBoundFiles } from "../src/adapters/repo/bound_file_reader.ts";
import type { BoundFileSource } from "../src/ports/dispatch.ts";
import { parsePlan } from "../src/domain/plan/parse.ts";
import { sha256Hex } from "../src/domain/plan/digest.ts";
import { buildTalosUpgradePlanYaml, HOME_OPS_SCHEMATIC } from "../src/domain/plan/example.ts";
import { generateCluster } from "../src/sim/generate.ts";
import { ClusterDescriptionSchema } from "../src/sim/cluster_description.ts";
import type { Clock } from "../src/ports/clock.ts";
import type { Journal } from "../src/ports/journal.ts";
import type { Kube, KubePod, PodRef } from "../src/ports/kube.ts";
import type { Logger } from "../src/ports/logger.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const GOAL = 0.01;
/**
 * How long the twin's simulated container takes to exit after SIGTERM unless the pod says
 * otherwise (`sim.cairn.dev/shutdown-seconds`); its grace period caps it (src/sim/kube).
 */
const DEFAULT_SHUTDOWN_SECONDS = 2;
const SHUTDOWN_ANNOTATION = "sim.cairn.dev/shutdown-seconds";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    nodes: { type: "string", default: "100" },
    "poll-ms": { type: "string", multiple: true },
  },
});
const NODES = Number(values.nodes);
const POLLS = (values["poll-ms"] ?? ["5000", "1000"]).map(Number);

// ---- inputs -------------------------------------------------------------------------------

/** A synthetic cluster named home-ops: 3 control planes, ~10 pods a node, PDBs that allow one. */
function clusterYaml(nodes: number): string {
  const desc = generateCluster({
    nodes,
    pods: nodes * 10,
    pdbs: Math.max(3, Math.round(nodes / 20)),
    seed: 5,
    name: "home-ops",
  });
  for (const o of desc.spec.objects) {
    if (o["kind"] === "PodDisruptionBudget") {
      // Budgets that never run out during a one-node drain (every Deployment has ≥ 2 replicas).
      o["spec"] = { minAvailable: 1, selector: (o["spec"] as Record<string, unknown>)["selector"] };
    }
  }
  return stringify(desc);
}

function policyYaml(nodes: number): string {
  const all = (name: string, reader: string, extra: Record<string, unknown> = {}) => ({
    name,
    reader,
    requiredCoverage: nodes,
    ...extra,
  });
  return stringify({
    apiVersion: "cairn.dev/v1alpha1",
    kind: "HealthPolicy",
    metadata: { name: "home-ops", cluster: "home-ops" },
    spec: {
      bindings: [
        all("nodes-ready", "nodes", { freshnessSeconds: 60, timeoutSeconds: 20 }),
        all("node-versions", "node-versions", {
          predicate: { schematic: HOME_OPS_SCHEMATIC, kubeletVersion: "v1.35.2" },
        }),
        { name: "workloads-ready", reader: "workloads", requiredCoverage: 1 },
        all("drain-feasible", "pdb-feasibility", { selection: { nodes: "all" } }),
        {
          name: "etcd-healthy",
          reader: "talos-etcd",
          selection: { names: ["cp-1", "cp-2", "cp-3"] },
          requiredCoverage: 3,
        },
        all("talos-services", "talos-services", {
          predicate: { services: ["apid", "kubelet", "containerd"] },
        }),
      ],
    },
  });
}

interface Inputs {
  readonly label: string;
  readonly cluster: string;
  readonly plan: string;
  readonly policy: string;
}

async function syntheticInputs(dir: string, nodes: number): Promise<Inputs> {
  const cluster = join(dir, `cluster-${nodes}.yaml`);
  writeFileSync(cluster, clusterYaml(nodes));
  const policy = join(dir, `policy-${nodes}.yaml`);
  writeFileSync(policy, policyYaml(nodes));
  const plan = join(dir, `talos-v1.14.2-${nodes}.yaml`);
  writeFileSync(
    plan,
    buildTalosUpgradePlanYaml({
      catalogueSha256: await sha256Hex(await Deno.readFile(join(ROOT, "catalogue/talos.yaml"))),
      healthPolicySha256: await sha256Hex(await Deno.readFile(policy)),
      nodes,
    }),
  );
  return { label: `synthetic ${nodes} nodes`, cluster, plan, policy };
}

const HOME_OPS: Inputs = {
  label: "home-ops 7 nodes",
  cluster: join(ROOT, "fixtures/clusters/home-ops.yaml"),
  plan: join(ROOT, "plans/talos-v1.14.2.yaml"),
  policy: join(ROOT, "policies/home-ops.yaml"),
};

// ---- instrumentation ----------------------------------------------------------------------

/** Virtual time the executor spent asleep, by the phase (or round purpose) last journaled. */
class SleepLedger {
  label = "start";
  readonly slept = new Map<string, number>();
  clock(inner: TwinClock): Clock {
    return {
      now: () => inner.now(),
      sleep: async (ms, signal) => {
        const t0 = inner.now();
        await inner.sleep(ms, signal);
        this.slept.set(this.label, (this.slept.get(this.label) ?? 0) + inner.now() - t0);
      },
    };
  }
  /** Per node, the longest a pod evicted from it took to exit in the twin. */
  readonly podExitMs = new Map<string, number>();
  readonly journalCalls = new Map<string, number>();
  /** Reads, from the pod the executor fetches after each accepted eviction, how long it takes. */
  kube(k: Kube): Kube {
    const record = (pod: KubePod | undefined) => {
      if (!pod?.nodeName) return;
      const shutdown = Number(pod.annotations[SHUTDOWN_ANNOTATION] ?? DEFAULT_SHUTDOWN_SECONDS);
      const ms = Math.min(pod.terminationGracePeriodSeconds, shutdown) * 1000;
      this.podExitMs.set(pod.nodeName, Math.max(this.podExitMs.get(pod.nodeName) ?? 0, ms));
    };
    return new Proxy(k, {
      get(t, p) {
        const v = Reflect.get(t, p, t);
        if (typeof v !== "function") return v;
        if (p === "getPod") {
          return async (ref: PodRef) => {
            const pod = await t.getPod(ref);
            record(pod);
            return pod;
          };
        }
        return v.bind(t);
      },
    });
  }
  journal(j: Journal): Journal {
    const set = (l: string) => (this.label = l);
    const calls = this.journalCalls;
    return new Proxy(j, {
      get(t, p) {
        const v = Reflect.get(t, p, t);
        if (typeof v !== "function") return v;
        calls.set(String(p), (calls.get(String(p)) ?? 0) + 1);
        if (p === "beginAttempt" || p === "recordPhase") {
          return (input: { phase: string }) => (set(input.phase), v.call(t, input));
        }
        if (p === "recordHealthRound") {
          return (input: { purpose: string }) => (set(`${input.purpose} round`), v.call(t, input));
        }
        return v.bind(t);
      },
    });
  }
}

const quiet: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child: () => quiet,
};

function procCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // Fields 14 and 15 (utime, stime) in clock ticks; USER_HZ is 100 on Linux.
  return (Number(f[11]) + Number(f[12])) * 10;
}

function ownCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

// ---- one rollout ----------------------------------------------------------------------------

interface Figures {
  readonly nodes: number;
  readonly state: string;
  readonly cpuMs: number;
  readonly twinCpuMs: number;
  readonly wallMs: number;
  readonly virtualMs: number;
  readonly inherentMs: number;
  readonly slept: Map<string, number>;
  readonly blockedEvictions: number;
  /** Requests the twin served during the rollout, by kind (Kubernetes verb, Talos method). */
  readonly requests: Record<string, number>;
  /** Journal calls by method. */
  readonly journalCalls: Map<string, number>;
}

async function rollout(inputs: Inputs, pollIntervalMs: number): Promise<Figures> {
  const twin: TwinProcess = await startTwinProcess({
    cluster: inputs.cluster,
    pkiCacheDir: TEST_PKI_CACHE,
  });
  try {
    return await runOn(twin, inputs, pollIntervalMs);
  } finally {
    await twin.stop();
  }
}

async function runOn(twin: TwinProcess, inputs: Inputs, pollIntervalMs: number): Promise<Figures> {
  const ledger = new SleepLedger();
  const clock = await TwinClock.connect(twin.controlUrl);
  const conn = await connectCluster({
    kubeconfigPath: twin.kubeconfigPath!,
    talosconfigPath: twin.talosconfigPath,
  });
  const cluster = {
    kube: ledger.kube(syncingPort(conn.kube, clock)),
    talos: syncingPort(conn.talos, clock),
    close: () => conn.close(),
  };
  const raw = await openJournal({
    url: `file:${join(twin.stateDir, "journal.db")}`,
    ids: cryptoIdSource(),
    nowMs: clock.now(),
  });
  try {
    const bytes = await Deno.readFile(inputs.plan);
    const bound = await bindPlan(raw, {
      parsed: await parsePlan(bytes, { file: inputs.plan }),
      bytes,
      signatures: "",
      firstSeenCommit: "bench",
      approver: { identity: "bob@example.com", role: "approver" },
      nowMs: clock.now(),
    });
    // The plan binds its policy by repository path; the synthetic one lives beside the plan.
    const repo = workingTreeBoundFiles(join(ROOT, "plans/talos-v1.14.2.yaml"));
    const policyPath = bound.plan.spec.healthPolicy.path;
    const files: BoundFileSource = {
      describe: () => `repository with ${inputs.policy} as ${policyPath}`,
      read: async (path) =>
        path === policyPath
          ? { status: "read", bytes: await Deno.readFile(inputs.policy) }
          : await repo.read(path),
    };
    const control = new TwinControl(twin.controlUrl);
    await control.resetStats();
    const v0 = await clock.sync(), c0 = ownCpuMs(), t0 = procCpuMs(twin.pid);
    const w0 = performance.now();
    const out = await executePlan({
      journal: ledger.journal(raw),
      bound,
      cluster,
      authority: { bytes, signatures: "", requiredApprovals: 1, files },
      clock: ledger.clock(clock),
      timeoutClock: clock.forTimeouts(20_000),
      log: quiet,
      owner: "ctl_bench",
      callTimeoutMs: (ms) => Math.min(ms, 20_000),
      pollIntervalMs,
      roundIntervalMs: 30_000,
    });
    const wallMs = performance.now() - w0;
    for (const n of out.nodes.filter((n) => n.state !== "completed")) {
      console.log(`  ${n.node}: ${n.state} ${n.reason}: ${n.detail}`);
    }
    const cpuMs = ownCpuMs() - c0, twinCpuMs = procCpuMs(twin.pid) - t0;
    const virtualMs = (await clock.sync()) - v0;
    const stats = await control.stats();
    const requests: Record<string, number> = {};
    for (
      const [verb, n] of Object.entries((stats.kube as { byVerb: Record<string, number> }).byVerb)
    ) {
      requests[`kube ${verb}`] = n;
    }
    for (const [method, n] of Object.entries(stats.talos.calls)) requests[`talos ${method}`] = n;
    const waits = await inherentWaits(raw, inputs.cluster, ledger.podExitMs, out.nodes.length);
    return {
      nodes: bound.plan.spec.nodes.length,
      state: `${out.state} (${out.nodes.filter((n) => n.state === "completed").length} completed)`,
      cpuMs,
      twinCpuMs,
      wallMs,
      virtualMs,
      inherentMs: waits.ms,
      slept: ledger.slept,
      blockedEvictions: waits.blocked,
      requests,
      journalCalls: ledger.journalCalls,
    };
  } finally {
    cluster.close();
    await raw.close();
  }
}

/**
 * The waits the twin's model imposes on each upgraded node: its pull, install and reboot
 * seconds, and the longest pod exit actually waited in its drain (the pod's grace, capped by
 * how long the simulated container takes to exit). A health round takes no virtual time.
 */
async function inherentWaits(
  journal: Journal,
  clusterFile: string,
  podExitMs: ReadonlyMap<string, number>,
  planned: number,
): Promise<{ ms: number; blocked: number }> {
  const desc = ClusterDescriptionSchema.parse(parse(readFileSync(clusterFile, "utf8")));
  const model = new Map(desc.spec.nodes.map((n) => [n.name, n]));
  let ms = 0, blocked = 0, completed = 0;
  for (const op of await journal.listOperations()) {
    const detail = await journal.showOperation(op.id);
    if (!detail || op.state !== "completed") continue;
    completed++;
    const n = model.get(op.machine)!;
    ms += (n.pullSeconds + n.installSeconds + n.rebootSeconds) * 1000 +
      (podExitMs.get(op.machine) ?? 0);
    blocked += detail.phases.filter((p) =>
      p.phase === "drain" && p.kind === "fact" && p.detail.includes('"outcome":"blocked"')
    ).length;
  }
  if (completed !== planned) console.log(`  (only ${completed} of ${planned} nodes completed)`);
  return { ms, blocked };
}

// ---- report ----------------------------------------------------------------------------------

function print(label: string, pollMs: number, f: Figures): void {
  const overhead = (f.virtualMs - f.inherentMs) / f.virtualMs;
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  console.log(`${label}, poll ${pollMs} ms: ${f.state}`);
  console.log(
    `  cairn CPU ${s(f.cpuMs)} (${(f.cpuMs / f.nodes).toFixed(0)} ms/node), ` +
      `twin CPU ${s(f.twinCpuMs)} (${(f.twinCpuMs / f.nodes).toFixed(0)} ms/node), ` +
      `wall ${s(f.wallMs)} (${(f.wallMs / f.nodes).toFixed(0)} ms/node)`,
  );
  console.log(
    `  virtual ${s(f.virtualMs)} (${s(f.virtualMs / f.nodes)}/node), inherent ${s(f.inherentMs)} (${
      s(f.inherentMs / f.nodes)
    }/node), overhead ${(overhead * 100).toFixed(2)} % ` +
      `(goal ≤ ${GOAL * 100} %: ${overhead <= GOAL ? "met" : "NOT met"})`,
  );
  const sleeps = [...f.slept].map(([k, v]) => `${k} ${s(v)}`).join(", ");
  console.log(
    `  executor sleeps: ${sleeps || "none"}; blocked evictions ${f.blockedEvictions}`,
  );
  const perNode = (m: Iterable<[string, number]>) =>
    [...m].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ${(n / f.nodes).toFixed(1)}`)
      .join(", ");
  console.log(`  requests per node: ${perNode(Object.entries(f.requests))}`);
  console.log(`  journal calls per node: ${perNode(f.journalCalls)}`);
}

const dir = mkdtempSync(join(tmpdir(), "cairn-rollout-bench-"));
const big = await syntheticInputs(dir, NODES);
const base = await rollout(HOME_OPS, 5_000);
print(`baseline ${HOME_OPS.label}`, 5_000, base);
const runs: Array<[number, Figures]> = [];
for (const poll of POLLS) {
  const f = await rollout(big, poll);
  print(big.label, poll, f);
  runs.push([poll, f]);
}
const CPU_GOAL_MS = 200;
const perNode = (f: Figures) => f.cpuMs / f.nodes;
for (const [poll, f] of runs) {
  const overhead = (f.virtualMs - f.inherentMs) / f.virtualMs;
  const ratio = perNode(f) / perNode(base);
  console.log(
    `figure (${NODES} nodes, poll ${poll} ms): cairn CPU ${
      (perNode(f) / 1000).toFixed(2)
    } s/node; ` +
      `baseline: home-ops 7 nodes ${(perNode(base) / 1000).toFixed(2)} s/node (same run); ratio ` +
      `${ratio.toFixed(2)}x (flat in cluster size is ~1x); goal <= ${CPU_GOAL_MS / 1000} s/node: ${
        perNode(f) <= CPU_GOAL_MS ? "met" : "NOT met"
      }; virtual overhead ${(overhead * 100).toFixed(2)} % (goal <= ${GOAL * 100} %` +
      `${poll === 5000 ? " at 5 s polling" : ""}: ${overhead <= GOAL ? "met" : "NOT met"})`,
  );
}
