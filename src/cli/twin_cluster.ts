/**
 * The twin as a cluster for the reconcile loop (the demo, end-to-end tests, benchmarks): starts
 * the twin process, connects cairn's real adapters, and keeps the twin's virtual clock in step
 * with every call. Not a command; heavy modules are imported lazily.
 */
import type { TwinClock } from "../adapters/clock/twin_clock.ts";
import type { TwinControl } from "../sim/twin_control.ts";
import type { ClusterConnection } from "./run_plan.ts";
import type { TwinProcess } from "./sim_serve.ts";

/** A running twin with connected adapters. */
export interface TwinCluster {
  readonly twin: TwinProcess;
  readonly control: TwinControl;
  readonly clock: TwinClock;
  readonly cluster: ClusterConnection;
  stop(): Promise<void>;
}

/** Starts the twin from a cluster description and connects to it. */
export async function startTwinCluster(o: {
  readonly cluster: string;
  readonly pkiCacheDir?: string;
  readonly stateDir?: string;
}): Promise<TwinCluster> {
  const { startTwinProcess } = await import("./sim_serve.ts");
  const { TwinControl } = await import("../sim/twin_control.ts");
  const { syncingPort, TwinClock } = await import("../adapters/clock/twin_clock.ts");
  const { connectCluster } = await import("./run_plan.ts");
  const twin = await startTwinProcess({
    cluster: o.cluster,
    ...(o.pkiCacheDir ? { pkiCacheDir: o.pkiCacheDir } : {}),
    ...(o.stateDir ? { stateDir: o.stateDir } : {}),
  });
  try {
    const clock = await TwinClock.connect(twin.controlUrl);
    const conn = await connectCluster({
      kubeconfigPath: twin.kubeconfigPath!,
      talosconfigPath: twin.talosconfigPath,
    });
    return {
      twin,
      control: new TwinControl(twin.controlUrl),
      clock,
      cluster: {
        kube: syncingPort(conn.kube, clock),
        talos: syncingPort(conn.talos, clock),
        close: () => conn.close(),
      },
      async stop() {
        conn.close();
        await twin.stop();
      },
    };
  } catch (e) {
    await twin.stop();
    throw e;
  }
}
