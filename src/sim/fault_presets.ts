/**
 * The named faults of `cairn rehearse` (issue 5): each name turns into a concrete fault schedule
 * for one target node, built from what the node runs (its pods) and the plan's bounds. Most are
 * armed in the twin; `takeover-before-attempt` is not a twin fault at all but an ownership change
 * in the journal, which the rehearsal harness performs (see `journal` below), and some twin faults
 * are armed only once the target's operation is committed (see `afterCommit`).
 */
import type { Fault } from "./faults.ts";

/** What a preset may look at to aim its faults. */
export interface PresetContext {
  readonly node: string;
  /** Pods on the node (name, whether a drain evicts it, its grace period). */
  readonly pods: ReadonlyArray<{
    readonly name: string;
    readonly evictable: boolean;
    readonly graceSeconds: number;
  }>;
  readonly drainBoundSeconds: number;
  /** The cluster's other nodes (a reused address is handed to one of them). */
  readonly otherNodes: readonly string[];
  /** The plan's verification deadline of the verify phase (seconds). */
  readonly verifySeconds: number;
}

/** What a preset does: twin faults, and optionally a journal-side ownership change. */
export interface PresetEffect {
  readonly faults: readonly Fault[];
  /** Take the operation over in the journal just before its first attempt transaction. */
  readonly journal?: "takeover-before-attempt";
  /** Twin faults armed right after the target node's commitment (before its first attempt). */
  readonly afterCommit?: readonly Fault[];
}

export interface FaultPreset {
  readonly summary: string;
  /**
   * The outcome a correct executor reaches (for the rehearsal's printout); `refused`: contrary
   * evidence before the node's commitment, nothing sent.
   */
  readonly expect: "completed" | "unresolved" | "failed" | "refused";
  /** The plan kind whose steps the faults fire in (default TalosUpgrade). */
  readonly planKind?: "TalosUpgrade" | "KubernetesUpgrade";
  build(ctx: PresetContext): PresetEffect;
}

/** The plan kind a preset's faults fire in. */
export function presetPlanKind(name: FaultPresetName): "TalosUpgrade" | "KubernetesUpgrade" {
  return (FAULT_PRESETS[name] as FaultPreset).planKind ?? "TalosUpgrade";
}

/** Effectively "for the whole rehearsal". */
const FOREVER = 1_000_000;

function evictable(ctx: PresetContext) {
  return ctx.pods.filter((p) => p.evictable);
}

/** The machine a reused address is handed to: another worker if there is one. */
function otherMachine(ctx: PresetContext): string {
  const others = [...ctx.otherNodes].sort();
  const by = others.find((n) => n.startsWith("worker")) ?? others[0];
  if (!by) throw new RangeError(`address-reused needs a second node besides ${ctx.node}`);
  return by;
}

function addressReused(ctx: PresetContext): Fault {
  return {
    kind: "address-reused",
    point: "talos.route",
    target: ctx.node,
    params: { by: otherMachine(ctx) },
  };
}

