/**
 * A seed's fault schedule: data, so that a failing seed can be printed and shrunk. Twin faults
 * (every kind of `sim/faults.ts`) are armed at the start or right after a node's commitment;
 * the controller-side events are the campaign's own: a crash-restart at a journal write point
 * (inside a transaction: rolled back; after a commit: kept), a second replica taking over while
 * the first still runs, a journal restore that changes the epoch under a running controller,
 * clock skew between replicas, network partitions between cairn and either API, stale reads, and
 * an operator's own cordon of a node.
 */
import { type Fault, FAULT_KINDS, type FaultKind } from "../../sim/faults.ts";
import type { FluxFault } from "./flux_world.ts";
import type { Prng } from "./prng.ts";

export type StaleRead = "lagging-cache" | "old-list" | "watch-skip";

export type DstEvent =
  /** Armed in the twin at the start, or (`afterCommitOf`) right after that node's commitment. */
  | { readonly kind: "twin"; readonly fault: Fault; readonly afterCommitOf?: string }
  /** The controller dies at its `atPoint`-th journal write point; a successor starts later. */
  | {
    readonly kind: "crash";
    readonly atPoint: number;
    readonly restartAfterMs: number;
    readonly skewMs: number;
  }
  /** A second replica starts at the `atPoint`-th write point while the first keeps running. */
  | { readonly kind: "replica"; readonly atPoint: number; readonly skewMs: number }
  /**
   * The controller whose journal act commits at the first write point from the `atPoint`-th on
   * that follows a commit stops there for `forMs` of the cluster's time (a stopped process, a long
   * GC, a suspended VM) and then goes on: between an attempt's commit and its send, between an
   * intent and its request.
   */
  | { readonly kind: "pause"; readonly atPoint: number; readonly forMs: number }
  /**
   * A backup of the journal's whole contents is taken right after the `backupAt`-th write point
   * (between transactions; not before the plan is bound), and at the `atPoint`-th the journal's
   * contents are replaced with it, then a recovery admin enters recovery mode (a new epoch, every
   * live operation taken over, every known scope pre-restore unaccounted) and releases the scopes
   * no live operation holds. The controller that ran before keeps running on its old token; a
   * successor starts when it stops. Without `backupAt` the backup is the journal right after the
   * plan was bound.
   */
  | { readonly kind: "restore"; readonly atPoint: number; readonly backupAt?: number }
  /** cairn cannot reach one API in [fromMs, fromMs + forMs) of virtual time since the start. */
  | {
    readonly kind: "partition";
    readonly api: "kube" | "talos";
    readonly fromMs: number;
    readonly forMs: number;
  }
  /** The world's Flux delivers the merge this way (a ComponentUpgrade's world, `flux_world.ts`). */
  | { readonly kind: "flux"; readonly fault: FluxFault }
  /** A fraction `p` of reads of this kind come back stale. */
  | { readonly kind: "stale"; readonly read: StaleRead; readonly p: number }
  /**
   * Someone else cordons `node` at `atMs` virtual ms since the start, or (`afterCommitOf`) right
   * after that plan node's commitment, or (`onVerifyingOf`) when that plan node's operation enters
   * `verifying` (a TalosUpgrade's: after its uncordon, before its post-gate).
   */
  | {
    readonly kind: "operator-cordon";
    readonly node: string;
    readonly atMs: number;
    readonly afterCommitOf?: string;
    readonly onVerifyingOf?: string;
  };

/** What the schedule may aim at. */
export interface ScheduleContext {
  /** Plan nodes in plan order. */
  readonly planNodes: readonly string[];
  /** Every node of the cluster. */
  readonly clusterNodes: readonly string[];
  /** Evictable pods per node at the start. */
  readonly podsByNode: ReadonlyMap<string, readonly string[]>;
  /** The world delivers a merge through Flux (a ComponentUpgrade): Flux faults are drawn too. */
  readonly flux?: boolean;
  /** Journal write points a run passes, about (crash points are drawn up to it). */
  readonly writePoints?: number;
}

