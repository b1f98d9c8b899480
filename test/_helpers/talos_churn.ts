/**
 * Connection churn against the twin: rounds of (open a client connection, make calls — some
 * concurrent —, close). Odd rounds end with the SERVER closing every connection (GOAWAY via the
 * control endpoint) while a batch of calls is in flight; even rounds end with the CLIENT closing.
 * Shared by the churn test (smaller) and bench/talos_churn_bench.ts (10,000 calls).
 */
import { fileURLToPath } from "node:url";
import { loadTalosconfig } from "../../src/adapters/talos/talosconfig.ts";
import {
  createGrpcTalos,
  type GrpcTalos,
  type GrpcTalosOptions,
} from "../../src/adapters/talos/grpc_talos.ts";
import { startTwinProcess, TEST_PKI_CACHE, type TwinProcess } from "../../src/app/twin_process.ts";
import { TwinControl } from "../../src/sim/twin_control.ts";

const TALOS_MINI = fileURLToPath(
  new URL("../../fixtures/clusters/talos-mini.yaml", import.meta.url),
);

/** The Talos side of the twin alone (talos-mini, no Kubernetes API), its control and a client. */
export interface TalosTwin {
  readonly twin: TwinProcess;
  readonly control: TwinControl;
  /** A new gRPC client of cairn's on the twin's talosconfig. */
  client(o?: Omit<GrpcTalosOptions, "context">): Promise<GrpcTalos>;
}

/** Starts a Talos-only twin under Node; the caller stops `twin`. */
export async function startTalosTwin(): Promise<TalosTwin> {
  const twin = await startTwinProcess({
    cluster: TALOS_MINI,
    pkiCacheDir: TEST_PKI_CACHE,
    noKube: true,
  });
  return {
    twin,
    control: new TwinControl(twin.controlUrl),
    client: async (o = {}) =>
      createGrpcTalos({ context: await loadTalosconfig(twin.talosconfigPath), ...o }),
  };
}

export interface ChurnResult {
  readonly calls: number;
  readonly failures: number;
  readonly rounds: number;
  readonly serverClosedRounds: number;
  readonly connectionsOpened: number;
  readonly ms: number;
}

const NODES = ["cp-1", "cp-2", "cp-3", "worker-1", "worker-2"];

export async function runChurn(
  talosconfigPath: string,
  control: TwinControl,
  rounds: number,
  callsPerRound: number,
): Promise<ChurnResult> {
  const context = await loadTalosconfig(talosconfigPath);
  const start = performance.now();
  let calls = 0, failures = 0, opened = 0, serverClosed = 0;
  const opts = { timeoutMs: 10_000 };
  const one = async (talos: Awaited<ReturnType<typeof createGrpcTalos>>, i: number) => {
    const node = NODES[i % NODES.length]!;
    try {
      if (i % 3 === 0) await talos.serviceList(node, opts);
      else if (i % 3 === 1) await talos.bootId(node, opts);
      else await talos.version(node, opts);
    } catch {
      failures++;
    }
    calls++;
  };
  for (let round = 0; round < rounds; round++) {
    const talos = await createGrpcTalos({ context, maxCallsPerChannel: 0 });
    const half = Math.floor(callsPerRound / 2);
    for (let i = 0; i < half; i++) await one(talos, i); // sequential half
    const batch: Promise<void>[] = [];
    for (let i = half; i < callsPerRound; i++) batch.push(one(talos, i)); // concurrent half
    if (round % 2 === 1) {
      await control.closeTalosConnections(1000); // GOAWAY while the batch is in flight
      serverClosed++;
    }
    await Promise.all(batch);
    opened += talos.connectionsOpened;
    talos.close();
  }
  return {
    calls,
    failures,
    rounds,
    serverClosedRounds: serverClosed,
    connectionsOpened: opened,
    ms: performance.now() - start,
  };
}
