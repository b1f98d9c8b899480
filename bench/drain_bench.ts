// deno-lint-ignore-file no-console
/**
 * cairn's drain against the real `kubectl drain`, side by side on the twin running on the wall
 * clock (as `cairn sim serve` does), same cluster, same budget pressure: three Deployments of
 * twelve replicas spread over three workers (four pods of each on the drained node), each under a
 * PodDisruptionBudget that allows one disruption. A replacement pod takes the twin's start delay
 * to become Ready, so each budget frees one disruption at a time.
 *
 * kubectl retries a refused eviction every 5 s; cairn's drain (engine/drain_run.ts) asks again
 * when a budget allows a disruption or a pod leaves. Each side gets its own fresh twin; the node
 * is cordoned first on both. Prints wall time and Kubernetes API requests for each, the ratio and
 * the goal (cairn ≤ 0.5× kubectl's time, with fewer requests).
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startTwinProcess, TEST_PKI_CACHE } from "../src/app/twin_process.ts";
import { SystemClock } from "../src/adapters/clock/system_clock.ts";
import { connectCluster } from "../src/app/run_plan.ts";
import { planDrain } from "../src/engine/drain_plan.ts";
import { runDrain } from "../src/engine/drain_run.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const NODE = "worker-1";
const TRACE = Deno.env.get("CAIRN_BENCH_TRACE") === "1";
const KUBECTL = Deno.env.get("CAIRN_KUBECTL") ?? "kubectl";

interface Run {
  readonly seconds: number;
  readonly requests: number;
  readonly evictions: { accepted: number; blocked: number };
}

async function withTwin(
  file: string,
  fn: (t: Awaited<ReturnType<typeof startTwinProcess>>) => Promise<Run>,
) {
  const twin = await startTwinProcess({
    cluster: file,
    pkiCacheDir: TEST_PKI_CACHE,
    wallClock: { speed: 1 },
  });
  try {
    return await fn(twin);
  } finally {
    await twin.stop();
  }
}

async function kubeStats(controlUrl: string) {
  const s = await (await fetch(`${controlUrl}/stats`)).json();
  return s.kube as { total: number; evictions: { accepted: number; blocked: number } };
}

async function resetStats(controlUrl: string) {
  await (await fetch(`${controlUrl}/stats/reset`, { method: "POST" })).body?.cancel();
}

async function kubectlDrain(file: string): Promise<Run> {
  return await withTwin(file, async (twin) => {
    await resetStats(twin.controlUrl);
    const t0 = performance.now();
    const out = await new Deno.Command(KUBECTL, {
      args: [
        "--kubeconfig",
        twin.kubeconfigPath!,
        "drain",
        NODE,
        "--ignore-daemonsets",
        "--delete-emptydir-data",
        "--timeout=300s",
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const seconds = (performance.now() - t0) / 1000;
    if (!out.success) {
      throw new Error(`kubectl drain failed: ${new TextDecoder().decode(out.stderr)}`);
    }
    const s = await kubeStats(twin.controlUrl);
    return { seconds, requests: s.total, evictions: s.evictions };
  });
}

async function cairnDrain(file: string): Promise<Run> {
  return await withTwin(file, async (twin) => {
    const conn = await connectCluster({
      kubeconfigPath: twin.kubeconfigPath!,
      talosconfigPath: twin.talosconfigPath,
    });
    try {
      const kube = conn.kube;
      await kube.serverVersion(); // the client is loaded and connected before timing
      await resetStats(twin.controlUrl);
      const t0 = performance.now();
      const node = await kube.getNode(NODE);
      await kube.cordon(NODE, node!.resourceVersion);
      const pods = (await kube.listPods(NODE)).items;
      const plan = planDrain({
        node: NODE,
        pods,
        drainBoundSeconds: 300,
        partialDrainAuthorized: false,
      });
      const r = await runDrain(
        {
          kube,
          clock: new SystemClock(),
          pollIntervalMs: 5_000,
          callTimeoutMs: 30_000,
          wake: "events",
          record: (kind, detail) => {
            if (TRACE && kind === "fact") {
              console.log(((performance.now() - t0) / 1000).toFixed(2), JSON.stringify(detail));
            }
            return Promise.resolve();
          },
        },
        plan,
        pods,
        300_000,
      );
      const seconds = (performance.now() - t0) / 1000;
      if (r.kind !== "drained") throw new Error(`cairn drain ended ${r.kind}`);
      const s = await kubeStats(twin.controlUrl);
      return { seconds, requests: s.total, evictions: s.evictions };
    } finally {
      conn.close();
    }
  });
}

const file = join(ROOT, "fixtures/clusters/drain-pressure.yaml");
{
  const k = await kubectlDrain(file);
  const c = await cairnDrain(file);
  const show = (name: string, r: Run) =>
    console.log(
      `${name.padEnd(14)} ${r.seconds.toFixed(1).padStart(6)} s  ${
        String(r.requests).padStart(4)
      } API requests  evictions ${r.evictions.accepted} accepted / ${r.evictions.blocked} refused`,
    );
  console.log(`drain of ${NODE}: 12 pods of 3 Deployments, each budget allowing 1 disruption`);
  show("kubectl drain", k);
  show("cairn drain", c);
  const ratio = c.seconds / k.seconds;
  console.log(
    `cairn / kubectl: time ${ratio.toFixed(2)}x (goal <= 0.50x: ${
      ratio <= 0.5 ? "met" : "NOT met"
    }), ` +
      `requests ${c.requests} vs ${k.requests} (goal fewer: ${
        c.requests < k.requests ? "met" : "NOT met"
      })`,
  );
}