const TALOS_MUTATIONS = [
  "talos.Reboot",
  "talos.LifecycleService.Upgrade",
  "talos.ImageService.Pull",
];
const TALOS_READS = [
  "talos.Version",
  "talos.ServiceList",
  "talos.Read",
  "talos.cosi.Get",
  "talos.EtcdStatus",
];

/** The Talos reads a `stale-read` is drawn for (cosi.Get: the machine configuration). */
const TALOS_STALE_READS = ["talos.Version", "talos.Read", "talos.ServiceList", "talos.cosi.Get"];

/** One twin fault of `kind`, aimed at a plan node (or one of its pods). */
export function drawTwinFault(
  prng: Prng,
  kind: FaultKind,
  ctx: ScheduleContext,
): DstEvent | undefined {
  const node = prng.pick(ctx.planNodes);
  const pods = ctx.podsByNode.get(node) ?? [];
  const twin = (fault: Fault, afterCommitOf?: string): DstEvent =>
    afterCommitOf ? { kind: "twin", fault, afterCommitOf } : { kind: "twin", fault };
  switch (kind) {
    case "lose-response":
      return twin({
        kind,
        point: prng.pick(TALOS_MUTATIONS),
        target: node,
        ...(prng.chance(0.5) ? { params: { mode: "reset" } } : {}),
      });
    case "delay-landing":
      return twin({
        kind,
        point: prng.pick(["talos.Reboot", "talos.LifecycleService.Upgrade"]),
        target: node,
        params: { delayMs: prng.int(1_000, 120_000) },
      });
    case "unavailable":
    case "deadline-exceeded":
      return twin({
        kind,
        point: prng.pick([...TALOS_MUTATIONS, ...TALOS_READS]),
        target: node,
        count: prng.int(1, 4),
      });
    case "http-storm":
      if (pods.length > 0 && prng.chance(0.6)) {
        return twin({
          kind,
          point: "kube.evict",
          target: prng.pick(pods),
          count: prng.pick([1, 3, 10, 1_000_000]),
          params: { status: prng.pick([429, 503]) },
        });
      }
      return twin({
        kind,
        point: "kube.request",
        target: node,
        count: prng.int(1, 5),
        params: { status: 503 },
      });
    case "watch-disconnect":
      return twin({
        kind,
        point: "kube.watch",
        target: prng.pick(["pods", "nodes"]),
        count: prng.int(1, 3),
      });
    case "ignore-sigterm":
      return pods.length > 0
        ? twin({ kind, point: "kube.pod", target: prng.pick(pods) })
        : undefined;
    case "no-return-from-reboot":
    case "boots-old-version":
      return twin({ kind, point: "talos.boot", target: node });
    case "install-lock-held":
    case "install-fails":
    case "install-invalid":
      return twin({ kind, point: "talos.install", target: node });
    case "service-unhealthy":
      return twin({
        kind,
        point: "talos.service",
        target: node,
        params: {
          service: prng.pick(["kubelet", "apid"]),
          durationMs: prng.int(10_000, 2_400_000),
        },
      });
    case "address-reused": {
      const others = ctx.clusterNodes.filter((n) => n !== node);
      if (others.length === 0) return undefined;
      const fault: Fault = {
        kind,
        point: "talos.route",
        target: node,
        params: { by: prng.pick(others) },
      };
      return twin(fault, prng.chance(0.5) ? node : undefined);
    }
    case "machine-reimaged":
      return twin({ kind, point: "talos.machine", target: node }, node);
    // A ConfigApply's next immediate change is stored and active but not running.
    case "config-activation-deferred":
      return twin({ kind, point: "talos.config", target: node });
    // A KubernetesUpgrade's next replacement of that component on the node never gets ready.
    case "static-pod-not-ready":
      return twin({
        kind,
        point: "talos.staticPod",
        target: node,
        params: {
          component: prng.pick(["kube-apiserver", "kube-controller-manager", "kube-scheduler"]),
        },
      });
    // A KubernetesUpgrade's rolled kube-proxy pod on the node never gets ready.
    case "daemon-pod-not-ready":
      return twin({
        kind,
        point: "kube.daemonPod",
        target: node,
        params: { daemonset: "kube-proxy" },
      });
    // A Talos read answered from an earlier answer of the same machine (a lagging apid proxy or
    // cache): the version or boot id from before the reboot, services as they were before it,
    // the stored configuration from before the apply.
    case "stale-read": {
      const point = prng.pick(TALOS_STALE_READS);
      return twin({
        kind,
        point,
        target: node,
        count: prng.pick([1, 3, 1_000_000]),
        params: {
          lag: prng.int(1, 3),
          every: prng.pick([1, 2, 3]),
          ...(point === "talos.cosi.Get" ? { type: "MachineConfigs.config.talos.dev" } : {}),
        },
      });
    }
    // The install's progress stream or the boot-id read skips messages (its end unchanged).
    case "stream-skips-events":
      return twin({
        kind,
        point: prng.pick(["talos.LifecycleService.Upgrade", "talos.Read"]),
        target: node,
        count: prng.int(1, 3),
        params: { every: prng.pick([1, 2, 3]) },
      });
    // No drawn world has GitOps-managed bootstrap objects or node hooks: nothing to aim at.
    case "gitops-field-manager":
    case "job-fails":
    case "job-hangs":
      return undefined;
  }
}

