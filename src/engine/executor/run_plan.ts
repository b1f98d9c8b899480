/**
 * Binding and running one TalosUpgrade plan: records the plan and its approval in the journal
 * (name → digest, the attempt budget, the evidence age, the per-step bindings) and runs the
 * rollout with a journal-recording health gate over fresh cluster evidence. Pure orchestration
 * over ports, shared by `cairn apply`, rehearsals, the reconciler and the demo (all wired in
 * `src/app/`).
 */
import { CairnError } from "../../domain/errors.ts";
import type { SelfHosting } from "../leadership/self_hosting.ts";
import type { ParsedPlan } from "../../domain/plan/parse.ts";
import type {
  ConfigApplyPlan,
  KubernetesUpgradePlan,
  Plan,
  TalosUpgradePlan,
} from "../../domain/plan/schema.ts";
import type { Clock } from "../../ports/clock.ts";
import type { HealthPolicy } from "../../domain/health/policy_parse.ts";
import type { Actor, Journal, StepBinding } from "../../ports/journal.ts";
import type { Logger } from "../../ports/logger.ts";
import type {
  BoundFileSource,
  ClusterIdentitySource,
  InstallerResolver,
} from "../../ports/dispatch.ts";
import type { TrustRoot } from "../../ports/reconcile.ts";
import type { Talos } from "../../ports/talos.ts";
import { talosClusterIdentity } from "../authorize/cluster_identity.ts";
import { authorizeRollout, type DispatchAuthority, type DispatchStop } from "./dispatch_gate.ts";
import { journalInEpoch } from "./journal_in_epoch.ts";
import type { BoundPlan, ExecutionObserver, ExecutorDeps } from "./deps.ts";
import { stepBindings } from "./digests.ts";
import { journalHealthGate } from "./health_gate.ts";
import { hookAttempts } from "../../domain/ops/hook_attempts.ts";
import { type RolloutOutcome, runRollout } from "./rollout.ts";
import type { OperatingSettings } from "../operating/hold.ts";
import type { KubeEvidence } from "../health/kube_evidence.ts";
import { RebootPace } from "./reboot_pace.ts";

/** Pre-dispatch evidence older than this never authorises an attempt. */
export const MAX_EVIDENCE_AGE_MS = 5 * 60_000;

/**
 * Attempts one node step needs per hop (pull, install, reboot) plus cordon, drain, uncordon, and
 * its node hooks' Job creates.
 */
function attemptBudget(plan: TalosUpgradePlan): number {
  return plan.spec.hops.length * 3 + 3 + hookAttempts(plan) + plan.spec.retry.maxAttempts;
}

/**
 * A parsed plan narrowed to the kind a runner executes; any other kind is refused, located at the
 * plan's `kind`, with `refusal` saying who does not run it.
 */
export function planOfKind<K extends Plan["kind"]>(
  parsed: ParsedPlan,
  kind: K,
  refusal: string,
): Extract<Plan, { kind: K }> {
  if (parsed.plan.kind !== kind) {
    throw new CairnError({
      reason: "PlanKindNotExecutable",
      message: `${parsed.plan.kind} plans ${refusal}`,
      location: { file: parsed.file, line: 1, column: 1, path: "kind" },
    });
  }
  return parsed.plan as Extract<Plan, { kind: K }>;
}

/** Refuses plan kinds the executor does not run. */
export function asTalosUpgrade(parsed: ParsedPlan): TalosUpgradePlan {
  return planOfKind(
    parsed,
    "TalosUpgrade",
    "are checked and previewed, not executed by this command",
  );
}

/** What binding a plan into the journal takes, whatever its kind. */
export interface BindInputs {
  readonly parsed: ParsedPlan;
  readonly bytes: Uint8Array;
  readonly signatures: string;
  readonly firstSeenCommit: string;
  readonly approver: Actor;
  readonly nowMs: number;
}