export const FAULT_PRESETS = {
  "drain-timeout": {
    summary: "after install and cordon, one pod's evictions are refused (429, a budget that " +
      "never allows) until the drain bound passes",
    expect: "unresolved",
    build(ctx) {
      const pod = [...evictable(ctx)].sort((a, b) => a.name.localeCompare(b.name))[0];
      if (!pod) return { faults: [] };
      return {
        faults: [{
          kind: "http-storm",
          point: "kube.evict",
          target: pod.name,
          count: FOREVER,
          params: { status: 429 },
        }],
      };
    },
  },
  "drain-slow-termination": {
    summary: "evicted pods ignore SIGTERM and run their whole grace period (within the bound)",
    expect: "completed",
    build(ctx) {
      return {
        faults: evictable(ctx).map((p): Fault => ({
          kind: "ignore-sigterm",
          point: "kube.pod",
          target: p.name,
        })),
      };
    },
  },
  "reboot-response-lost": {
    summary: "the reboot lands but its response is lost (connection reset)",
    expect: "unresolved",
    build(ctx) {
      return {
        faults: [{
          kind: "lose-response",
          point: "talos.Reboot",
          target: ctx.node,
          params: { mode: "reset" },
        }],
      };
    },
  },
  "service-check-failing": {
    summary:
      "kubelet reports unhealthy after boot for half the verification deadline, then recovers",
    expect: "completed",
    build(ctx) {
      return { faults: [serviceUnhealthy(ctx.node, Math.floor(ctx.verifySeconds * 500))] };
    },
  },
  "service-check-failing-past-deadline": {
    summary: "kubelet reports unhealthy after boot for twice the verification deadline",
    expect: "failed",
    build(ctx) {
      return { faults: [serviceUnhealthy(ctx.node, ctx.verifySeconds * 2000)] };
    },
  },
  "takeover-before-attempt": {
    summary: "the operation is committed, then another controller takes it over before the " +
      "first attempt",
    expect: "unresolved",
    build() {
      return { faults: [], journal: "takeover-before-attempt" };
    },
  },
  "boots-old-version": {
    summary: "the install completes but the node boots back into the old slot",
    expect: "failed",
    build(ctx) {
      return { faults: [{ kind: "boots-old-version", point: "talos.boot", target: ctx.node }] };
    },
  },
  "address-reused": {
    summary: "the node's address answers from another machine (a DHCP lease handed on) before " +
      "its commitment: the Kubernetes Node and Talos at the plan's address name different machines",
    expect: "refused",
    build(ctx) {
      return { faults: [addressReused(ctx)] };
    },
  },
  "address-reused-after-commit": {
    summary: "the node's address is handed to another machine after its commitment, before the " +
      "first attempt",
    expect: "unresolved",
    build(ctx) {
      return { faults: [], afterCommit: [addressReused(ctx)] };
    },
  },
  "machine-reimaged": {
    summary:
      "after the node's commitment, its machine is replaced by one installed with the same " +
      "name and address: both sides agree on a new SMBIOS UUID, not the committed one",
    expect: "unresolved",
    build(ctx) {
      return {
        faults: [],
        afterCommit: [{ kind: "machine-reimaged", point: "talos.machine", target: ctx.node }],
      };
    },
  },
  "config-activation-deferred": {
    summary: "a ConfigApply's setting needs a reboot to take effect: the node stores and " +
      "activates the document, its service keeps the old setting",
    expect: "failed",
    build: (ctx) => ({
      faults: [{ kind: "config-activation-deferred", point: "talos.config", target: ctx.node }],
    }),
  },
  "install-lock-held": {
    summary: "the install stream is cut after its first message while the installer keeps " +
      "running and holds the lifecycle lock",
    expect: "unresolved",
    build(ctx) {
      return {
        faults: [{
          kind: "lose-response",
          point: "talos.LifecycleService.Upgrade",
          target: ctx.node,
        }],
      };
    },
  },
  "gitops-field-manager": {
    summary: "(KubernetesUpgrade) a GitOps controller starts applying CoreDNS's replicas and " +
      "image mid-run, after the first component is replaced: the next operation's check refuses",
    expect: "refused",
    planKind: "KubernetesUpgrade",
    build() {
      return {
        faults: [{ kind: "gitops-field-manager", point: "kube.bootstrap", target: "coredns" }],
      };
    },
  },
  "apiserver-not-returning": {
    summary: "(KubernetesUpgrade) the fault node's kube-apiserver, replaced at the new version, " +
      "never becomes ready: its operation fails and the rollout stops there",
    expect: "failed",
    planKind: "KubernetesUpgrade",
    build(ctx) {
      return {
        faults: [{
          kind: "static-pod-not-ready",
          point: "talos.staticPod",
          target: ctx.node,
          params: { component: "kube-apiserver" },
        }],
      };
    },
  },
  "kube-proxy-not-ready": {
    summary:
      "(KubernetesUpgrade) kube-proxy's new pod on the fault node never becomes ready: the " +
      "DaemonSet's rollout stalls there and the operation that moved it is not completed",
    expect: "failed",
    planKind: "KubernetesUpgrade",
    build(ctx) {
      return {
        faults: [{
          kind: "daemon-pod-not-ready",
          point: "kube.daemonPod",
          target: ctx.node,
          params: { daemonset: "kube-proxy" },
        }],
      };
    },
  },
} as const satisfies Record<string, FaultPreset>;

export type FaultPresetName = keyof typeof FAULT_PRESETS;

export const FAULT_PRESET_NAMES = Object.keys(FAULT_PRESETS) as FaultPresetName[];

export function isFaultPresetName(name: string): name is FaultPresetName {
  return Object.hasOwn(FAULT_PRESETS, name);
}

function serviceUnhealthy(node: string, durationMs: number): Fault {
  return {
    kind: "service-unhealthy",
    point: "talos.service",
    target: node,
    params: { service: "kubelet", durationMs },
  };
}

/** Builds the combined effect of several presets aimed at one node. */
export function buildPresets(names: readonly FaultPresetName[], ctx: PresetContext): PresetEffect {
  const faults: Fault[] = [];
  const afterCommit: Fault[] = [];
  let journal: PresetEffect["journal"];
  for (const n of names) {
    const e = (FAULT_PRESETS[n] as FaultPreset).build(ctx);
    faults.push(...e.faults);
    afterCommit.push(...(e.afterCommit ?? []));
    journal ??= e.journal;
  }
  return {
    faults,
    ...(journal ? { journal } : {}),
    ...(afterCommit.length > 0 ? { afterCommit } : {}),
  };
}