/** Draws a seed's schedule: usually a few events, sometimes none (the happy path stays covered). */
export function drawSchedule(prng: Prng, ctx: ScheduleContext): DstEvent[] {
  const events: DstEvent[] = [];
  if (prng.chance(0.12)) return events;
  const twinFaults = prng.int(0, 3);
  for (let i = 0; i < twinFaults; i++) {
    const e = drawTwinFault(prng, prng.pick(FAULT_KINDS), ctx);
    if (e) events.push(e);
  }
  // At most one controller-side ownership event per seed: each ends the old controller's story.
  const own = prng.float();
  const point = () => prng.int(1, ctx.writePoints ?? 60 * ctx.planNodes.length);
  if (own < 0.2) {
    events.push({
      kind: "crash",
      atPoint: point(),
      restartAfterMs: prng.pick([0, 5_000, 60_000]),
      skewMs: skew(prng),
    });
  } else if (own < 0.3) {
    events.push({ kind: "replica", atPoint: point(), skewMs: skew(prng) });
  } else if (own < 0.37) {
    const atPoint = point();
    events.push({ kind: "restore", atPoint, backupAt: prng.int(1, Math.max(1, atPoint - 1)) });
  }
  if (prng.chance(0.15)) {
    events.push({
      kind: "partition",
      api: prng.pick(["kube", "talos"] as const),
      fromMs: prng.int(0, 30 * 60_000 * ctx.planNodes.length),
      forMs: prng.pick([5_000, 60_000, 600_000]),
    });
  }
  if (prng.chance(0.2)) {
    events.push({
      kind: "stale",
      read: prng.pick(["lagging-cache", "old-list", "watch-skip"] as const),
      p: prng.pick([0.1, 0.3, 0.6]),
    });
  }
  // Talos-side stale reads, as often as the Kubernetes side's (a draw of their own: the uniform
  // pick above reaches them in only a few seeds).
  if (prng.chance(0.2)) {
    const e = drawTwinFault(prng, prng.chance(0.75) ? "stale-read" : "stream-skips-events", ctx);
    if (e) events.push(e);
  }
  if (prng.chance(0.08)) {
    events.push({
      kind: "operator-cordon",
      node: prng.pick(ctx.clusterNodes),
      atMs: prng.int(0, 20 * 60_000 * ctx.planNodes.length),
    });
  }
  // Drawn last, so the other kinds' schedules do not move.
  if (ctx.flux) events.push(...drawFlux(prng, ctx));
  // After the Flux draws, for the same reason. Pauses of every length the plans' transport
  // deadlines fall between (30 s to 10 min), and one longer than any.
  if (prng.chance(0.1)) {
    events.push({
      kind: "pause",
      atPoint: point(),
      forMs: prng.pick([10_000, 45_000, 120_000, 700_000]),
    });
  }
  return events;
}