/**
 * Records a plan (binding name → digest, with the steps and attempt budget its kind derives) and
 * approves it when it is only proposed; returns what the kind's runner runs.
 */
export async function recordApprovedPlan<P extends Plan>(
  journal: Journal,
  o: BindInputs,
  plan: P,
  derived: { readonly maxAttempts: number; readonly steps: readonly StepBinding[] },
): Promise<BoundPlan<P>> {
  const record = await journal.recordPlan({
    digest: o.parsed.sha256,
    name: plan.metadata.name,
    kind: plan.kind,
    cluster: plan.metadata.cluster,
    bytes: new TextDecoder().decode(o.bytes),
    signatures: o.signatures,
    firstSeenCommit: o.firstSeenCommit,
    expiresAtMs: Date.parse(plan.metadata.expires),
    maxAttempts: derived.maxAttempts,
    maxEvidenceAgeMs: MAX_EVIDENCE_AGE_MS,
    steps: derived.steps,
    nowMs: o.nowMs,
  });
  if (record.state === "proposed") await journal.approvePlan(record.digest, o.approver, o.nowMs);
  return { plan, digest: o.parsed.sha256 };
}

/** Records the plan (binding name → digest) and its approval; returns what the executor runs. */
export async function bindPlan(journal: Journal, o: BindInputs): Promise<BoundPlan> {
  const plan = asTalosUpgrade(o.parsed);
  return await recordApprovedPlan(journal, o, plan, {
    maxAttempts: attemptBudget(plan),
    steps: await stepBindings(plan),
  });
}

/**
 * What a plan's authority is re-checked against before the rollout and before each node's
 * commitment (engine/authorize/dispatch_check.ts). There is no health policy option: the policy
 * that gates is the one the plan binds, read through `files` and verified by its digest.
 */
export interface AuthorityInputs {
  /** The exact plan bytes and signatures as approved. */
  readonly bytes: Uint8Array;
  readonly signatures: string;
  readonly requiredApprovals: number;
  /** The repository as it is now (working tree, or the watched branch's current tip). */
  readonly files: BoundFileSource;
  /** Re-read at every check; absent only in a rehearsal without a trust root. */
  readonly trust?: TrustRoot;
  readonly installers?: InstallerResolver;
}

/** Bound on one cluster-identity read at dispatch (wall-clock ms). */
const IDENTITY_READ_MS = 20_000;

export interface ExecuteOptions {
  readonly journal: Journal;
  readonly bound: BoundPlan;
  /** The cluster's ports (the executor closes nothing). */
  readonly cluster: Pick<ExecutorDeps, "kube" | "talos">;
  readonly authority: AuthorityInputs;
  readonly clock: Clock;
  /** Clock for read timeouts inside health rounds (the twin's real-time view); default `clock`. */
  readonly timeoutClock?: Clock;
  readonly log: Logger;
  readonly owner: string;
  /**
   * The journal epoch this process started in (docs/operation-model.md#fencing): a long-running
   * process (`cairn reconcile`) reads it once at start and hands it to every run, so a run after
   * a recovery entry or a journal restore is refused (`EpochSuperseded`) instead of acting in the
   * new epoch. Absent: read once when the run's deps are built (a one-shot `cairn apply`).
   */
  readonly epoch?: string;
  readonly callTimeoutMs: (remainingMs: number) => number;
  readonly pollIntervalMs: number;
  /** How a drain waits between eviction passes (`events` on a real clock; default `poll`). */
  readonly drainWake?: "events" | "poll";
  readonly roundIntervalMs: number;
  readonly signal?: AbortSignal;
  /** Told of each milestone (the reconcile loop's reports, metrics). */
  readonly observer?: ExecutionObserver;
  /** The cluster's default windows and the like (docs/operating.md). */
  readonly operating?: OperatingSettings;
  /**
   * Watch caches kept beyond this run (the reconcile loop's, shared with its previews): the
   * gate rounds read them already listed and watched instead of listing every resource type
   * first. Absent: the run's own caches, listed at its first round and stopped at its end.
   */
  readonly watchCaches?: KubeEvidence;
  /** Self-hosting safety: leadership handed over before draining this replica's node. */
  readonly selfHosting?: SelfHosting;
  /**
   * Test seam, never set outside tests: rewires what the executor reaches the world through, so
   * the simulation campaign (app/dst/) can run deliberately broken executor variants and show
   * that each of its invariants fires.
   */
  readonly variant?: (deps: ExecutorDeps) => ExecutorDeps;
}

