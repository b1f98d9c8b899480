// deno-lint-ignore-file no-console
/**
 * Health rounds on a synthetic 1,000-node / 30,000-pod / 3,000-PDB cluster: first sync, then
 * steady-state rounds from watch caches (quiet, and with pod churn between rounds), next to the
 * same round computed by listing everything each time. The API is an in-process server that
 * serialises and parses JSON per LIST (as a real client pays) and counts requests.
 */
import type {
  KubeObject,
  KubeResourceRef,
  KubeWatchEnd,
  KubeWatchEvent,
} from "../src/ports/kube.ts";
import { SimClock } from "../src/sim/clock.ts";
import { ClusterEvidence } from "../src/engine/health/cluster_evidence.ts";
import { collectRound } from "../src/engine/health_round.ts";
import { parseHealthPolicy } from "../src/domain/health/policy_parse.ts";
import { readBinding } from "../src/domain/health/readers/index.ts";
import { evaluateRound } from "../src/domain/health/round.ts";
import type { KubeObjectLike, ReadInputs } from "../src/domain/health/types.ts";

const NODES = 1000, NAMESPACES = 300, APPS_PER_NS = 10, PODS_PER_APP = 10;

function generate() {
  const nodes: KubeObject[] = [], pods: KubeObject[] = [], pdbs: KubeObject[] = [];
  for (let i = 0; i < NODES; i++) {
    nodes.push({
      apiVersion: "v1",
      kind: "Node",
      metadata: {
        name: `node-${i}`,
        uid: `n${i}`,
        resourceVersion: "1",
        labels: { zone: `z${i % 3}` },
      },
      spec: {},
      status: {
        conditions: [{ type: "Ready", status: "True" }],
        nodeInfo: { osImage: "Talos (v1.13.9)", kubeletVersion: "v1.35.2" },
      },
    });
  }
  let p = 0;
  for (let n = 0; n < NAMESPACES; n++) {
    for (let a = 0; a < APPS_PER_NS; a++) {
      const ns = `ns-${n}`, app = `app-${a}`, idx = n * APPS_PER_NS + a;
      for (let r = 0; r < PODS_PER_APP; r++, p++) {
        pods.push({
          apiVersion: "v1",
          kind: "Pod",
          metadata: {
            namespace: ns,
            name: `${app}-${r}`,
            uid: `p${p}`,
            resourceVersion: "1",
            labels: { app, tier: "web", replica: `${r}` },
          },
          spec: { nodeName: `node-${(p * 7) % NODES}` },
          status: { phase: "Running", conditions: [{ type: "Ready", status: "True" }] },
        });
      }
      const blocked = idx % 100 === 0; // 1 %: disruptionsAllowed 0 right now
      pdbs.push({
        apiVersion: "policy/v1",
        kind: "PodDisruptionBudget",
        metadata: { namespace: ns, name: app, uid: `b${idx}`, resourceVersion: "1", generation: 1 },
        spec: { maxUnavailable: 1, selector: { matchLabels: { app } } },
        status: {
          observedGeneration: 1,
          disruptionsAllowed: blocked ? 0 : 1,
          currentHealthy: PODS_PER_APP - (blocked ? 1 : 0),
          desiredHealthy: PODS_PER_APP - 1,
          expectedPods: PODS_PER_APP,
        },
      });
    }
  }
  return { nodes, pods, pdbs };
}

/** An in-process API: LIST costs a JSON encode/decode; watches stay open and get pushed events. */
class Api {
  requests = { list: 0, watch: 0 };
  #watchers = new Map<string, (e: KubeWatchEvent) => void>();
  constructor(private readonly data: Record<string, KubeObject[]>) {}
  listObjects(ref: KubeResourceRef) {
    this.requests.list++;
    const items = JSON.parse(JSON.stringify(this.data[ref.plural] ?? [])) as KubeObject[];
    return Promise.resolve({ items, resourceVersion: "100" });
  }
  watch(
    ref: KubeResourceRef,
    opts: { signal?: AbortSignal },
    onEvent: (e: KubeWatchEvent) => void,
  ) {
    this.requests.watch++;
    this.#watchers.set(ref.plural, onEvent);
    return new Promise<KubeWatchEnd>((resolve) =>
      opts.signal?.addEventListener("abort", () => resolve({ kind: "aborted" }))
    );
  }
  push(plural: string, e: KubeWatchEvent) {
    this.#watchers.get(plural)?.(e);
  }
}

const POLICY = `apiVersion: cairn.dev/v1alpha1
kind: HealthPolicy
metadata: {name: synthetic, cluster: synthetic}
spec:
  bindings:
    - {name: nodes, reader: nodes, requiredCoverage: ${NODES}}
    - {name: versions, reader: node-versions, predicate: {kubeletVersion: v1.35.2}}
    - {name: drain, reader: pdb-feasibility, failOnTemporary: false}
`;
const parsed = parseHealthPolicy(POLICY, "synthetic.yaml");
if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
const policy = parsed.policy;

