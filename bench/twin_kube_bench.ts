// deno-lint-ignore-file no-console
/**
 * Kubernetes twin at scale: start-up time and memory for a generated 1,000-node / 30,000-pod /
 * 3,000-PDB cluster, LIST throughput (pods/s through @kubernetes/client-node, paginated) and
 * WATCH throughput (events/s delivered to a client-node watch). Baselines from the same run: the
 * 7-node home-ops start-up, and JSON.stringify + JSON.parse of the same pods (the floor any
 * LIST pays). Usage: deno run -A bench/twin_kube_bench.ts [nodes pods pdbs]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { parse } from "yaml";
import { createClientNodeKube } from "../src/adapters/kube/client_node_kube.ts";
import {
  type ClusterDescription,
  ClusterDescriptionSchema,
} from "../src/sim/cluster_description.ts";
import { SimClock } from "../src/sim/clock.ts";
import { FaultSchedule } from "../src/sim/faults.ts";
import { generateCluster } from "../src/sim/generate.ts";
import { type KubeSim, startKubeSim, writeKubeconfig } from "../src/sim/kube/server.ts";
import { mintPki } from "../src/sim/pki.ts";

const [nodes = 1000, pods = 30_000, pdbs = 3000] = Deno.args.map(Number);
const dir = mkdtempSync(join(tmpdir(), "twin-kube-bench-"));
const pki = mintPki({ dir, caName: "kubernetes", algorithm: "p256", clients: { admin: [] } });
const tls = { caPem: pki.ca.certPem, certPem: pki.server.certPem, keyPem: pki.server.keyPem };
const mb = (n: number) => `${(n / 1048576).toFixed(0)} MB`;

async function start(d: ClusterDescription): Promise<{ sim: KubeSim; ms: number }> {
  const t = performance.now();
  const sim = await startKubeSim({
    clock: new SimClock(Date.parse(d.spec.startTime)),
    faults: new FaultSchedule(),
    description: d,
    tls,
    historySize: 100_000,
  });
  return { sim, ms: performance.now() - t };
}

const homeOps = ClusterDescriptionSchema.parse(
  parse(Deno.readTextFileSync(new URL("../fixtures/clusters/home-ops.yaml", import.meta.url))),
);
const small = await start(homeOps);
await small.sim.close();

const memBefore = Deno.memoryUsage();
let t = performance.now();
const described = generateCluster({ nodes, pods, pdbs, seed: 1 });
const generateMs = performance.now() - t;
const { sim, ms: startMs } = await start(described);
const memAfter = Deno.memoryUsage();
const podType = sim.controllers.pods;
const podCount = sim.store.list(podType).length;
console.log(`twin kube: ${nodes} nodes, ${podCount} pods, ${pdbs} PDBs`);
console.log(`  generate description        ${generateMs.toFixed(0)} ms`);
console.log(
  `  start-up (load + listen)    ${startMs.toFixed(0)} ms   baseline home-ops (7 nodes): ${
    small.ms.toFixed(0)
  } ms   ratio ${(startMs / small.ms).toFixed(0)}x`,
);
console.log(
  `  memory                      RSS ${mb(memAfter.rss)} (+${mb(memAfter.rss - memBefore.rss)})` +
    `   heap ${mb(memAfter.heapUsed)} (+${mb(memAfter.heapUsed - memBefore.heapUsed)})`,
);

const kubeconfigPath = join(dir, "kubeconfig");
const admin = pki.clients.admin!;
writeKubeconfig(kubeconfigPath, {
  url: sim.url,
  caPem: pki.ca.certPem,
  clientCertPem: admin.certPem,
  clientKeyPem: admin.keyPem,
});
const kube = await createClientNodeKube({ kubeconfigPath });

t = performance.now();
const list = await kube.listPods();
const listMs = performance.now() - t;
t = performance.now();
const copy = JSON.parse(JSON.stringify(sim.store.list(podType))) as unknown[];
const jsonMs = performance.now() - t;
console.log(
  `  LIST pods (500/page, mTLS)  ${list.items.length} in ${listMs.toFixed(0)} ms = ${
    (list.items.length / listMs * 1000).toFixed(0)
  } pods/s   baseline JSON round trip of ${copy.length}: ${
    (copy.length / jsonMs * 1000).toFixed(0)
  } pods/s   ratio ${(listMs / jsonMs).toFixed(1)}x`,
);

// WATCH: relabel pods in the store while a client-node watch counts what it receives.
const N = Math.min(20_000, podCount);
const all = sim.store.list(podType).slice(0, N);
let got = 0;
let done: () => void = () => {};
const received = new Promise<void>((r) => (done = r));
const ac = new AbortController();
const ended = kube.watch(
  { group: "", version: "v1", plural: "pods", namespaced: true },
  { resourceVersion: list.resourceVersion, signal: ac.signal },
  () => {
    if (++got === N) done();
  },
);
await sim.waitFor(() => sim.store.watcherCount > 1);
t = performance.now();
for (const p of all) {
  sim.store.put(podType, {
    ...p,
    metadata: { ...p.metadata, labels: { ...p.metadata.labels, bench: "1" } },
  });
}
const produceMs = performance.now() - t;
await received;
const watchMs = performance.now() - t;
ac.abort();
await ended;
console.log(
  `  WATCH pods                  ${got} events in ${watchMs.toFixed(0)} ms = ${
    (got / watchMs * 1000).toFixed(0)
  } events/s   (server-side store writes alone: ${(N / produceMs * 1000).toFixed(0)}/s)`,
);
await sim.close();
rmSync(dir, { recursive: true, force: true });