/** The dispatch authority of a run: the plan as approved, current evidence through ports. */
export function dispatchAuthority(
  plan: TalosUpgradePlan | ConfigApplyPlan | KubernetesUpgradePlan,
  a: AuthorityInputs,
  o: Pick<ExecuteOptions, "clock" | "callTimeoutMs"> & { readonly talos: Talos },
): DispatchAuthority {
  return {
    subject: {
      plan,
      bytes: a.bytes,
      signatures: a.signatures,
      requiredApprovals: a.requiredApprovals,
    },
    ports: {
      files: a.files,
      ...(a.trust ? { trust: a.trust } : {}),
      ...(a.installers ? { installers: a.installers } : {}),
      clock: o.clock,
      cluster: atDeclaredAddress(
        plan,
        talosClusterIdentity(o.talos, o.callTimeoutMs(IDENTITY_READ_MS)),
      ),
    },
  };
}

/**
 * Talos is asked at the node's declared address (as every Talos call of the step is), so the
 * identity read comes from the machine the commitment would reach.
 */
function atDeclaredAddress(
  plan: TalosUpgradePlan | ConfigApplyPlan | KubernetesUpgradePlan,
  source: ClusterIdentitySource,
): ClusterIdentitySource {
  const address = new Map(plan.spec.nodes.map((n) => [n.name, n.address]));
  return { read: (node) => source.read(address.get(node) ?? node) };
}

/** The outcome of a rollout stopped by the dispatch check before its first node. */
function stoppedBeforeStart(
  plan: TalosUpgradePlan | KubernetesUpgradePlan | ConfigApplyPlan,
  stop: DispatchStop,
): RolloutOutcome {
  return {
    state: stop.verdict === "refused" ? "refused" : "halted",
    nodes: [{
      node: plan.spec.nodes[0]!.name,
      operationId: undefined,
      state: "not-committed",
      reason: stop.reason,
      detail: stop.detail,
      refused: stop.verdict === "refused",
    }],
  };
}

/**
 * The dispatch check of a plan not yet bound (`cairn apply`, `cairn rehearse`): recorded in the
 * journal whatever its verdict; a plan that does not pass is never bound or approved there.
 */
export async function authorizeBeforeBind(o: {
  readonly journal: Journal;
  readonly parsed: ParsedPlan;
  readonly authority: AuthorityInputs;
  readonly cluster: Pick<ExecutorDeps, "kube" | "talos">;
  readonly clock: Clock;
  readonly owner: string;
  readonly callTimeoutMs: (remainingMs: number) => number;
}): Promise<RolloutOutcome | undefined> {
  // A KubernetesUpgrade and a ConfigApply are checked the same way before they are bound
  // (engine/k8s_upgrade/run.ts, engine/config_apply/run_config_apply.ts).
  const kind = o.parsed.plan.kind;
  const plan = kind === "KubernetesUpgrade" || kind === "ConfigApply"
    ? o.parsed.plan
    : asTalosUpgrade(o.parsed);
  const authority = dispatchAuthority(plan, o.authority, { ...o, talos: o.cluster.talos });
  // A one-shot process before binding: it acts in the journal's current epoch.
  const pre = await authorizeRollout(o.journal, o.owner, o.parsed.sha256, authority);
  return pre.ok ? undefined : stoppedBeforeStart(plan, pre.stop);
}

