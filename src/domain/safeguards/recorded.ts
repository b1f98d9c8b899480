import type { Verdict } from "../verdict.ts";
/**
 * The recorded facts the execution rows are judged from, as the judgement needs them. The
 * journal's read model (`ports/journal_history.ts`) satisfies these shapes; the domain declares
 * its own so the judgement stays pure and independent of the port.
 */
import type { InstallerRecord } from "./judge_installer.ts";

export interface RecordedStep {
  readonly step: string;
  readonly machine: string;
  /** The machine identity the plan binds (what each attempt's evidence must show). */
  readonly preDigest: string;
  /** The postcondition the completion observation must show. */
  readonly postDigest: string;
}

export interface RecordedAttempt {
  readonly number: number;
  readonly phase: string;
  readonly evidenceId: string;
  readonly sentAtMs: number;
  readonly transportDeadlineMs: number;
  readonly verificationDeadlineMs: number;
  readonly response: { readonly class: string; readonly atMs: number } | null;
  readonly accountedBy: string | null;
}

export interface RecordedObservation {
  readonly id: string;
  readonly purpose: string;
  readonly basis: number;
  readonly digest: string;
  readonly observedAtMs: number;
  readonly summary: string;
  /** `machine=<uuid> node=<name> address=<addr>` when both sides named one machine. */
  readonly machineIdentity?: string;
}

export interface RecordedPhase {
  readonly phase: string;
  readonly kind: "intent" | "fact";
  readonly atMs: number;
  readonly detail: Readonly<Record<string, unknown>>;
}

export interface RecordedOperation {
  readonly id: string;
  readonly step: string;
  readonly machine: string;
  readonly state: string;
  readonly createdAtMs: number;
  readonly phases: readonly RecordedPhase[];
  readonly attempts: readonly RecordedAttempt[];
  readonly observations: readonly RecordedObservation[];
}

export interface RecordedResult {
  readonly binding: string;
  readonly reader: string | null;
  readonly outcome: Verdict;
  readonly observedAtMs: number;
}

export interface RecordedRound {
  readonly id: string;
  readonly purpose: string;
  readonly operationId: string | null;
  readonly startedAtMs: number;
  readonly finishedAtMs: number;
  readonly verdict: Verdict;
  readonly results: readonly RecordedResult[];
}

export interface RecordedSlot {
  readonly operationId: string;
  readonly machine: string;
  readonly heldFromMs: number;
  readonly releasedAtMs: number | null;
}

/** A dispatch check journaled before the run (node null) or before a node's commitment. */
export interface RecordedDispatch {
  readonly atMs: number;
  readonly node: string | null;
  readonly installers: readonly InstallerRecord[];
  /** A KubernetesUpgrade's check of rows 23–25. */
  readonly kubernetes?: RecordedKubernetesCheck;
}

/** One row's recorded finding in a Kubernetes check. */
export interface RecordedKubernetesRow {
  readonly verdict: "pass" | "refused" | "held";
  readonly evidence: string;
  readonly reasons: readonly string[];
}

/** A KubernetesUpgrade's recorded check (before the rollout: step null; else before a step). */
export interface RecordedKubernetesCheck {
  readonly verdict: "pass" | "refused" | "held";
  readonly step: string | null;
  /** Mutating calls the check's guard refused (-1: not recorded). */
  readonly writes: number;
  readonly uniformOs: RecordedKubernetesRow;
  readonly skew: RecordedKubernetesRow;
  readonly ownership: RecordedKubernetesRow;
}

/** One plan's record. */
export interface RecordedPlan {
  readonly plan: {
    readonly approvedAtMs: number | null;
    readonly steps: readonly RecordedStep[];
    /** The plan kind (absent: judged as a TalosUpgrade). */
    readonly kind?: string;
  };
  readonly operations: readonly RecordedOperation[];
  readonly healthRounds: readonly RecordedRound[];
  readonly slot: readonly RecordedSlot[];
  readonly dispatchChecks: readonly RecordedDispatch[];
}
