/**
 * The twin as a cluster for the reconcile loop (the demo, end-to-end tests, benchmarks): starts
 * the twin process, connects cairn's real adapters, and keeps the twin's virtual clock in step
 * with every call. Not a command; heavy modules are imported lazily.
 */
import type { TwinClock } from "../adapters/clock/twin_clock.ts";
import type { TwinControl } from "../sim/twin_control.ts";
import type { TwinRegistryInfo } from "../sim/twin.ts";
import type { InstallerResolver } from "../ports/dispatch.ts";
import type { ClusterConnection } from "./run_plan.ts";
import type { TwinProcess } from "./twin_process.ts";

/** A running twin with connected adapters. */
export interface TwinCluster {
  readonly twin: TwinProcess;
  readonly control: TwinControl;
  readonly clock: TwinClock;
  readonly cluster: ClusterConnection;
  stop(): Promise<void>;
}

/** Where a running twin is (its `twin.json`). */
export interface TwinEndpoints {
  readonly controlUrl: string;
  readonly kubeconfigPath: string | null | undefined;
  readonly talosconfigPath: string;
}

/** A twin's control client, virtual clock, and cairn's adapters kept in step with that clock. */
export interface TwinConnection {
  readonly control: TwinControl;
  readonly clock: TwinClock;
  readonly cluster: ClusterConnection;
}

/** Connects cairn's real adapters to a running twin. */
export async function connectTwin(t: TwinEndpoints): Promise<TwinConnection> {
  const { TwinControl } = await import("../sim/twin_control.ts");
  const { syncingPort, TwinClock } = await import("../adapters/clock/twin_clock.ts");
  const { connectCluster } = await import("./run_plan.ts");
  const clock = await TwinClock.connect(t.controlUrl);
  const conn = await connectCluster({
    kubeconfigPath: t.kubeconfigPath!,
    talosconfigPath: t.talosconfigPath,
  });
  return {
    control: new TwinControl(t.controlUrl),
    clock,
    cluster: {
      kube: syncingPort(conn.kube, clock),
      talos: syncingPort(conn.talos, clock),
      close: () => conn.close(),
    },
  };
}

/**
 * How the executor waits and bounds its calls on the twin: waits move virtual time (5 s polls,
 * 30 s health rounds as in production), while call and read timeouts are real-time bounds, so a
 * slow machine never turns a read into a jump of the cluster's time.
 */
export function twinExecutionTiming(clock: TwinClock) {
  return {
    clock,
    timeoutClock: clock.forTimeouts(20_000),
    callTimeoutMs: (ms: number) => Math.min(ms, 20_000),
    pollIntervalMs: 5_000,
    roundIntervalMs: 30_000,
  };
}

/**
 * Resolves installer references against the twin's registry, which stands in for the hosts the
 * cluster description's images name (`factory.talos.dev`): the dispatch check and previews resolve
 * there in tests, rehearsals and the demo, never on the network.
 */
export async function twinInstallerResolver(
  twin: { readonly registry: TwinRegistryInfo },
): Promise<InstallerResolver> {
  const { registryInstallerResolver } = await import("../adapters/oci/installer_resolver.ts");
  return registryInstallerResolver({ mirrors: twin.registry.mirrors, timeoutMs: 20_000 });
}

/** Starts the twin from a cluster description and connects to it. */
export async function startTwinCluster(o: {
  readonly cluster: string;
  readonly pkiCacheDir?: string;
  readonly stateDir?: string;
}): Promise<TwinCluster> {
  const { startTwinProcess } = await import("./twin_process.ts");
  const twin = await startTwinProcess({
    cluster: o.cluster,
    ...(o.pkiCacheDir ? { pkiCacheDir: o.pkiCacheDir } : {}),
    ...(o.stateDir ? { stateDir: o.stateDir } : {}),
  });
  try {
    const c = await connectTwin(twin);
    return {
      twin,
      ...c,
      async stop() {
        c.cluster.close();
        await twin.stop();
      },
    };
  } catch (e) {
    await twin.stop();
    throw e;
  }
}
