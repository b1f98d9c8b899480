/**
 * Named regression scenarios: one per public incident of this class (the peers' trackers in
 * docs/peers research and the seeds), each a fixed seed with a fixed fault schedule aimed at the
 * plan's first node, and the classification a correct executor must reach. They replay through
 * the same campaign runner, so every invariant is checked on them too.
 */
import type { OperationState } from "../../domain/operation.ts";
import { COMPONENT_SCENARIOS } from "./component_scenarios.ts";
import type { SeedOptions } from "./run_seed.ts";
import type { DstEvent } from "./schedule.ts";

/** What the scenario's world looks like before its faults are aimed. */
export interface ScenarioContext {
  /** The plan's first node (the one every scenario aims at). */
  readonly node: string;
  /** Journal write point names of the same seed without faults, in order. */
  readonly cleanPoints: readonly string[];
  /** The cluster's nodes (a ComponentUpgrade has no plan node to aim at). */
  readonly cleanNodes: readonly string[];
}

/** What a correct executor reaches, and what it must not have done. */
export interface Expectation {
  /** The first node's operation state (`pending`: never committed; none for a ComponentUpgrade). */
  readonly state: OperationState | "pending";
  /** The rollout's end as the last controller saw it (`fenced` when it stopped on a fence). */
  readonly end?: string;
  /** Why the first node stopped (the executor's reason code). */
  readonly reason?: string;
  /** Requests the first node's machine received at most / exactly. */
  readonly installs?: number;
  readonly reboots?: number;
  /** Whether the first node is left cordoned at the end. */
  readonly cordoned?: boolean;
  /** The second plan node's state (scenarios of two plan nodes). */
  readonly next?: OperationState | "pending";
}

export interface Scenario {
  readonly name: string;
  /** The public incidents it replays (tracker references). */
  readonly incidents: readonly string[];
  readonly summary: string;
  readonly seed: number;
  readonly events: (ctx: ScenarioContext) => DstEvent[];
  readonly expect: Expectation;
  readonly options?: Pick<SeedOptions, "shape">;
  /** Plan nodes kept (default 1: the scenario's node alone). */
  readonly planNodes?: number;
  /** The plan kind it runs (default TalosUpgrade, whatever the seed would draw). */
  readonly kind?: string;
}

/** A ci-profile seed whose first plan node is a worker hosting the database primary. */
export const SCENARIO_SEED = 3;

/** Someone else cordons a neighbour of the scenario's node, right after its commitment or when it
 * enters `verifying`. */
function cordonElsewhere(when: "afterCommitOf" | "onVerifyingOf"): Scenario["events"] {
  return ({ node, cleanNodes }) => {
    const other = otherNode(node, cleanNodes);
    return [
      when === "afterCommitOf"
        ? { kind: "operator-cordon", node: other, atMs: 0, afterCommitOf: node }
        : { kind: "operator-cordon", node: other, atMs: 0, onVerifyingOf: node },
    ];
  };
}

/** Where a step held by health failing only on that neighbour ends. */
const HELD_ELSEWHERE: Expectation = {
  state: "unresolved",
  end: "halted",
  reason: "HealthFailedElsewhere",
};

/** A cluster node other than `node` (a neighbour of the scenario's node). */
function otherNode(node: string, nodes: readonly string[]): string {
  const other = nodes.find((n) => n !== node);
  if (other === undefined) throw new Error(`the scenario needs a node besides ${node}`);
  return other;
}

/** The (n+1)-th write point named `name` (1-based point numbers, as crash events count). */
export function nthPoint(points: readonly string[], name: string, n: number): number {
  let seen = 0;
  for (let i = 0; i < points.length; i++) {
    if (points[i] === name && seen++ === n) return i + 1;
  }
  throw new RangeError(`the clean run has no ${n + 1}th ${name}`);
}

const twin = (fault: DstEvent & { kind: "twin" }) => fault;

/** Attempts in plan order: pull 0, install 1, cordon 2, drain 3, reboot 4, uncordon 5. */
const ATTEMPT = { pull: 0, install: 1, cordon: 2, drain: 3, reboot: 4 } as const;

