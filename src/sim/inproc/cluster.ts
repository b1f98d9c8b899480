/**
 * The twin in one process: the same models the socket twin serves (`sim/kube/` store and
 * controllers, `sim/talos/model.ts`), wired the same way (one SimClock, one FaultSchedule, node
 * readiness and nodeInfo following the Talos machines), behind in-process implementations of the
 * Kube and Talos ports. No sockets, no child processes, no wall clock: a run is a function of
 * the cluster description, the seed and the faults armed, so the executor and the reconciler can
 * be unit-tested, and seeds replayed, at in-memory speed.
 *
 * The description's installer images are served by the same registry model (`registry.ts`), so
 * the dispatch check can resolve installers in process as it does against the socket twin.
 *
 * Use the socket twin (`sim/twin.ts`) where the wire matters: the real adapters' HTTP, gRPC,
 * TLS and reconnection behaviour, kubectl/talosctl, the demo and rehearsals.
 */
import type { Clock } from "../../ports/clock.ts";
import { SimClock } from "../clock.ts";
import type { ClusterDescription } from "../cluster_description.ts";
import { type Fault, FaultSchedule } from "../faults.ts";
import { startCnpgOperator } from "../kube/cnpg.ts";
import { GitOpsTwin, type GitOpsTwinOptions, rookBundledCephcsi } from "../kube/gitops.ts";
import { Controllers, nodeInfoFacts } from "../kube/controllers.ts";
import { startJobController } from "../kube/jobs.ts";
import { startDaemonSetRollouts } from "../kube/daemonset_rollout.ts";
import { loadDescription } from "../kube/load.ts";
import { deprecatedApiMetrics, syncMirrorPods } from "../kube/bootstrap.ts";
import { startScheduler } from "../kube/scheduler.ts";
import { Store } from "../kube/store.ts";
import { startWorkloadStatus } from "../kube/workload_status.ts";
import { type NodeStatusSink, TalosCluster } from "../talos/model.ts";
import { buildInstallerContent, registryHolds } from "../registry/installer_images.ts";
import { InprocKube } from "./kube.ts";
import { type InprocRegistry, inprocRegistry } from "./registry.ts";
import { InprocTalos } from "./talos.ts";
import { VirtualTime } from "./time.ts";

export interface InprocTwinOptions {
  readonly description: ClusterDescription;
  /** Seeds the Talos model's randomness (boot IDs, etcd member IDs); default 1, as the twin. */
  readonly seed?: number;
  readonly faults?: readonly Fault[];
  /** Watch history kept by the store (older versions get 410); default 10 000, as the twin. */
  readonly historySize?: number;
  /** Roles of the Talos caller; default admin. */
  readonly talosRoles?: readonly string[];
  /** Items per Kubernetes LIST page (default 500, as the real adapter). */
  readonly kubePageSize?: number;
  /** Talos streams do not move time (tests that drive the clock themselves). */
  readonly manualTime?: boolean;
  /** How the twin's Flux and operators behave (`sim/kube/gitops.ts`). */
  readonly gitops?: Omit<GitOpsTwinOptions, "store" | "clock">;
}

export interface InprocTwin {
  readonly sim: SimClock;
  readonly time: VirtualTime;
  /** The executor's clock: sleeping moves the cluster's time. */
  readonly clock: Clock;
  /** For read timeouts: waits on virtual time without moving it. */
  readonly timeoutClock: Clock;
  readonly faults: FaultSchedule;
  readonly store: Store;
  readonly controllers: Controllers;
  readonly cluster: TalosCluster;
  readonly kube: InprocKube;
  readonly talos: InprocTalos;
  /** The OCI registry serving the description's installer images, and a resolver over it. */
  readonly registry: InprocRegistry;
  /** Flux and the operators: `merge()` delivers a merged commit on virtual time. */
  readonly gitops: GitOpsTwin;
  /**
   * Stops the operators (CNPG, workload status, scheduler, Jobs, DaemonSet rollouts) and cuts
   * open watches.
   */
  stop(): void;
}

/** Builds the in-process twin from a cluster description. */
export function startInprocTwin(o: InprocTwinOptions): InprocTwin {
  const desc = o.description;
  const sim = new SimClock(Date.parse(desc.spec.startTime));
  const time = new VirtualTime(sim);
  const faults = new FaultSchedule(o.faults ?? []);
  const store = new Store({ now: () => sim.now(), historySize: o.historySize ?? 10_000 });
  const controllers = new Controllers(store, sim, faults);
  loadDescription(controllers, desc);
  const stopCnpg = startCnpgOperator({ store, clock: sim });
  const stopWorkloads = startWorkloadStatus(store);
  const stopScheduler = startScheduler({ store, clock: sim, controllers });
  const stopJobs = startJobController({ store, clock: sim, faults });
  // kube-proxy's rolling update during a KubernetesUpgrade (any DaemonSet whose template moves).
  const stopDaemonRollouts = startDaemonSetRollouts({ store, clock: sim, controllers });
  // What the kubelet reports follows what the machine does (twin_kube.ts does the same).
  const sink: NodeStatusSink = {
    nodeDown: (name) => controllers.setNodeReady(name, false),
    nodeUp: (name, info) => {
      controllers.setNodeInfo(name, nodeInfoFacts(info));
      controllers.setNodeReady(name, true);
    },
    staticPods: (_name, pods) => syncMirrorPods(controllers, faults, pods),
  };
  const installers = buildInstallerContent(desc.spec.installerImages);
  const cluster = new TalosCluster(desc, {
    clock: sim,
    faults,
    sink,
    seed: o.seed ?? 1,
    registryHas: (ref) => registryHolds(installers, ref),
  });
  // The kubelet reports what the machine booted: start both sides from the same facts.
  for (const n of cluster.nodes.values()) {
    controllers.setNodeInfo(n.name, nodeInfoFacts(n.kubeletReport()));
  }
  cluster.reportStaticPods();
  const kube = new InprocKube({
    store,
    controllers,
    time,
    faults,
    kubernetesVersion: desc.spec.kubernetesVersion,
    metrics: () => deprecatedApiMetrics(desc),
    ...(o.kubePageSize !== undefined ? { pageSize: o.kubePageSize } : {}),
  });
  const talos = new InprocTalos({
    cluster,
    time,
    faults,
    ...(o.talosRoles ? { roles: o.talosRoles } : {}),
    ...(o.manualTime ? { manualTime: true } : {}),
  });
  return {
    sim,
    time,
    clock: time.clock,
    timeoutClock: time.timeoutClock,
    faults,
    store,
    controllers,
    cluster,
    kube,
    talos,
    registry: inprocRegistry(installers),
    gitops: new GitOpsTwin({
      store,
      clock: sim,
      bundledCephcsi: rookBundledCephcsi,
      ...o.gitops,
    }),
    stop() {
      stopCnpg();
      stopWorkloads();
      stopScheduler();
      stopJobs();
      stopDaemonRollouts();
      kube.disconnectWatches();
    },
  };
}
