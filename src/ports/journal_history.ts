/**
 * Typed read models of the journal: what reports and status read about one plan, as types,
 * instead of tables and column names. The journal adapter assembles them from its tables and
 * its hash-chained timeline; `cairn journal export` keeps the raw tables for people and tools.
 * Times are epoch ms as recorded (never re-read from a clock).
 */
import type { OperationState, Phase, ResponseClass } from "../domain/operation.ts";
import type { ObservationPurpose, PlanState, StepBinding } from "./journal.ts";
import type { Verdict } from "../domain/verdict.ts";

/** The plan record as bound in the journal. */
export interface PlanEntry {
  readonly digest: string;
  readonly name: string;
  readonly kind: string;
  readonly cluster: string;
  readonly state: PlanState;
  readonly approvedAtMs: number | null;
  readonly firstSeenAtMs: number;
  readonly firstSeenCommit: string;
  readonly expiresAtMs: number;
  /** Plan order: one step per machine, with the identity and postcondition it binds. */
  readonly steps: readonly StepBinding[];
}

/** A phase intent (before a mutation) or fact (what was seen after). */
export interface PhaseEntry {
  readonly phase: Phase;
  readonly kind: "intent" | "fact";
  readonly atMs: number;
  readonly revision: number;
  /** The structured detail recorded with it (parsed; `{}` when it was not an object). */
  readonly detail: Readonly<Record<string, unknown>>;
}

/** A response to an attempt. */
export interface ResponseEntry {
  readonly class: ResponseClass;
  /** Target code or transport error, already redacted. */
  readonly detail: string;
  readonly atMs: number;
}

/** One external mutation attempt and its accounting. */
export interface AttemptEntry {
  readonly id: string;
  readonly number: number;
  readonly phase: Phase;
  readonly route: string;
  /** The identity observation the attempt transaction admitted it on. */
  readonly evidenceId: string;
  readonly sentAtMs: number;
  readonly transportDeadlineMs: number;
  readonly verificationDeadlineMs: number;
  readonly response: ResponseEntry | null;
  readonly accountedBy: "response" | "recovery" | null;
}

/** A machine read recorded for the plan (identity evidence, completion, recovery, drift). */
export interface ObservationEntry {
  readonly id: string;
  readonly purpose: ObservationPurpose;
  /** Absent for evidence read before the operation existed (the commitment's evidence). */
  readonly operationId: string | null;
  readonly basis: number;
  readonly revision: number;
  /** Digest of the bound values observed. */
  readonly digest: string;
  readonly objectUid: string;
  readonly resourceVersion: string;
  readonly observedAtMs: number;
  readonly summary: string;
  /**
   * Evidence reads: the machine both sides named (`machine=<uuid> node=<name> address=<addr>`);
   * absent when the read did not identify the machine or predates journal schema 4.
   */
  readonly machineIdentity?: string;
}

/** A state move of an operation, from the timeline. */
export interface TransitionEntry {
  readonly seq: number;
  readonly atMs: number;
  readonly from: string;
  readonly to: string;
  /** `<ReasonCode>: <detail>` from the executor, or the journal's own reason. */
  readonly reason: string;
}

/** A takeover of an operation (a new owner generation), from the timeline. */
export interface TakeoverEntry {
  readonly seq: number;
  readonly atMs: number;
  /** `owner/gen@epoch` before and after. */
  readonly from: string;
  readonly to: string;
  readonly stateAfter: string;
}

/** A recovery-admin decision or a cancellation. */
export interface RecoveryEntry {
  readonly kind: string;
  readonly actor: string;
  readonly evidence: string;
  readonly explanation: string | null;
  readonly atMs: number;
}