export const SCENARIOS: readonly Scenario[] = [
  {
    name: "reboot-response-lost-is-unresolved-not-failed",
    incidents: ["home-operations/tuppr#575", "siderolabs/talos#14242"],
    summary: "the install completed and the reboot was sent but its response never came back: " +
      "the step is unresolved (the reboot unaccounted), never marked failed and never repeated",
    seed: SCENARIO_SEED,
    events: (
      { node },
    ) => [
      twin({ kind: "twin", fault: { kind: "lose-response", point: "talos.Reboot", target: node } }),
    ],
    expect: {
      state: "unresolved",
      end: "halted",
      reason: "RebootResponseLost",
      installs: 1,
      reboots: 1,
    },
  },
  {
    name: "controller-paused-past-its-install-deadline-sends-nothing",
    incidents: [
      "docs/operation-model.md (a controller stopped between an intent and its send)",
      "test/cli/reconcile_takeover_test.ts (a SIGSTOPped leader delivered its last eviction)",
    ],
    summary: "the controller stops right after its install attempt committed (a stopped process, " +
      "a suspended VM) and runs again 700 s later, past the attempt's 600 s transport deadline: " +
      "the install is never sent, the attempt stays unanswered and the step unresolved",
    seed: SCENARIO_SEED,
    events: ({ cleanPoints }) => [
      {
        kind: "pause",
        atPoint: nthPoint(cleanPoints, "attempt:after-commit", ATTEMPT.install),
        forMs: 700_000,
      },
    ],
    expect: {
      state: "unresolved",
      end: "halted",
      reason: "InstallResponseLost",
      installs: 0,
      reboots: 0,
    },
  },
  {
    name: "controller-paused-within-its-install-deadline-sends-once",
    incidents: ["docs/operation-model.md (a controller stopped between an intent and its send)"],
    summary: "the same pause for 45 s, inside the install's transport deadline: the install is " +
      "sent once, bounded by what is left of that deadline, and the step completes",
    seed: SCENARIO_SEED,
    events: ({ cleanPoints }) => [
      {
        kind: "pause",
        atPoint: nthPoint(cleanPoints, "attempt:after-commit", ATTEMPT.install),
        forMs: 45_000,
      },
    ],
    expect: { state: "completed", end: "completed", installs: 1, reboots: 1 },
  },
  {
    name: "reboot-lands-after-the-client-gave-up",
    incidents: ["docs/operation-model.md (requests landing ~11 s after a partition healed)"],
    summary: "the reboot request lands 90 s late, after its call timed out: unresolved, not resent",
    seed: SCENARIO_SEED,
    events: ({ node }) => [
      twin({
        kind: "twin",
        fault: {
          kind: "delay-landing",
          point: "talos.Reboot",
          target: node,
          params: { delayMs: 90_000 },
        },
      }),
    ],
    expect: { state: "unresolved", end: "halted", reason: "RebootResponseLost", reboots: 1 },
  },
  {
    name: "completed-install-boots-old-version-is-failed-not-reinstalled",
    incidents: ["siderolabs/omni#1552", "kairos-io/kairos#4108"],
    summary: "the install completed but the machine booted back into the old slot: failed on the " +
      "contradicting observation, no second install that would overwrite the good slot",
    seed: SCENARIO_SEED,
    events: (
      { node },
    ) => [
      twin({
        kind: "twin",
        fault: { kind: "boots-old-version", point: "talos.boot", target: node },
      }),
    ],
    expect: {
      state: "failed",
      end: "halted",
      reason: "BootedOtherVersion",
      installs: 1,
      reboots: 1,
    },
  },
  {
    name: "failed-node-stops-the-rollout",
    incidents: ["home-operations/tuppr#65", "rancher/system-upgrade-controller#275"],
    summary:
      "the first node's installer exits non-zero (failed, the machine still healthy on its " +
      "old version): the rollout stops there, the next node is never committed nor sent anything",
    seed: SCENARIO_SEED,
    planNodes: 2,
    events: (
      { node },
    ) => [
      twin({
        kind: "twin",
        fault: { kind: "install-fails", point: "talos.install", target: node },
      }),
    ],
    expect: { state: "failed", end: "halted", reason: "InstallFailed", next: "pending" },
  },
  {
    name: "node-never-returns-is-unresolved",
    incidents: ["kubernetes-sigs/cluster-api#13508", "siderolabs/talos#13802"],
    summary:
      "the node does not come back from its reboot: unresolved at the deadline, never failed",
    seed: SCENARIO_SEED,
    events: (
      { node },
    ) => [
      twin({
        kind: "twin",
        fault: { kind: "no-return-from-reboot", point: "talos.boot", target: node },
      }),
    ],
    expect: { state: "unresolved", end: "halted", reason: "BootNotObserved", reboots: 1 },
  },
  {
    name: "stale-health-warning-clears-before-the-deadline",
    incidents: ["fluxcd/kustomize-controller#387", "home-operations/tuppr#481"],
    summary: "kubelet reports unhealthy for two minutes after boot: verification keeps reading " +
      "fresh rounds and completes once it clears, within the deadline",
    seed: SCENARIO_SEED,
    events: ({ node }) => [
      twin({
        kind: "twin",
        fault: {
          kind: "service-unhealthy",
          point: "talos.service",
          target: node,
          params: { service: "kubelet", durationMs: 120_000 },
        },
      }),
    ],
    expect: { state: "completed", end: "completed", cordoned: false },
  },
  {
    name: "health-failing-past-the-deadline-is-failed-bounded",
    incidents: ["argoproj/argo-cd#1715", "ionfury/homelab#863"],
    summary: "kubelet stays unhealthy past the verification deadline: the bound rule decides " +
      "failed at the deadline instead of waiting forever",
    seed: SCENARIO_SEED,
    events: ({ node }) => [
      twin({
        kind: "twin",
        fault: {
          kind: "service-unhealthy",
          point: "talos.service",
          target: node,
          params: { service: "kubelet", durationMs: 3_000_000 },
        },
      }),
    ],
    expect: { state: "failed", end: "halted", reason: "VerificationHealthFailed", reboots: 1 },
  },
  {
    name: "upgrade-aimed-at-the-wrong-machine-is-refused",
    incidents: ["siderolabs/omni#888"],
    summary: "the node's address answers from another machine before its commitment: refused, " +
      "nothing sent to either machine",
    seed: SCENARIO_SEED,
    events: ({ node }) => [
      twin({
        kind: "twin",
        fault: {
          kind: "address-reused",
          point: "talos.route",
          target: node,
          params: { by: "cp-1" },
        },
      }),
    ],
    expect: {
      state: "pending",
      end: "refused",
      reason: "MachineIdentityMismatch",
      installs: 0,
      reboots: 0,
    },
  },
  {
    name: "address-reused-after-commitment-sends-nothing",
    incidents: ["siderolabs/omni#888"],
    summary:
      "the address moves to another machine after the commitment: unresolved before any send",
    seed: SCENARIO_SEED,
    events: ({ node }) => [
      {
        kind: "twin",
        fault: {
          kind: "address-reused",
          point: "talos.route",
          target: node,
          params: { by: "cp-1" },
        },
        afterCommitOf: node,
      },
    ],
    expect: {
      state: "unresolved",
      end: "halted",
      reason: "MachineIdentityMismatch",
      installs: 0,
      reboots: 0,
    },
  },
  {
    name: "machine-reimaged-after-commitment-sends-nothing",
    incidents: [
      "siderolabs/omni#888",
      "docs/safeguards.md (a reused address must not select another machine)",
    ],
    summary: "the machine is replaced under the same name and address after the commitment: " +
      "unresolved on the identity mismatch, nothing sent",
    seed: SCENARIO_SEED,
    events: ({ node }) => [
      {
        kind: "twin",
        fault: { kind: "machine-reimaged", point: "talos.machine", target: node },
        afterCommitOf: node,
      },
    ],
    expect: { state: "unresolved", end: "halted", reason: "MachineIdentityMismatch", installs: 0 },
  },
  {
    name: "install-lock-held-is-unresolved-not-retried",
    incidents: ["home-operations/tuppr#532", "siderolabs/omni#515"],
    summary:
      "another installation holds the lifecycle lock: the refusal accounts for the attempt, " +
      "the step is unresolved, no retry and no reboot",
    seed: SCENARIO_SEED,
    events: (
      { node },
    ) => [
      twin({
        kind: "twin",
        fault: { kind: "install-lock-held", point: "talos.install", target: node },
      }),
    ],
    expect: {
      state: "unresolved",
      end: "halted",
      reason: "InstallRefused",
      installs: 1,
      reboots: 0,
    },
  },
  {
    name: "installer-exits-non-zero-is-failed-without-reboot",
    incidents: ["home-operations/tuppr#213", "rancher/system-upgrade-controller#275"],
    summary: "the installer exits non-zero: failed, classified from the target's answer, no reboot",
    seed: SCENARIO_SEED,
    events: (
      { node },
    ) => [
      twin({
        kind: "twin",
        fault: { kind: "install-fails", point: "talos.install", target: node },
      }),
    ],
    expect: { state: "failed", end: "halted", reason: "InstallFailed", installs: 1, reboots: 0 },
  },
  {
    name: "install-response-lost-half-way-is-unresolved",
    incidents: ["home-operations/tuppr#575", "siderolabs/omni#893"],
    summary: "the install stream is cut while the installer keeps running: unresolved, never a " +
      "second install, no reboot",
    seed: SCENARIO_SEED,
    events: ({ node }) => [
      twin({
        kind: "twin",
        fault: { kind: "lose-response", point: "talos.LifecycleService.Upgrade", target: node },
      }),
    ],
    expect: {
      state: "unresolved",
      end: "halted",
      reason: "InstallResponseLost",
      installs: 1,
      reboots: 0,
    },
  },
  {
    name: "drain-blocked-by-budget-keeps-the-cordon-and-stops",
    incidents: [
      "rancher/system-upgrade-controller#78",
      "kubernetes-sigs/cluster-api#2331",
      "kubereboot/kured#63",
    ],
    summary: "a budget refuses the database primary's eviction until the drain bound passes: " +
      "unresolved with the cordon kept (no uncordon to make a gate green), no reboot, nothing further",
    seed: SCENARIO_SEED,
    events: () => [
      twin({
        kind: "twin",
        fault: {
          kind: "http-storm",
          point: "kube.evict",
          target: "pg-1",
          count: 1_000_000,
          params: { status: 429 },
        },
      }),
    ],
    expect: {
      state: "unresolved",
      end: "halted",
      reason: "DrainIncomplete",
      reboots: 0,
      cordoned: true,
    },
  },
  {
    name: "database-primary-switches-over-during-drain",
    incidents: ["seed 004 (CloudNative-PG primary PDB)", "siderolabs/omni#1954"],
    summary: "the node hosts the database primary whose budget allows no disruption: the cordon " +
      "triggers the operator's switchover and the drain completes; the node is uncordoned",
    seed: SCENARIO_SEED,
    events: () => [],
    expect: { state: "completed", end: "completed", installs: 1, reboots: 1, cordoned: false },
  },
  {
    name: "controller-dies-on-the-node-it-drains",
    incidents: [
      "home-operations/tuppr#65",
      "home-operations/tuppr#577",
      "operator-framework/operator-sdk#1874",
    ],
    summary: "the controller dies right after its drain attempt committed (it ran on the drained " +
      "node); its successor takes the operation over, reads the drain incomplete (the planned pods " +
      "are still on the node), drains again and completes the step: resume is not rerun (one " +
      "install, one reboot)",
    seed: SCENARIO_SEED,
    events: ({ cleanPoints }) => [
      {
        kind: "crash",
        atPoint: nthPoint(cleanPoints, "attempt:after-commit", ATTEMPT.drain),
        restartAfterMs: 60_000,
        skewMs: 0,
      },
    ],
    expect: { state: "completed", end: "completed", installs: 1, reboots: 1 },
  },
  {
    name: "second-replica-takes-over-mid-install",
    incidents: ["kubereboot/kured#137", "runatlantis/atlantis#5807"],
    summary: "a second replica (its clock 90 s ahead) starts right after the install attempt " +
      "committed; the first records the install's acceptance before the takeover and is fenced at " +
      "its next write; the second resumes after the accepted install and completes: one install",
    seed: SCENARIO_SEED,
    events: ({ cleanPoints }) => [
      {
        kind: "replica",
        atPoint: nthPoint(cleanPoints, "attempt:after-commit", ATTEMPT.install),
        skewMs: 90_000,
      },
    ],
    expect: { state: "completed", installs: 1, reboots: 1 },
  },
  {
    name: "journal-restored-mid-rollout-fences-the-old-epoch",
    incidents: ["docs/recovery.md (restore or ownership change during any phase)"],
    summary:
      "right after the reboot attempt committed, the journal is restored from a backup taken at " +
      "the node's commitment (every attempt since lost to it) and a recovery entry follows: the " +
      "running controller's old token is fenced, the restored operation is taken over into the " +
      "new epoch and left unresolved for recovery, and nothing is sent again",
    seed: SCENARIO_SEED,
    events: ({ cleanPoints }) => [
      {
        kind: "restore",
        atPoint: nthPoint(cleanPoints, "attempt:after-commit", ATTEMPT.reboot),
        backupAt: nthPoint(cleanPoints, "commit:after-commit", 0),
      },
    ],
    expect: { state: "unresolved", reboots: 1 },
  },
  {
    name: "someone-elses-cordon-is-never-lifted",
    incidents: [
      "rancher/system-upgrade-controller#341",
      "kubereboot/kured#955",
      "axeII/home-ops#3866",
    ],
    summary: "an operator cordons the node after its commitment: cairn does not own that cordon, " +
      "never lifts it, and the cordoned node holds the verification until its deadline",
    seed: SCENARIO_SEED,
    events: ({ node }) => [{ kind: "operator-cordon", node, atMs: 0, afterCommitOf: node }],
    expect: { state: "failed", end: "halted", reason: "VerificationHealthFailed", cordoned: true },
  },
  // An operator's cordon elsewhere is no evidence about the target (docs/dst.md, Findings): before
  // rounds told where they failed, these ended a node that did what was asked `failed`
  // (VerificationHealthFailed, PostconditionContradicted naming the other node).
  {
    name: "a-cordon-elsewhere-during-verification-fails-nothing",
    incidents: ["kubereboot/kured#955", "rancher/system-upgrade-controller#341"],
    summary: "an operator cordons another node right after the target's commitment: the " +
      "target's verification fails on that node alone until its deadline; the target is " +
      "unresolved (HealthFailedElsewhere), not failed, keeps cairn's cordon, and nothing else moves",
    seed: SCENARIO_SEED,
    events: cordonElsewhere("afterCommitOf"),
    expect: {
      ...HELD_ELSEWHERE,
      installs: 1,
      reboots: 1,
      cordoned: true,
    },
  },
  {
    name: "a-cordon-elsewhere-during-the-post-gate-fails-nothing",
    incidents: ["kubereboot/kured#955", "home-operations/tuppr#213"],
    summary: "an operator cordons another node when the target enters verifying (after its " +
      "uncordon): the post-gate fails on that node alone; the completion observation reads the " +
      "target as asked and health as not established, so the target is unresolved " +
      "(HealthFailedElsewhere), never failed",
    seed: SCENARIO_SEED,
    events: cordonElsewhere("onVerifyingOf"),
    expect: {
      ...HELD_ELSEWHERE,
      installs: 1,
      reboots: 1,
      cordoned: false,
    },
  },
  {
    name: "partition-to-talos-during-the-reboot-heals",
    incidents: ["kubernetes-sigs/cluster-api#13508", "home-operations/tuppr#595"],
    summary: "cairn cannot reach Talos for ten minutes from the second minute: reads are " +
      "unreadable meanwhile, never failures, and the step completes once the partition heals",
    seed: SCENARIO_SEED,
    events: () => [{ kind: "partition", api: "talos", fromMs: 120_000, forMs: 600_000 }],
    expect: { state: "completed", end: "completed", installs: 1, reboots: 1, cordoned: false },
  },
  // Stale reads (docs/dst.md, Findings): a watch that skips events leaves the health cache behind
  // the rounds lagging. The rounds that decide a terminal state read fresh lists; before they did,
  // these seeds ended an upgraded node `failed`.
  {
    name: "watch-skipping-cache-never-fails-the-post-gate",
    incidents: ["home-operations/tuppr#213", "argoproj/argo-cd#14442"],
    summary: "three in ten watch events are lost: the cache behind the post-gate still shows the " +
      "nodes cordoned after the uncordon (NodeCordoned); the post-gate reads fresh lists and both " +
      "nodes complete (from the cache: PostconditionContradicted on a node at the target version)",
    seed: 1020,
    planNodes: 2,
    events: () => [{ kind: "stale", read: "watch-skip", p: 0.3 }],
    expect: { state: "completed", end: "completed", cordoned: false, next: "completed" },
  },
  {
    name: "watch-skipping-cache-never-fails-the-verification",
    incidents: ["home-operations/tuppr#213", "argoproj/argo-cd#14442"],
    summary:
      "six in ten watch events are lost: the cache behind the verification still shows the " +
      "nodes NotReady after the reboot (NodeNotReady); the verification rounds read fresh lists " +
      "and both nodes complete (from the cache: VerificationHealthFailed at the deadline)",
    seed: 1020,
    planNodes: 2,
    events: () => [{ kind: "stale", read: "watch-skip", p: 0.6 }],
    expect: { state: "completed", end: "completed", cordoned: false, next: "completed" },
  },
  {
    name: "watch-skipping-cache-after-a-partition-never-fails",
    incidents: ["home-operations/tuppr#213", "argoproj/argo-cd#14442"],
    summary:
      "the Kubernetes API is unreachable for ten minutes mid-rollout while six in ten watch " +
      "events are lost (ci seed 1048 as drawn): the post-gate reads fresh lists once the API is " +
      "back, the node completes (from the cache: PostconditionContradicted)",
    seed: 1048,
    planNodes: 2,
    events: () => [
      { kind: "partition", api: "kube", fromMs: 1_586_208, forMs: 600_000 },
      { kind: "stale", read: "watch-skip", p: 0.6 },
    ],
    expect: { state: "completed", end: "completed", cordoned: false, next: "completed" },
  },
  // Plan kinds other than TalosUpgrade (docs/dst.md, What a seed draws).
  {
    name: "kubernetes-component-never-ready-stops-the-rollout",
    incidents: ["home-operations/tuppr#213", "kubernetes-sigs/cluster-api#13508"],
    summary: "the first control plane's new kube-apiserver never becomes ready: its step is " +
      "not completed, the component is never moved on the next control plane",
    seed: 38,
    kind: "KubernetesUpgrade",
    planNodes: 3,
    events: ({ node }) => [
      twin({
        kind: "twin",
        fault: {
          kind: "static-pod-not-ready",
          point: "talos.staticPod",
          target: node,
          params: { component: "kube-apiserver" },
        },
      }),
    ],
    expect: { state: "failed", end: "halted", next: "pending" },
  },
  {
    name: "kubernetes-report-never-shows-a-half-moved-node-completed",
    incidents: ["home-operations/tuppr#522", "axeII/home-ops#3870"],
    summary: "a second replica takes the rollout over right after the last control plane's " +
      "kubelet commitment: that operation is unresolved, its earlier component operations " +
      "completed, and the execution report shows the node unresolved, not completed (the report " +
      "read a node's first operation only)",
    seed: 38,
    kind: "KubernetesUpgrade",
    planNodes: 3,
    // Right after the last commitment (the last control plane's kubelet, its earlier component
    // operations completed) a second replica starts and takes that operation over.
    events: ({ cleanPoints }) => [{
      kind: "replica",
      atPoint: nthPoint(
        cleanPoints,
        "commit:after-commit",
        cleanPoints.filter((p) => p === "commit:after-commit").length - 1,
      ),
      skewMs: 0,
    }],
    expect: { state: "completed", next: "completed" },
  },
  {
    name: "config-stored-but-not-running-is-failed-not-completed",
    incidents: ["home-operations/tuppr#522", "siderolabs/omni#1552"],
    summary: "a time-server change is stored and active as a document but the service keeps its " +
      "old servers: the operation is failed (ConfigNotActive), never completed on the digest",
    seed: 3,
    kind: "ConfigApply",
    events: ({ node }) => [
      twin({
        kind: "twin",
        fault: { kind: "config-activation-deferred", point: "talos.config", target: node },
      }),
    ],
    expect: { state: "failed", end: "halted", reason: "ConfigNotActive", reboots: 0 },
  },
  {
    name: "staged-config-is-activated-by-its-own-reboot",
    incidents: ["docs/config-apply.md (explicit activation)"],
    summary: "an etcd change is staged, observed stored, then activated by one reboot of its own " +
      "and observed running; nothing is installed",
    seed: 5,
    kind: "ConfigApply",
    events: () => [],
    expect: { state: "completed", end: "completed", installs: 0, reboots: 1 },
  },
  // The post-gate of the other executing kinds reads a round failing only elsewhere the same way.
  {
    name: "a-cordon-elsewhere-during-a-config-post-gate-fails-nothing",
    incidents: ["kubereboot/kured#955"],
    summary: "an operator cordons another node when a staged configuration's node enters " +
      "verifying: its settings read active, health fails on the other node alone; the node is " +
      "unresolved (HealthFailedElsewhere), not failed",
    seed: 5,
    kind: "ConfigApply",
    events: cordonElsewhere("onVerifyingOf"),
    expect: { ...HELD_ELSEWHERE, reboots: 1 },
  },
  {
    name: "a-cordon-elsewhere-during-a-config-reboot-verification-fails-nothing",
    incidents: ["kubereboot/kured#955"],
    summary: "an operator cordons another node right after a staged configuration's commitment: " +
      "the verification after its reboot fails on that node alone; the node keeps cairn's cordon " +
      "and is unresolved (HealthFailedElsewhere), not VerificationHealthFailed",
    seed: 5,
    kind: "ConfigApply",
    events: cordonElsewhere("afterCommitOf"),
    expect: {
      ...HELD_ELSEWHERE,
      reboots: 1,
      cordoned: true,
    },
  },
  {
    name: "a-cordon-elsewhere-during-a-component-post-gate-fails-nothing",
    incidents: ["kubereboot/kured#955"],
    summary: "an operator cordons another node when a control plane's component change enters " +
      "verifying: the component reads as asked, health fails on the other node alone; the node " +
      "is unresolved (HealthFailedElsewhere), not failed",
    seed: 8,
    kind: "KubernetesUpgrade",
    events: cordonElsewhere("onVerifyingOf"),
    expect: HELD_ELSEWHERE,
  },
  ...COMPONENT_SCENARIOS,
  // Talos-side stale and missed reads (issue 16): a read answered from an earlier answer of the
  // same machine (a lagging apid proxy or cache), a stream that skips its messages.
  {
    name: "stale-version-after-the-reboot-is-read-again-not-failed",
    incidents: ["siderolabs/omni#3360", "home-operations/tuppr#213"],
    summary: "every version read answers what the machine said one read before: beside the new " +
      "boot id the first read after the reboot shows the old version; it is read again, the " +
      "node completes (it was failed BootedOtherVersion on that one read)",
    seed: SCENARIO_SEED,
    events: ({ node }) => [staleRead(node, "talos.Version")],
    expect: { state: "completed", end: "completed", installs: 1, reboots: 1, cordoned: false },
  },
  {
    name: "stale-version-never-marks-an-old-boot-upgraded",
    incidents: ["siderolabs/omni#1552", "siderolabs/omni#3360"],
    summary: "the machine boots back into its old slot while version reads lag: no earlier " +
      "answer shows the target, so it is failed at the deadline on the old version, never " +
      "completed and never installed again",
    seed: SCENARIO_SEED,
    events: ({ node }) => [
      twin({
        kind: "twin",
        fault: { kind: "boots-old-version", point: "talos.boot", target: node },
      }),
      staleRead(node, "talos.Version"),
    ],
    expect: { state: "failed", reason: "BootedOtherVersion", installs: 1, reboots: 1 },
  },
  {
    name: "stale-boot-id-never-counts-as-rebooted",
    incidents: ["siderolabs/talos#8708", "windsorcli/cli#3132"],
    summary: "every boot-id read answers the one before: the first read after the reboot shows " +
      "the old boot, which is not a reboot; the step waits for the new one, never reboots again",
    seed: SCENARIO_SEED,
    events: ({ node }) => [staleRead(node, "talos.Read")],
    expect: { state: "completed", end: "completed", installs: 1, reboots: 1 },
  },
  {
    name: "missed-boot-id-read-is-unreadable-not-a-new-boot",
    incidents: ["siderolabs/talos#8708", "siderolabs/talos#14242"],
    summary: "the boot-id read before the install comes back without its data: that is an " +
      "unreadable boot id (BootIdUnreadable), never one any later read would differ from",
    seed: SCENARIO_SEED,
    events: ({ node }) => [
      twin({
        kind: "twin",
        fault: { kind: "stream-skips-events", point: "talos.Read", target: node },
      }),
    ],
    expect: { state: "unresolved", reason: "BootIdUnreadable", installs: 0, reboots: 0 },
  },
  {
    name: "install-stream-that-skips-its-exit-is-unresolved",
    incidents: ["siderolabs/talos#14242", "home-operations/tuppr#575"],
    summary: "the install's stream skips every other message, its exit code among them: the " +
      "install is unanswered (InstallResponseLost), never taken as done and never sent again",
    seed: SCENARIO_SEED,
    events: ({ node }) => [
      twin({
        kind: "twin",
        fault: {
          kind: "stream-skips-events",
          point: "talos.LifecycleService.Upgrade",
          target: node,
          params: { every: 2 },
        },
      }),
    ],
    expect: { state: "unresolved", reason: "InstallResponseLost", installs: 1, reboots: 0 },
  },
  {
    name: "stale-stored-config-is-read-again-never-failed-or-rebooted-early",
    incidents: ["siderolabs/omni#3360", "home-operations/tuppr#522"],
    summary: "every machine-configuration read answers the one before: the stored document " +
      "read after the staged apply is the old one; it is read again until it holds what was " +
      "sent, and only then activated by one reboot (it was failed ConfigNotStored)",
    seed: 5,
    kind: "ConfigApply",
    events: ({ node }) => [
      staleRead(node, "talos.cosi.Get", { type: "MachineConfigs.config.talos.dev" }),
    ],
    expect: { state: "completed", end: "completed", installs: 0, reboots: 1 },
  },
  {
    name: "stale-machine-config-never-undoes-an-earlier-component-change",
    incidents: ["siderolabs/talos#11484", "siderolabs/talos#11754"],
    summary: "every other machine-configuration read answers the one from two reads before: a " +
      "component's whole-document change based on it would put the previous component back to " +
      "the old version (a KubernetesSkewViolated refusal after every node shown completed); the " +
      "read is taken again until it is no older than the plan's earlier change left",
    seed: 8,
    kind: "KubernetesUpgrade",
    events: ({ node }) => [staleMachineConfig(node, 2)],
    expect: { state: "completed", end: "completed" },
  },
  {
    name: "stale-machine-config-after-a-change-is-not-its-contradiction",
    incidents: ["siderolabs/talos#11484", "home-operations/tuppr#213"],
    summary: "every other machine-configuration read answers the one from three reads before: " +
      "kube-proxy's image read back from before its accepted change was failed " +
      "ComponentVersionContradicted, and a completion read that lands on such an answer was " +
      "unresolved; an answer older than the change judges nothing and is read again",
    seed: 8,
    kind: "KubernetesUpgrade",
    // Three control planes: the first one's kube-proxy change is judged on its configuration
    // (the last one's moves the DaemonSet).
    planNodes: 3,
    events: ({ node }) => [staleMachineConfig(node, 3)],
    expect: { state: "completed", end: "completed" },
  },
];

/** Every other machine-configuration read of `node` answered from `lag` reads before. */
function staleMachineConfig(node: string, lag: number): DstEvent {
  return staleRead(node, "talos.cosi.Get", {
    type: "MachineConfigs.config.talos.dev",
    lag,
    every: 2,
  });
}

/** Every read of `point` on `node` answered with the one before it (a lagging apid proxy). */
function staleRead(
  node: string,
  point: string,
  params: Record<string, string | number> = {},
): DstEvent {
  return {
    kind: "twin",
    fault: {
      kind: "stale-read",
      point,
      target: node,
      count: 1_000_000,
      params: { lag: 1, ...params },
    },
  };
}
