import type { SelfHosting } from "../leadership/self_hosting.ts";
import type { Clock } from "../../ports/clock.ts";
import type { Journal, OwnerToken } from "../../ports/journal.ts";
import type { Kube } from "../../ports/kube.ts";
import type { Talos } from "../../ports/talos.ts";
import type { Logger } from "../../ports/logger.ts";
import type { Verdict } from "../../domain/health/types.ts";
import type { OperationState, Phase, ResponseClass } from "../../domain/operation.ts";
import type { Reason } from "../../domain/reasons.ts";
import type { HealthTarget } from "../../domain/health/types.ts";
import type { Plan, TalosUpgradePlan } from "../../domain/plan/schema.ts";
import type { DispatchAuthority } from "./dispatch_gate.ts";
import type { MachineIdentity } from "../../domain/machine_identity.ts";
import type { OperatingSettings } from "../operating/hold.ts";
import type { OwedPostHooks } from "./step_hooks.ts";
import type { RebootPace } from "./reboot_pace.ts";

/** Purposes of a health round, as the journal records them. */
export type RoundPurpose = "gate" | "verify" | "post-gate" | "preview";

/** A recorded health round's verdict. */
export interface RoundVerdict {
  readonly verdict: Verdict;
  readonly roundId: string;
  readonly reason: Reason;
  readonly message: string;
  /**
   * The round failed, and only on findings about other nodes than its target: it shows nothing
   * about the target itself (`domain/health/round.ts` failsOnlyElsewhere; false without a target).
   */
  readonly failsOnlyElsewhere: boolean;
}

/** Runs one fresh, bounded health round and records it in the journal. */
export interface HealthGate {
  round(
    purpose: RoundPurpose,
    opts: {
      readonly target?: HealthTarget;
      readonly operationId?: string;
      /** Only bindings of these readers (pre-uncordon verification); default all. */
      readonly readers?: readonly string[];
    },
  ): Promise<RoundVerdict>;
}

/** An operation whose recorded state or owner just moved. */
export interface OperationMilestone {
  readonly operationId: string;
  readonly node: string;
  readonly state: OperationState;
}

/**
 * Who watches a rollout's milestones: the reconcile loop re-checks its execution report on each
 * operation milestone, metrics count attempts and rounds. The executor calls it explicitly, right
 * after the journal recorded the fact (never before, never for a refused write); an observer
 * reads, it cannot change what the executor does.
 */
export interface ExecutionObserver {
  /** Committed, a response recorded, a transition, a takeover by this controller. */
  readonly onOperationState?: (m: OperationMilestone) => void;
  /** An attempt's response class was recorded. */
  readonly onAttemptResponse?: (
    a: { readonly phase: Phase; readonly responseClass: ResponseClass },
  ) => void;
  /** A health round was recorded. */
  readonly onHealthRound?: (
    r: { readonly purpose: RoundPurpose; readonly verdict: Verdict },
  ) => void;
  /** A waiting step passed its stall limit (journaled just before); it still waits. */
  readonly onStall?: (
    st: {
      readonly node: string;
      readonly phase: string;
      readonly blocker: string;
      readonly detail: string;
    },
  ) => void;
  /** The next commitment is held (a window, a freeze, a breakpoint); journaled just before. */
  readonly onHold?: (
    h: { readonly node: string; readonly reason: Reason; readonly detail: string },
  ) => void;
}

/** What the phases of a committed step reach the world through. */
export interface PhaseDeps {
  readonly clock: Clock;
  readonly journal: Journal;
  readonly kube: Kube;
  readonly talos: Talos;
  readonly health: HealthGate;
  readonly log: Logger;
  /** This controller's identity (the journal owner). */
  readonly owner: string;
  /**
   * The journal epoch this controller started in, read once when its deps were built. Every
   * issuance of ownership (commit, takeover, hook claim) passes it, so a process that outlived a
   * recovery entry or journal restore is refused (`epoch-superseded`) instead of acting under the
   * new epoch. Absent only for `cairn recover`, whose admin acts in the current epoch by design.
   */
  readonly epoch?: string;
  /** Converts a remaining phase time (clock ms) into a call timeout in wall-clock ms. */
  readonly callTimeoutMs: (remainingMs: number) => number;
  /** How often waits re-observe (drain progress, boot, verification rounds). */
  readonly pollIntervalMs: number;
  /**
   * When the reboot wait polls (reboot_pace.ts): finely around the reboot durations this run has
   * seen; absent: at `pollIntervalMs` throughout.
   */
  readonly rebootPace?: RebootPace;
  /**
   * How a drain waits between eviction passes (engine/drain_run.ts): `events` (pod and budget
   * watches, the poll interval as a backstop) on a real clock; `poll` (default) on virtual time.
   */
  readonly drainWake?: "events" | "poll";
  /** Stops the rollout between steps (SIGTERM). */
  readonly signal?: AbortSignal;
  /** Told of each milestone (reports, metrics); absent: nobody watches. */
  readonly observer?: ExecutionObserver;
  /** Windows, continuations and the rest of what operates beside the plan (docs/operating.md). */
  readonly operating?: OperatingSettings;
}

/** Everything the executor reaches the world through. */
export interface ExecutorDeps extends PhaseDeps {
  /** Required here: a controller always carries the epoch it started in. */
  readonly epoch: string;
  /** Re-checks the plan's authority on current evidence before each node's commitment. */
  readonly authority: DispatchAuthority;
  /**
   * Before each node's step: hands leadership over when the node hosts this replica
   * (`engine/leadership/self_hosting.ts`); absent: cairn does not run on the cluster.
   */
  readonly selfHosting?: SelfHosting;
}

/** A plan bound into the journal, ready to execute (a TalosUpgrade unless said otherwise). */
export interface BoundPlan<P extends Plan = TalosUpgradePlan> {
  readonly plan: P;
  readonly digest: string;
}

/** The state of one node step while it runs. */
export interface StepState<P extends Plan = TalosUpgradePlan> {
  readonly deps: PhaseDeps;
  readonly bound: BoundPlan<P>;
  /** The plan's node name: the Kubernetes Node and the journal's machine. */
  readonly node: string;
  /** The plan's declared address: the `node` target of every Talos call for this step. */
  readonly address: string;
  /**
   * The machine identity the commitment bound; every attempt must observe it again. Absent only
   * for a recovery's read-only step state, which sends nothing.
   */
  readonly committed?: MachineIdentity;
  readonly step: string;
  operationId: string;
  token: OwnerToken;
  /**
   * The post hooks the step owes once its pre hooks were attempted (`step_hooks.ts`), for the kinds
   * that classify where they halt (KubernetesUpgrade, ConfigApply); run before the classification.
   */
  postHooks?: OwedPostHooks;
}
