// deno-lint-ignore-file no-console
/**
 * Twin start-up time and memory for a 1,000-node cluster description (Talos side; nodes only),
 * and one Version call to every node through cairn's client. Baseline in the same run: the
 * 7-node home-ops description (Talos side only). Memory is the twin process's resident set
 * (VmRSS) after start. A last row starts the 1,000-node twin with the Kubernetes simulator too.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { stringify } from "yaml";
import { startTwinProcess, TEST_PKI_CACHE, type TwinProcess } from "../src/app/twin_process.ts";
import { loadTalosconfig } from "../src/adapters/talos/talosconfig.ts";
import { createGrpcTalos } from "../src/adapters/talos/grpc_talos.ts";

const SCHEMATIC = "30684e2ddd0b9d61be817efe9f71ba839dc0e7610d8bc111fe7f70c6b29db08b";

function description(n: number): string {
  const nodes = Array.from({ length: n }, (_, i) => ({
    name: i < 3 ? `cp-${i + 1}` : `worker-${i - 2}`,
    role: i < 3 ? "controlplane" : "worker",
    address: `10.${Math.floor(i / 250)}.${i % 250}.10`,
    talosVersion: "v1.13.9",
    kubeletVersion: "v1.35.2",
    schematic: SCHEMATIC,
  }));
  return stringify({
    apiVersion: "cairn.dev/v1alpha1",
    kind: "ClusterDescription",
    metadata: { name: `synthetic-${n}` },
    spec: { kubernetesVersion: "v1.35.2", nodes },
  });
}

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(m?.[1] ?? 0) / 1024;
}

async function measure(file: string, label: string, noKube = true) {
  const t0 = performance.now();
  const twin: TwinProcess = await startTwinProcess({
    cluster: file,
    pkiCacheDir: TEST_PKI_CACHE,
    noKube,
  });
  const startMs = performance.now() - t0;
  try {
    const rss = rssMb(twin.pid);
    const talos = await createGrpcTalos({ context: await loadTalosconfig(twin.talosconfigPath) });
    const t1 = performance.now();
    await Promise.all(twin.nodes.map((n) => talos.version(n, { timeoutMs: 30_000 })));
    const sweepMs = performance.now() - t1;
    talos.close();
    console.log(
      `${label}: ${twin.nodes.length} nodes, start ${startMs.toFixed(0)} ms, ` +
        `RSS ${rss.toFixed(1)} MB, Version on every node ${sweepMs.toFixed(0)} ms`,
    );
    return { startMs, rss, sweepMs };
  } finally {
    await twin.stop();
  }
}

const dir = mkdtempSync(join(tmpdir(), "cairn-twin-bench-"));
const big = join(dir, "synthetic-1000.yaml");
writeFileSync(big, description(1000));
const homeOps = fileURLToPath(new URL("../fixtures/clusters/home-ops.yaml", import.meta.url));
await measure(homeOps, "warm-up (bundle, PKI cache)");
const base = await measure(homeOps, "baseline home-ops");
const large = await measure(big, "synthetic 1,000 nodes");
await measure(big, "synthetic 1,000 nodes, Kubernetes simulator too", false);
console.log(
  `ratio 1000-node/home-ops: start ${(large.startMs / base.startMs).toFixed(2)}x, ` +
    `RSS ${(large.rss / base.rss).toFixed(2)}x`,
);