/** Everything recorded about one operation. */
export interface OperationHistory {
  readonly id: string;
  readonly step: string;
  readonly machine: string;
  readonly state: OperationState;
  readonly createdAtMs: number;
  /** When the current owner took it (its commitment, or the last takeover). */
  readonly ownerSinceMs: number;
  readonly phases: readonly PhaseEntry[];
  /** By attempt number. */
  readonly attempts: readonly AttemptEntry[];
  /** Observations of this plan on this machine, by basis (including pre-commitment evidence). */
  readonly observations: readonly ObservationEntry[];
  /** By timeline order. */
  readonly transitions: readonly TransitionEntry[];
  /** By timeline order. */
  readonly takeovers: readonly TakeoverEntry[];
  readonly recoveries: readonly RecoveryEntry[];
}

/** One bound health check's recorded result (one row per basis object). */
export interface HealthResultEntry {
  readonly binding: string;
  /**
   * The reader that produced it (`pdb-feasibility`, `workloads`, `kube-object <group/version>
   * <Kind>`, …); null in journals written before readers were recorded.
   */
  readonly reader: string | null;
  readonly outcome: Verdict;
  readonly reason: string;
  readonly objectUid: string | null;
  /** `Kind namespace/name` of the object read; null in journals written before it was recorded. */
  readonly objectRef: string | null;
  readonly resourceVersion: string | null;
  readonly observedAtMs: number;
}

/** One bounded health round with its results. */
export interface HealthRoundEntry {
  readonly id: string;
  readonly purpose: "gate" | "verify" | "post-gate" | "preview";
  /** Null for cluster gate rounds taken before a commitment. */
  readonly operationId: string | null;
  readonly startedAtMs: number;
  readonly finishedAtMs: number;
  readonly verdict: Verdict;
  readonly results: readonly HealthResultEntry[];
}

/** A commitment or attempt the journal refused, with ER's comparison and cause. */
export interface RefusalEntry {
  readonly seq: number;
  readonly atMs: number;
  readonly transaction: string;
  readonly comparison: number | null;
  readonly cause: string;
  readonly detail: string;
  readonly step: string | null;
  readonly operationId: string | null;
}

/** A pinned-evidence check chained for the plan. */
export interface EvidenceCheckEntry {
  readonly seq: number;
  readonly atMs: number;
  readonly manifestPath: string;
  readonly manifestSha256: string;
  readonly verdict: Verdict;
  readonly detail: Readonly<Record<string, unknown>>;
}

/** One hop's installer resolution recorded by a dispatch check. */
export interface InstallerResolutionEntry {
  readonly hop: number;
  readonly reference: string;
  /** The digest the plan pins. */
  readonly pinned: string;
  /** `os/architecture`. */
  readonly platform: string;
  /** `pass`, `fail`, `unreadable` or `not-evaluated`. */
  readonly verdict: string;
  readonly reason: string | null;
  /** What the registry answered with (null when it did not answer). */
  readonly digest: string | null;
  readonly indexDigest: string | null;
  readonly registry: string | null;
}

/** A dispatch check journaled for the plan (before the run, or before a node's commitment). */
export interface DispatchCheckEntry {
  readonly seq: number;
  readonly atMs: number;
  /** The node whose commitment it authorised; null for the plan-level check. */
  readonly node: string | null;
  readonly verdict: "pass" | "refused" | "held";
  readonly installers: readonly InstallerResolutionEntry[];
  /** A KubernetesUpgrade's check of rows 23–25 (engine/k8s_upgrade/preflight_check.ts). */
  readonly kubernetes?: KubernetesCheckEntry;
}

/** One row's finding in a Kubernetes check, as recorded. */
export interface KubernetesRowEntry {
  readonly verdict: "pass" | "refused" | "held";
  readonly evidence: string;
  readonly reasons: readonly string[];
}

/** A KubernetesUpgrade's recorded check: per row, the writes the guard refused, the step. */
export interface KubernetesCheckEntry {
  readonly verdict: "pass" | "refused" | "held";
  /** The step key it authorised; null before the rollout. */
  readonly step: string | null;
  readonly writes: number;
  readonly uniformOs: KubernetesRowEntry;
  readonly skew: KubernetesRowEntry;
  readonly ownership: KubernetesRowEntry;
}

/**
 * When an operation held its cluster's rollout slot: from its commitment until the first
 * recorded move to a state that holds no scope (null while it still holds it).
 */