/**
 * Runs the rollout: the dispatch check first (a refusal sends nothing and is recorded), then node
 * by node with fresh health evidence gated by the plan's bound health policy.
 */
export async function executePlan(o: ExecuteOptions): Promise<RolloutOutcome> {
  const authority = dispatchAuthority(o.bound.plan, o.authority, { ...o, talos: o.cluster.talos });
  const pre = await authorizeRollout(
    journalInEpoch(o.journal, o.epoch),
    o.owner,
    o.bound.digest,
    authority,
  );
  if (!pre.ok) {
    o.log.warn("dispatch check did not pass", {
      reason: pre.stop.reason,
      verdict: pre.stop.verdict,
    });
    return stoppedBeforeStart(o.bound.plan, pre.stop);
  }
  const { deps: base, evidence } = await executionDeps(o, o.bound.plan, {
    policy: pre.policy,
    authority,
  });
  const deps: ExecutorDeps = {
    ...base,
    ...(o.drainWake ? { drainWake: o.drainWake } : {}),
    ...(o.selfHosting ? { selfHosting: o.selfHosting } : {}),
  };
  try {
    return await runRollout(o.variant ? o.variant(deps) : deps, o.bound);
  } finally {
    evidence.stop();
  }
}

/**
 * What every plan kind's executor runs on once the dispatch check passed: fresh cluster evidence
 * over the plan's nodes (Talos read at their declared addresses, the cluster's Alertmanager for a
 * policy's vetoing alert bindings), health rounds judged by the bound policy and recorded, the
 * operating settings (default windows, continuations) and the ports. The caller stops `evidence`
 * when the run ends.
 */
export async function executionDeps(
  o: Omit<ExecuteOptions, "bound">,
  plan: {
    readonly metadata: { readonly cluster: string };
    readonly spec: {
      readonly nodes: readonly { readonly name: string; readonly address: string }[];
    };
  },
  authorized: { readonly policy: HealthPolicy; readonly authority: DispatchAuthority },
): Promise<{ readonly deps: ExecutorDeps; readonly evidence: { stop(): void } }> {
  const { ClusterEvidence } = await import("../health/cluster_evidence.ts");
  const evidence = new ClusterEvidence(
    o.cluster.kube,
    o.cluster.talos,
    o.clock,
    new Map(plan.spec.nodes.map((n) => [n.name, n.address])),
    // Without it an alert binding is unreadable, never a pass (docs/operating.md).
    o.operating?.alertmanager,
    o.watchCaches,
  );
  // The process's epoch when it carries one (read once at its start), else read once now: the
  // epoch the controller acts in from here on, never refreshed under it.
  const epoch = o.epoch ?? (await o.journal.installation()).epoch;
  // Every act without an owner token (rounds, observations, checks) carries that epoch: the
  // journal refuses them once a restore or a recovery entry moved it (journal_in_epoch.ts).
  const journal = journalInEpoch(o.journal, epoch);
  const health = journalHealthGate({
    clock: o.clock,
    ...(o.timeoutClock ? { timeoutClock: o.timeoutClock } : {}),
    journal,
    evidence,
    policy: authorized.policy,
    cluster: plan.metadata.cluster,
    intervalMs: o.roundIntervalMs,
    ...(o.observer ? { observer: o.observer } : {}),
  });
  const deps: ExecutorDeps = {
    clock: o.clock,
    journal,
    epoch,
    kube: o.cluster.kube,
    talos: o.cluster.talos,
    health,
    authority: authorized.authority,
    log: o.log,
    owner: o.owner,
    callTimeoutMs: o.callTimeoutMs,
    pollIntervalMs: o.pollIntervalMs,
    // One per run: what its earlier nodes' reboots took paces the later nodes' waits.
    rebootPace: new RebootPace(),
    ...(o.signal ? { signal: o.signal } : {}),
    ...(o.observer ? { observer: o.observer } : {}),
    ...(o.operating ? { operating: o.operating } : {}),
  };
  return { deps, evidence };
}