const data = generate();
const api = new Api({
  nodes: data.nodes,
  pods: data.pods,
  pdbs: data.pdbs,
  poddisruptionbudgets: data.pdbs,
});
const clock = new SimClock(Date.UTC(2026, 11, 1));
const evidence = new ClusterEvidence(api, undefined, clock);
const deps = { clock, evidence };

let t = performance.now();
const first = await collectRound(deps, policy, { intervalMs: 30_000 });
const firstSyncMs = performance.now() - t;
const afterSync = { ...api.requests };

async function timedRounds(n: number, between?: (i: number) => void) {
  const times: number[] = [];
  let verdict = "";
  for (let i = 0; i < n; i++) {
    between?.(i);
    await clock.advance(10_000);
    const s = performance.now();
    verdict = (await collectRound(deps, policy, { intervalMs: 30_000 })).verdict;
    times.push(performance.now() - s);
  }
  times.sort((a, b) => a - b);
  return { median: times[Math.floor(n / 2)]!, p90: times[Math.floor(n * 0.9)]!, verdict };
}

const ROUNDS = 20;
const quiet = await timedRounds(ROUNDS);
const quietReq = {
  list: api.requests.list - afterSync.list,
  watch: api.requests.watch - afterSync.watch,
};
// Churn: 20 pod readiness flips per round arrive through the watch before each round.
const churn = await timedRounds(ROUNDS, (i) => {
  for (let k = 0; k < 20; k++) {
    const pod = data.pods[(i * 997 + k * 131) % data.pods.length]!;
    const ready = (k + i) % 2 === 0 ? "True" : "False";
    api.push("pods", {
      type: "MODIFIED",
      object: {
        ...pod,
        status: { phase: "Running", conditions: [{ type: "Ready", status: ready }] },
      },
    });
  }
});
const churnReq = { list: api.requests.list - afterSync.list - quietReq.list };

// Baseline: the same round, listing every resource type each time (no caches, no indexes).
async function listingRound() {
  const [n, p, b] = await Promise.all(
    ["nodes", "pods", "poddisruptionbudgets"].map((pl) =>
      api.listObjects({ group: "", version: "v1", plural: pl, namespaced: false })
    ),
  );
  const now = clock.now();
  const snap = (items: readonly KubeObjectLike[]) => ({
    items,
    freshness: { state: "live" as const, confirmedAtMs: now },
  });
  const m: Record<string, ReturnType<typeof snap>> = {
    "v1/Node": snap(n!.items),
    "v1/Pod": snap(p!.items),
    "policy/v1/PodDisruptionBudget": snap(b!.items),
  };
  const inputs: ReadInputs = {
    nowMs: now,
    kube: { resource: (k) => m[k] },
    talos: { node: () => undefined },
  };
  const results = policy.bindings.map((bd) => readBinding(bd, inputs, now));
  return evaluateRound(policy, { startedAtMs: now, deadlineMs: now + 30_000 }, results).verdict;
}
const listsBefore = api.requests.list;
const base: number[] = [];
let baseVerdict = "";
for (let i = 0; i < ROUNDS; i++) {
  t = performance.now();
  baseVerdict = await listingRound();
  base.push(performance.now() - t);
}
base.sort((a, b) => a - b);
const baseMedian = base[Math.floor(ROUNDS / 2)]!;
const baseLists = (api.requests.list - listsBefore) / ROUNDS;
evidence.stop();

const fmt = (x: number) => x.toFixed(1);
console.log(
  `cluster: ${NODES} nodes, ${data.pods.length} pods, ${data.pdbs.length} PDBs; policy ${policy.bindings.length} bindings`,
);
console.log(
  `first sync + round:                 ${
    fmt(firstSyncMs)
  } ms, ${afterSync.list} LIST, ${afterSync.watch} WATCH (verdict ${first.verdict})`,
);
console.log(
  `steady round, quiet (watch cache):  median ${fmt(quiet.median)} ms, p90 ${
    fmt(quiet.p90)
  } ms, LIST/round ${quietReq.list / ROUNDS} (verdict ${quiet.verdict})`,
);
console.log(
  `steady round, 20 pod events/round:  median ${fmt(churn.median)} ms, p90 ${
    fmt(churn.p90)
  } ms, LIST/round ${churnReq.list / ROUNDS}`,
);
console.log(
  `baseline round, list everything:    median ${
    fmt(baseMedian)
  } ms, LIST/round ${baseLists} (verdict ${baseVerdict})`,
);
console.log(
  `ratio baseline/cached: quiet ${fmt(baseMedian / quiet.median)}x, churn ${
    fmt(baseMedian / churn.median)
  }x; goal: 0 LIST/round, round <= 50 ms`,
);