export interface SlotHolding {
  readonly operationId: string;
  readonly planDigest: string;
  readonly machine: string;
  readonly heldFromMs: number;
  readonly releasedAtMs: number | null;
}

/** A hold, resume, stall, silence or notification recorded beside the plan's steps. */
/** A post hook a step owed, with what became of it (adapters/journal/hook_obligations.ts). */
export interface HookObligationEntry {
  readonly operationId: string;
  readonly node: string;
  readonly hook: string;
  readonly state: "owed" | "claimed" | "discharged" | "sent-in-step";
  readonly owedAtMs: number;
  readonly namespace: string;
  readonly job: Readonly<Record<string, unknown>>;
  readonly timeoutSeconds: number;
  readonly claimedAtMs?: number;
  readonly claimedBy?: string;
  readonly dischargedAtMs?: number;
  readonly outcome?: string;
  readonly detail?: string;
  readonly jobRef?: string;
}

export interface RolloutEventEntry {
  readonly seq: number;
  readonly atMs: number;
  readonly node: string | null;
  readonly kind: string;
  readonly actor: string;
  readonly detail: Readonly<Record<string, unknown>>;
}

/** A cluster's freeze as last recorded. */
export interface ClusterFreezeEntry {
  readonly cluster: string;
  readonly frozen: boolean;
  readonly reason: string;
  readonly actor: string;
  readonly atMs: number;
  readonly seq: number;
}

/** What the journal holds about one plan. */
/**
 * A recovery-mode entry the journal recorded since the plan was first seen (a journal restore's:
 * a new epoch, every live operation taken over, the plan's approval stale from then on).
 */
export interface RecoveryEntryEntry {
  readonly seq: number;
  readonly atMs: number;
  readonly epoch: string;
  readonly actor: string;
  /** What the recovery admin recorded with it (the restored backup). */
  readonly evidence: string;
}

export interface PlanHistory {
  readonly plan: PlanEntry;
  /** The plan's operations, by commitment time. */
  readonly operations: readonly OperationHistory[];
  /** Rounds of the plan's operations and the cluster's gate rounds since the plan was seen. */
  readonly healthRounds: readonly HealthRoundEntry[];
  readonly refusals: readonly RefusalEntry[];
  readonly evidenceChecks: readonly EvidenceCheckEntry[];
  /** Dispatch checks of the plan, in timeline order (with their installer resolutions). */
  readonly dispatchChecks: readonly DispatchCheckEntry[];
  /** Every slot holding on the plan's cluster (all plans), by commitment time. */
  readonly slot: readonly SlotHolding[];
  /** Holds, resumes, stalls, silences and notifications of the plan, in timeline order. */
  readonly rolloutEvents?: readonly RolloutEventEntry[];
  /** Post hooks the plan's steps owed (docs/operating.md#node-hooks). */
  readonly hookObligations?: readonly HookObligationEntry[];
  /** Recovery-mode entries since the plan was first seen (a journal restore). */
  readonly recoveryEntries?: readonly RecoveryEntryEntry[];
}

/** A plan name and the digest the journal bound it to (a later file under it is refused). */
export interface NameBinding {
  readonly name: string;
  readonly digest: string;
}

/** The journal's read side for reports and status. */
export interface JournalHistory {
  /** The plan's history; undefined when no plan with that digest was recorded. */
  planHistory(digest: string): Promise<PlanHistory | undefined>;
  /** Every recorded plan, by first sighting. */
  listPlans(): Promise<PlanEntry[]>;
  /** Every name → digest binding. */
  nameBindings(): Promise<NameBinding[]>;
  /** Machines whose scope gate is frozen now. */
  frozenMachines(): Promise<string[]>;
  /** The cluster's last freeze or unfreeze; undefined when it was never frozen. */
  clusterFreeze(cluster: string): Promise<ClusterFreezeEntry | undefined>;
  /** Every observation of `machine` (all plans and purposes), by basis: the settle floor's reads. */
  machineObservations(machine: string): Promise<ObservationEntry[]>;
}
