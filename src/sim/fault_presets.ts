/**
 * The named faults of `cairn rehearse` (issue 5): each name turns into a concrete fault schedule
 * for one target node, built from what the node runs (its pods) and the plan's bounds. Most are
 * armed in the twin; `takeover-before-attempt` is not a twin fault at all but an ownership change
 * in the journal, which the rehearsal harness performs (see `journal` below).
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
  /** The plan's verification deadline of the verify phase (seconds). */
  readonly verifySeconds: number;
}

/** What a preset does: twin faults, and optionally a journal-side ownership change. */
export interface PresetEffect {
  readonly faults: readonly Fault[];
  /** Take the operation over in the journal just before its first attempt transaction. */
  readonly journal?: "takeover-before-attempt";
}

export interface FaultPreset {
  readonly summary: string;
  /** The outcome a correct executor reaches (for the rehearsal's printout). */
  readonly expect: "completed" | "unresolved" | "failed";
  build(ctx: PresetContext): PresetEffect;
}

/** Effectively "for the whole rehearsal". */
const FOREVER = 1_000_000;

function evictable(ctx: PresetContext) {
  return ctx.pods.filter((p) => p.evictable);
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
  let journal: PresetEffect["journal"];
  for (const n of names) {
    const e = (FAULT_PRESETS[n] as FaultPreset).build(ctx);
    faults.push(...e.faults);
    journal ??= e.journal;
  }
  return { faults, ...(journal ? { journal } : {}) };
}
