// deno-lint-ignore-file no-console
/**
 * Reconciler memory with a 1,000-node / 30,000-pod / 3,000-PDB watch cache: the Kubernetes twin
 * serves the generated cluster from this process over mTLS; bench/reconciler_memory_probe.ts, a
 * process of its own that loads what `cairn reconcile` loads, syncs the health watch caches
 * (nodes, pods, PDBs, Deployments, StatefulSets, DaemonSets) through the real client and collects
 * one round. Figure: its RSS with the caches full. Baseline from the same process: its RSS
 * before the first LIST (runtime, every module, a connected client). Goal: ≤ 250 MB. The probe
 * runs with the reconciler's heap settings (src/app/reconciler_heap.ts).
 * Medians over N probe processes.
 *
 *   deno run -A bench/reconciler_memory_bench.ts [--runs N] [--nodes N --pods N --pdbs N]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { parseArgs } from "node:util";
import { SimClock } from "../src/sim/clock.ts";
import { FaultSchedule } from "../src/sim/faults.ts";
import { generateCluster } from "../src/sim/generate.ts";
import { startKubeSim, writeKubeconfig } from "../src/sim/kube/server.ts";
import { mintPki } from "../src/sim/pki.ts";
import { RECONCILER_V8_FLAGS } from "../src/app/reconciler_heap.ts";

const GOAL_MB = 250;
const { values } = parseArgs({
  args: Deno.args,
  options: {
    runs: { type: "string", default: "3" },
    nodes: { type: "string", default: "1000" },
    pods: { type: "string", default: "30000" },
    pdbs: { type: "string", default: "3000" },
  },
});
const RUNS = Number(values.runs), NODES = Number(values.nodes);
const PODS = Number(values.pods), PDBS = Number(values.pdbs);

interface Memory {
  readonly rss: number;
  readonly heap: number;
  readonly heapTotal: number;
  readonly external: number;
}

interface Probe {
  readonly before: Memory;
  readonly after: Memory;
  readonly syncMs: number;
  readonly verdict: string;
  readonly cached: readonly { resource: string; objects: number }[];
}

const dir = mkdtempSync(join(tmpdir(), "cairn-memory-bench-"));
const pki = mintPki({ dir, caName: "kubernetes", algorithm: "p256", clients: { admin: [] } });
const description = generateCluster({ nodes: NODES, pods: PODS, pdbs: PDBS, seed: 1 });
const sim = await startKubeSim({
  clock: new SimClock(Date.parse(description.spec.startTime)),
  faults: new FaultSchedule(),
  description,
  tls: { caPem: pki.ca.certPem, certPem: pki.server.certPem, keyPem: pki.server.keyPem },
});
const kubeconfigPath = join(dir, "kubeconfig");
writeKubeconfig(kubeconfigPath, {
  url: sim.url,
  caPem: pki.ca.certPem,
  clientCertPem: pki.clients.admin!.certPem,
  clientKeyPem: pki.clients.admin!.keyPem,
});

const probes: Probe[] = [];
try {
  for (let r = 0; r < RUNS; r++) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        // The heap settings the reconciler runs with (deploy/Containerfile, the launcher).
        `--v8-flags=--expose-gc,${RECONCILER_V8_FLAGS}`,
        new URL("./reconciler_memory_probe.ts", import.meta.url).pathname,
        kubeconfigPath,
        String(NODES),
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    if (!out.success) {
      throw new Error(`probe failed: ${text}${new TextDecoder().decode(out.stderr)}`);
    }
    probes.push(JSON.parse(text.trim().split("\n").at(-1)!) as Probe);
  }
} finally {
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const mb = (bytes: number) => bytes / 1048576;
const before = median(probes.map((p) => mb(p.before.rss)));
const after = median(probes.map((p) => mb(p.after.rss)));
const heapBefore = median(probes.map((p) => mb(p.before.heap)));
const heapAfter = median(probes.map((p) => mb(p.after.heap)));
const heapTotal = median(probes.map((p) => mb(p.after.heapTotal)));
const external = median(probes.map((p) => mb(p.after.external)));
const cached = probes[0]!.cached.map((c) => `${c.objects} ${c.resource}`).join(", ");
const objects = probes[0]!.cached.reduce((n, c) => n + c.objects, 0);
console.log(
  `reconciler memory: ${NODES} nodes, ${PODS} pods, ${PDBS} PDBs served by the twin; ` +
    `${RUNS} probe process(es), medians`,
);
console.log(`  watch caches: ${cached}; round verdict ${probes[0]!.verdict}`);
console.log(
  `  first sync + round ${median(probes.map((p) => p.syncMs)).toFixed(0)} ms; after a full GC: ` +
    `JS heap used ${heapBefore.toFixed(0)} → ${heapAfter.toFixed(0)} MB ` +
    `(${((heapAfter - heapBefore) * 1024 / objects).toFixed(2)} KB per cached object), ` +
    `heap reserved ${heapTotal.toFixed(0)} MB, array buffers ${external.toFixed(0)} MB; the rest ` +
    `of RSS is the runtime's native memory (HTTP client, TLS, allocator)`,
);
console.log(
  `  figure: RSS with the caches ${after.toFixed(0)} MB; baseline: the same process before ` +
    `its first LIST ${before.toFixed(0)} MB (same run); ratio ${(after / before).toFixed(2)}x, ` +
    `+${(after - before).toFixed(0)} MB; goal <= ${GOAL_MB} MB: ${
      after <= GOAL_MB ? "met" : "NOT met"
    }`,
);