/** A Flux world's faults: usually one way its delivery goes wrong, and lagging Flux reads. */
export function drawFlux(prng: Prng, ctx: ScheduleContext): DstEvent[] {
  const out: DstEvent[] = [];
  const flux = (fault: FluxFault): DstEvent => ({ kind: "flux", fault });
  if (prng.chance(0.6)) {
    const kind = prng.pick(
      [
        "source-stuck",
        "applied-old-revision",
        "kustomization-failing",
        "kustomization-progressing",
        "helm-rolled-back",
        "slow",
        "applies",
        "regress",
      ] as const,
    );
    switch (kind) {
      case "kustomization-failing":
        out.push(flux({ kind, stalled: prng.chance(0.5) }));
        break;
      case "slow":
        out.push(flux({ kind, extraMs: prng.int(60, 1_500) * 1000 }));
        break;
      case "applies":
        out.push(flux({ kind, commit: prng.pick(["later", "unknown"] as const) }));
        break;
      case "regress":
        out.push(flux({
          kind,
          afterMs: prng.int(0, 120) * 1000,
          how: prng.pick(["force-push", "not-ready", "rolled-back"] as const),
          holdMs: prng.pick([0, 30_000, 90_000]),
        }));
        break;
      default:
        out.push(flux({ kind }));
    }
  }
  if (prng.chance(0.15)) {
    out.push({ kind: "stale", read: "lagging-cache", p: prng.pick([0.3, 0.6]) });
  }
  // One node's new agent pod never gets ready: the rollout stalls there (not landed).
  if (prng.chance(0.1)) {
    out.push({
      kind: "twin",
      fault: {
        kind: "daemon-pod-not-ready",
        point: "kube.daemonPod",
        target: prng.pick(ctx.clusterNodes),
        params: { daemonset: "cilium" },
      },
    });
  }
  return out;
}

/** A skew between replicas' clocks: none, or up to two minutes either way. */
function skew(prng: Prng): number {
  return prng.chance(0.5) ? 0 : prng.int(-120_000, 120_000);
}

/** One line per event, for a failing seed's printout. */
export function describeEvent(e: DstEvent): string {
  switch (e.kind) {
    case "twin": {
      const f = e.fault;
      const params = f.params ? ` ${JSON.stringify(f.params)}` : "";
      const when = e.afterCommitOf ? ` after ${e.afterCommitOf}'s commitment` : "";
      return `twin ${f.kind} at ${f.point}${f.target ? ` on ${f.target}` : ""}` +
        `${f.count ? ` x${f.count}` : ""}${params}${when}`;
    }
    case "crash":
      return `controller crash at write point #${e.atPoint}, successor after ${e.restartAfterMs} ms (skew ${e.skewMs} ms)`;
    case "replica":
      return `second replica starts at write point #${e.atPoint} (skew ${e.skewMs} ms)`;
    case "pause":
      return `controller paused ${e.forMs} ms after the commit at write point #${e.atPoint} or next`;
    case "restore":
      return `journal restored at write point #${e.atPoint} from a backup taken at #${
        e.backupAt ?? "bind"
      } (recovery entry, new epoch)`;
    case "partition":
      return `partition cairn ↔ ${e.api} from +${e.fromMs} ms for ${e.forMs} ms`;
    case "stale":
      return `stale reads: ${e.read} p=${e.p}`;
    case "flux":
      return `flux ${JSON.stringify(e.fault)}`;
    case "operator-cordon":
      return `operator cordons ${e.node} ${
        e.afterCommitOf
          ? `after ${e.afterCommitOf}'s commitment`
          : e.onVerifyingOf
          ? `when ${e.onVerifyingOf} enters verifying`
          : `at +${e.atMs} ms`
      }`;
  }
}
