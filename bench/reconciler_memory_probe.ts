// deno-lint-ignore-file no-console
/**
 * The measured side of reconciler_memory_bench.ts, run as its own process so that nothing but a
 * reconciler's own state is in its memory: it loads what `cairn reconcile` loads, connects to the
 * Kubernetes API named by KUBECONFIG, reads RSS (the baseline), then syncs the health watch
 * caches a policy over nodes, pods, budgets and workloads needs, collects one round from them,
 * and reads RSS again. Prints one JSON object (bytes; ms for the sync).
 *
 *   deno run -A --v8-flags=--expose-gc bench/reconciler_memory_probe.ts KUBECONFIG
 */
import { createClientNodeKube } from "../src/adapters/kube/client_node_kube.ts";
import { SystemClock } from "../src/adapters/clock/system_clock.ts";
import { parseHealthPolicy } from "../src/domain/health/policy_parse.ts";
import { ClusterEvidence } from "../src/engine/health/cluster_evidence.ts";
import { collectRound } from "../src/engine/health_round.ts";
// What the reconcile command wires (git, journal, HTTP ops server, Talos client, reports).
import "../src/app/reconcile_run.ts";
import "../src/app/reconcile_wiring.ts";

const [kubeconfigPath, nodes] = Deno.args as [string, string];
const gc = (globalThis as { gc?: () => void }).gc;
/** RSS and heap after a full collection, so garbage the next step would reuse is not counted. */
const memory = () => {
  gc?.();
  const m = Deno.memoryUsage();
  return { rss: m.rss, heap: m.heapUsed, heapTotal: m.heapTotal, external: m.external };
};

const kube = await createClientNodeKube({ kubeconfigPath });
await kube.serverVersion();
const before = memory();

const policyText = `apiVersion: cairn.dev/v1alpha1
kind: HealthPolicy
metadata: {name: synthetic, cluster: synthetic}
spec:
  bindings:
    - {name: nodes, reader: nodes, requiredCoverage: ${nodes}, timeoutSeconds: 120}
    - {name: versions, reader: node-versions, predicate: {kubeletVersion: v1.35.2}, timeoutSeconds: 120}
    - {name: workloads, reader: workloads, requiredCoverage: 1, timeoutSeconds: 120}
    - {name: drain, reader: pdb-feasibility, failOnTemporary: false, timeoutSeconds: 120}
`;
const parsed = parseHealthPolicy(policyText, "synthetic.yaml");
if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
const clock = new SystemClock();
const evidence = new ClusterEvidence(kube, undefined, clock);
const t0 = performance.now();
const round = await collectRound({ clock, evidence }, parsed.policy, { intervalMs: 180_000 });
const syncMs = performance.now() - t0;
const cached = [...evidence.kube.caches.values()].map((c) => ({
  resource: c.ref.plural,
  objects: c.snapshot().items.length,
}));
const after = memory();
evidence.stop();
console.log(JSON.stringify({ before, after, syncMs, verdict: round.verdict, cached }));
Deno.exit(0);
