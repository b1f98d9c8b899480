/**
 * The journal: cairn's durable record of plans, operations, attempts and evidence. The store,
 * not its callers, enforces ER's rules (operation-model.md): every transition is checked against
 * the table, commitments and attempts run their comparisons inside one transaction, fenced
 * updates check owner, generation and epoch inside the `UPDATE`, and every refusal is recorded.
 *
 * Times are numbers (ms since the Unix epoch) from the caller's Clock. Failures the caller can
 * act on come back as values (`Refused`); misuse (unknown ids, stale owner, illegal transition)
 * throws `CairnError` with a stable reason.
 */
import type {
  CancelGround,
  Comparison,
  OperationState,
  Phase,
  PostconditionReading,
  RefusalCause,
  ResponseClass,
} from "../domain/operation.ts";
import type { IdSource } from "./clock.ts";
import type { HookObligationEntry, JournalHistory } from "./journal_history.ts";
import type { Verdict } from "../domain/verdict.ts";

/** Who acted: a controller instance or a human with a role. */
export interface Actor {
  readonly identity: string;
  readonly role: "controller" | "author" | "approver" | "recovery-admin";
}

/** The fencing token an owner presents: compared inside the conditional `UPDATE`. */
export interface OwnerToken {
  readonly owner: string;
  readonly gen: number;
  readonly epoch: string;
}

/**
 * What one plan step binds for one machine (carried by the plan record, never by callers later).
 */
export interface StepBinding {
  /** Stable step key inside the plan, e.g. `worker-1/0`. */
  readonly step: string;
  readonly machine: string;
  /** Digest the machine must show before a send (e.g. of its running version and schematic). */
  readonly preDigest: string;
  /** Digest the completion observation must show. */
  readonly postDigest: string;
}

/** A plan seen on the watched branch. Identity is the SHA-256 of `bytes`. */
export interface PlanRecordInput {
  readonly digest: string;
  readonly name: string;
  readonly kind: string;
  readonly cluster: string;
  readonly bytes: string;
  readonly signatures: string;
  readonly firstSeenCommit: string;
  readonly expiresAtMs: number;
  readonly maxAttempts: number;
  /** Maximum age of pre-dispatch evidence. */
  readonly maxEvidenceAgeMs: number;
  readonly steps: readonly StepBinding[];
  readonly nowMs: number;
}

/** Plan states (docs/operation-model.md#plan-states). */
export type PlanState = "proposed" | "approved" | "committed" | "revoked" | "cancelled" | "expired";

/** A stored plan. */
export interface PlanRecord {
  readonly digest: string;
  readonly name: string;
  readonly kind: string;
  readonly cluster: string;
  readonly state: PlanState;
  readonly approvalEpoch: string | null;
  readonly approvedAtMs: number | null;
  readonly expiresAtMs: number;
  readonly maxAttempts: number;
  readonly maxEvidenceAgeMs: number;
  readonly firstSeenCommit: string;
  readonly firstSeenAtMs: number;
  readonly bytes: string;
  readonly signatures: string;
  readonly steps: readonly StepBinding[];
}

/** An operation row. */
export interface OperationRecord {
  readonly id: string;
  readonly planDigest: string;
  readonly step: string;
  readonly machine: string;
  readonly cluster: string;
  readonly state: OperationState;
  readonly owner: string;
  readonly ownerGen: number;
  readonly ownerEpoch: string;
  readonly attemptsUsed: number;
  /** Machine revision of the last safe-to-retry classification, if any. */
  readonly safeRetryRevision: number | null;
  readonly createdAtMs: number;
}

/** A refusal of a commitment or attempt, already recorded on the timeline. */
export interface Refused {
  readonly ok: false;
  readonly comparison: Comparison;
  readonly cause: RefusalCause;
  readonly detail: string;
}

/** Input to the commitment transaction (docs/operation-model.md#comparisons, 0–6). */
export interface CommitInput {
  readonly planDigest: string;
  readonly step: string;
  /** Observation with purpose `evidence` recorded for this plan and machine. */
  readonly evidenceId: string;
  /** The committing controller; its epoch must be current. */
  readonly owner: string;
  readonly epoch: string;
  readonly nowMs: number;
}

/** Input to the attempt transaction (comparisons 1–3, 6–9). */
export interface AttemptInput {
  readonly operationId: string;
  readonly token: OwnerToken;
  readonly phase: Phase;
  /** SHA-256 of the exact request that will be sent. */
  readonly requestDigest: string;
  readonly route: string;
  readonly evidenceId: string;
  /** Absolute deadlines; transport ≤ verification. */
  readonly transportDeadlineMs: number;
  readonly verificationDeadlineMs: number;
  readonly nowMs: number;
}

/** A recorded attempt. */
export interface AttemptRecord {
  readonly id: string;
  readonly operationId: string;
  readonly number: number;
  readonly phase: Phase;
  readonly requestDigest: string;
  readonly route: string;
  readonly ownerGen: number;
  readonly ownerEpoch: string;
  readonly evidenceId: string;
  readonly sentAtMs: number;
  readonly transportDeadlineMs: number;
  readonly verificationDeadlineMs: number;
  readonly classRevision: number | null;
  readonly responseClass: ResponseClass | null;
  readonly accountedBy: "response" | "recovery" | null;
  /** Machine revision at which the attempt was accounted. */
  readonly accountedRevision: number | null;
}

/** Purpose of an observation. */
export type ObservationPurpose = "evidence" | "completion" | "recovery" | "health" | "drift";

/** A machine read. `basis` orders it against everything else on the machine's timeline. */
export interface ObservationInput {
  readonly machine: string;
  readonly purpose: ObservationPurpose;
  readonly planDigest?: string;
  readonly operationId?: string;
  /** Basis from `startObservation`, taken before the remote read; omitted = allocate now. */
  readonly basis?: number;
  /** Digest of the bound values observed (version, schematic, config). */
  readonly digest: string;
  readonly objectUid: string;
  readonly resourceVersion: string;
  /** resourceVersion read at the start of a settle window (recovery observations). */
  readonly resourceVersionAtStart?: string;
  readonly observedGeneration: number;
  readonly observedAtMs: number;
  readonly summary: string;
  /**
   * Completion reads: what was established about the bound postconditions. A completion
   * observation without it can neither complete nor fail an operation.
   */
  readonly postcondition?: PostconditionReading;
  /**
   * Evidence reads: the machine observed on both sides, as `machine=<uuid> node=<name>
   * address=<addr>` (`domain/machine_identity.ts` identityRecord). The commitment's evidence
   * carries the identity every later attempt must observe again.
   */
  readonly machineIdentity?: string;
  readonly actor: Actor;
  /**
   * The journal epoch the writer started in: refused (`EpochSuperseded`, nothing written) unless
   * it is still the journal's. A controller's acts carry it, so one fenced by a recovery entry or
   * a journal restore records nothing after it; `cairn recover` acts in the current epoch.
   */
  readonly epoch?: string;
}

/** A stored observation. */
export interface ObservationRecord extends Omit<ObservationInput, "actor" | "basis" | "epoch"> {
  readonly id: string;
  readonly basis: number;
  readonly revision: number;
}

/** Input to record a response to an attempt; fenced by the owner token. */
export interface ResponseInput {
  readonly attemptId: string;
  readonly token: OwnerToken;
  readonly responseClass: ResponseClass;
  /** Target code or transport error, already redacted. */
  readonly detail: string;
  readonly nowMs: number;
}

/** A phase intent (before) or fact (after), fenced by the owner token. */
/**
 * A recovery-admin's mutation attempt (docs/recovery.md#the-decisions-of-cairn-recover): admitted
 * on the recovery decision it executes, under the recovery-admin's own takeover, in the current
 * epoch. The caller may send only after `ok`.
 */
export interface RecoveryAttemptInput {
  readonly operationId: string;
  /** The recovery-admin's takeover token: it must still own the operation in the current epoch. */
  readonly token: OwnerToken;
  readonly actor: Actor;
  /** The plan's recovery action this attempt executes, e.g. `uncordonOwnedCordon`. */
  readonly decision: string;
  readonly phase: Phase;
  readonly requestDigest: string;
  readonly route: string;
  /** The fresh evidence the decision was taken on (for an uncordon: the cordon ownership read). */
  readonly evidence: Readonly<Record<string, unknown>>;
  readonly nowMs: number;
}

/** The response to a recovery attempt, recorded whatever it is. */
export interface RecoveryResponseInput {
  readonly attemptId: string;
  readonly token: OwnerToken;
  readonly responseClass: ResponseClass;
  /** Target code or transport error, already redacted. */
  readonly detail: string;
  readonly nowMs: number;
}

export interface PhaseInput {
  readonly operationId: string;
  readonly token: OwnerToken;
  readonly phase: Phase;
  readonly kind: "intent" | "fact";
  /** Structured detail, e.g. `{alreadyUnschedulable: false, resourceVersion: "41"}`. */
  readonly detail: Readonly<Record<string, unknown>>;
  readonly nowMs: number;
}

/** One bound health check's result. */
export interface HealthResultInput {
  readonly binding: string;
  /**
   * The reader that produced the result (its kind, and for `kube-object` the selected
   * group/version and kind), so reports map it to the safeguard row it evaluates.
   */
  readonly reader?: string;
  readonly outcome: Verdict;
  readonly reason: string;
  readonly objectUid?: string;
  /** `Kind namespace/name` (or `Kind name` when cluster-scoped) of the object read. */
  readonly objectRef?: string;
  readonly resourceVersion?: string;
  readonly observedAtMs: number;
}

/** One bounded health round. */
export interface HealthRoundInput {
  readonly cluster: string;
  readonly operationId?: string;
  readonly purpose: "gate" | "verify" | "post-gate" | "preview";
  readonly startedAtMs: number;
  readonly finishedAtMs: number;
  readonly results: readonly HealthResultInput[];
  /**
   * The journal epoch the writer started in: refused (`EpochSuperseded`, nothing written) unless
   * it is still the journal's. A controller's acts carry it, so one fenced by a recovery entry or
   * a journal restore records nothing after it; `cairn recover` acts in the current epoch.
   */
  readonly epoch?: string;
}

/**
 * A pinned-evidence check (source hashes, call-path assertions, must-fail controls) as the plan's
 * evidence for review. It is a plan-level fact, not a machine observation, so it never takes part
 * in ER's per-machine comparisons; it is chained so a report can cite it.
 */
export interface EvidenceCheckInput {
  readonly planDigest: string;
  readonly manifestPath: string;
  readonly manifestSha256: string;
  readonly verdict: Verdict;
  /** Per-tuple and per-assertion verdicts, already free of secret-looking content. */
  readonly detail: Readonly<Record<string, unknown>>;
  readonly actor: Actor;
  readonly nowMs: number;
}

/**
 * The dispatch check's result (engine/authorize): every authorising check re-run on current
 * evidence right before a plan starts or a node's commitment. A plan-level fact on the hash-chained
 * timeline (`dispatch-check` events), recorded whether it passed, refused or held; the plan need not
 * be bound yet (a refused plan never is). `detail` carries each check's verdict and the installer
 * resolutions (the report's installer row judges them from here).
 */
export interface DispatchCheckInput {
  readonly planDigest: string;
  /** The node whose commitment it authorises; null for the plan-level check before a run. */
  readonly node: string | null;
  readonly verdict: "pass" | "refused" | "held";
  readonly detail: Readonly<Record<string, unknown>>;
  readonly actor: Actor;
  readonly nowMs: number;
  /**
   * The journal epoch the writer started in: refused (`EpochSuperseded`, nothing written) unless
   * it is still the journal's. A controller's acts carry it, so one fenced by a recovery entry or
   * a journal restore records nothing after it; `cairn recover` acts in the current epoch.
   */
  readonly epoch?: string;
}

/**
 * What happened beside a plan's node steps (docs/operating.md): a hold before a commitment (a
 * closed window, a freeze, a breakpoint) and its end, a stall noticed while a step waits, a
 * silence created or expired, a notification sent. A plan-level fact on the hash-chained timeline
 * (`rollout-event` events); it moves no operation.
 */
export interface RolloutEventInput {
  readonly planDigest: string;
  /** The node it concerns (the one about to be committed, or whose step it is). */
  readonly node: string | null;
  readonly kind: RolloutEventKind;
  /** Structured detail: a reason code, the next window, the blocker, the silence id… */
  readonly detail: Readonly<Record<string, unknown>>;
  readonly actor: Actor;
  readonly nowMs: number;
  /**
   * The journal epoch the writer started in: the event is refused (`EpochSuperseded`) unless it
   * is still the journal's. A controller's fact (a ComponentUpgrade's end) carries it, so a
   * controller fenced by a recovery entry or a journal restore records none after it.
   */
  readonly epoch?: string;
}

/** The kinds of {@link RolloutEventInput}. */
export type RolloutEventKind =
  | "hold"
  | "resume"
  | "stall"
  | "silence-created"
  | "silence-renewed"
  | "silence-expired"
  | "notification"
  /** A ComponentUpgrade's observation ended; `detail.outcome` is what it observed. */
  | "component-end";

/**
 * A post hook owed by a step (docs/operating.md#node-hooks), recorded before its pre hook's
 * attempt: the post hook's Job exactly as it will be created, and both stages' request digests
 * (the journal tells from its attempts whether the pre hook went out and the post hook did not).
 */
export interface HookOwedInput {
  readonly operationId: string;
  readonly token: OwnerToken;
  readonly hook: string;
  readonly namespace: string;
  readonly job: Readonly<Record<string, unknown>>;
  readonly timeoutSeconds: number;
  readonly preRequestDigest: string;
  readonly postRequestDigest: string;
  readonly nowMs: number;
}

/** Asks to send an owed post hook once its operation is settled. */
export interface HookClaimInput {
  readonly operationId: string;
  readonly hook: string;
  /** The claiming controller (`tokenText`-like, for the timeline). */
  readonly claimant: string;
  readonly epoch: string;
  readonly nowMs: number;
}

/** The claim's answer: the Job to create, or why nothing may be sent. */
export type HookClaimResult =
  | {
    readonly ok: true;
    readonly claimId: string;
    readonly namespace: string;
    readonly job: Readonly<Record<string, unknown>>;
    readonly timeoutSeconds: number;
  }
  | {
    readonly ok: false;
    readonly cause:
      | "not-owed"
      | "scope-held"
      | "epoch-superseded"
      /** The operation's own machine is frozen (its scope gate, comparison 6). */
      | "machine-frozen"
      /** The whole cluster is frozen (`cairn freeze`). */
      | "cluster-frozen"
      | "gate-recovery";
    readonly detail: string;
  };

/** How a claimed post hook went. */
export interface HookDischargeInput {
  readonly operationId: string;
  readonly hook: string;
  readonly claimId: string;
  readonly claimant: string;
  readonly responseClass: ResponseClass;
  readonly outcome: "succeeded" | "failed" | "unresolved";
  readonly jobRef: string;
  readonly detail: string;
  readonly nowMs: number;
  /**
   * The epoch the claim was made in: refused (`EpochSuperseded`, nothing written) unless it is
   * still current, so a controller that outlived a journal restore records no discharge after it.
   */
  readonly epoch?: string;
}

/** A cluster-wide freeze as recorded (`cairn freeze` / `cairn unfreeze`). */
export interface ClusterFreezeInput {
  readonly cluster: string;
  readonly frozen: boolean;
  /** Why, in the actor's words (required to freeze). */
  readonly reason: string;
  readonly actor: Actor;
  readonly nowMs: number;
}

/**
 * A recovery-admin accounting decision (docs/operation-model.md#accounting-and-the-settle-floor).
 */
export interface RecoveryDecisionInput {
  readonly attemptId: string;
  readonly actor: Actor;
  /** A recovery observation taken after the settle floor. */
  readonly observationId: string;
  /** When the executor was stopped, if it was stopped rather than taken over. */
  readonly executorStoppedAtMs?: number;
  /** Deployment setting held outside the journal; at least 30 s. */
  readonly settleFloorMs: number;
  /** Required when the resourceVersion changed during the settle. */
  readonly explanation?: string;
  readonly evidence: string;
  readonly nowMs: number;
}

/** Input to a fenced, evidence-determined transition. */
export interface TransitionInput {
  readonly operationId: string;
  readonly token: OwnerToken;
  readonly to: "verifying" | "completed" | "failed" | "unresolved" | "rejected";
  /** Completion observation for `completed`/`failed`. */
  readonly observationId?: string;
  readonly reason: string;
  readonly nowMs: number;
}

/** A fresh reading of an unaccounted attempt's effect, as a resume classifies it. */
export interface AttemptReading {
  readonly attemptId: string;
  readonly outcome: "observed-in-effect" | "observed-absent" | "observed-incomplete";
  /** What was read (resourceVersions, owners, the pods still on the node), kept on the timeline. */
  readonly evidence: Readonly<Record<string, unknown>>;
}

/**
 * A resume of an operation this controller took over in flight (docs/recovery.md#resume-after-a-takeover):
 * every earlier owner's unaccounted attempt classified from a fresh reading, then the operation
 * classified for continuing the step.
 */
export interface ResumeInput {
  readonly operationId: string;
  readonly token: OwnerToken;
  readonly readings: readonly AttemptReading[];
  readonly nowMs: number;
}

/** Input to a takeover: one conditional `UPDATE`. */
export interface TakeoverInput {
  readonly operationId: string;
  readonly newOwner: string;
  /** The generation the caller saw; a concurrent takeover of it elects one winner. */
  readonly seenGen: number;
  readonly epoch: string;
  readonly actor: Actor;
  readonly nowMs: number;
}

/** One row of the hash-chained event timeline. */
export interface JournalEvent {
  readonly seq: number;
  readonly atMs: number;
  readonly kind: string;
  readonly machine: string | null;
  readonly revision: number | null;
  readonly operationId: string | null;
  readonly epoch: string;
  readonly actor: string;
  readonly body: string;
  readonly prevHash: string;
  readonly hash: string;
}

/** Result of recomputing the hash chain. */
export type ChainCheck =
  | { readonly ok: true; readonly rows: number; readonly head: string }
  | { readonly ok: false; readonly seq: number; readonly why: string };

/** Everything about one operation. */
export interface OperationDetail {
  readonly operation: OperationRecord;
  readonly attempts: readonly AttemptRecord[];
  readonly phases: ReadonlyArray<{ phase: Phase; kind: string; atMs: number; detail: string }>;
  readonly events: readonly JournalEvent[];
}

/** The journal port; its typed read side for reports and status is `JournalHistory`. */
export interface Journal extends JournalHistory {
  /** The current epoch and whether the installation is in recovery mode. */
  installation(): Promise<{ epoch: string; recoveryMode: boolean; schemaVersion: number }>;

  /**
   * Stores a plan and binds name → digest; a different digest under a bound name throws
   * `PlanChangedAfterApproval`.
   */
  recordPlan(input: PlanRecordInput): Promise<PlanRecord>;
  /** Approves a plan in the current epoch. */
  approvePlan(digest: string, actor: Actor, nowMs: number): Promise<void>;
  /** Ends a plan's authority (`revoked` or `cancelled`). */
  endPlan(digest: string, to: "revoked" | "cancelled", actor: Actor, nowMs: number): Promise<void>;
  getPlan(digest: string): Promise<PlanRecord | undefined>;

  /** Records a hold, resume, stall, silence or notification beside a plan's steps. */
  recordRolloutEvent(input: RolloutEventInput): Promise<number>;
  /**
   * Freezes or unfreezes a whole cluster: no new commitment on it while frozen (the commitment
   * transaction refuses too, comparison 6). Anyone but automation may freeze; only an approver
   * unfreezes.
   */
  setClusterFrozen(input: ClusterFreezeInput): Promise<void>;

  /** Records a post hook owed by a step, before its pre hook's attempt (fenced by the token). */
  recordHookOwed(input: HookOwedInput): Promise<void>;
  /** Admits exactly one controller to send an owed post hook, once its operation is terminal. */
  claimOwedHook(input: HookClaimInput): Promise<HookClaimResult>;
  /** Records the outcome of a claimed post hook. */
  recordHookDischarge(input: HookDischargeInput): Promise<void>;
  /** The post hook obligations of these operations, with what became of each. */
  hookObligations(operationIds: readonly string[]): Promise<HookObligationEntry[]>;

  /** Freezes or unfreezes a machine's scope gate. */
  setFrozen(machine: string, frozen: boolean, actor: Actor, nowMs: number): Promise<void>;

  /**
   * Allocates an observation basis before a remote read ("observation started"); `epoch` as in
   * {@link ObservationInput}.
   */
  startObservation(machine: string, actor: Actor, nowMs: number, epoch?: string): Promise<number>;
  /**
   * Records an observation; its revision comes from the machine counter in the same transaction.
   */
  recordObservation(input: ObservationInput): Promise<ObservationRecord>;

  /** The commitment transaction: creates the operation `committed`, generation 1. */
  commit(input: CommitInput): Promise<{ ok: true; operation: OperationRecord } | Refused>;
  /** The attempt transaction: the caller may send only after `ok`. */
  beginAttempt(input: AttemptInput): Promise<{ ok: true; attempt: AttemptRecord } | Refused>;
  /** Records the outcome of an attempt and applies the state move it forces. */
  recordResponse(input: ResponseInput): Promise<OperationRecord>;
  /** A recovery-admin's attempt transaction: the caller may send only after `ok`. */
  beginRecoveryAttempt(
    input: RecoveryAttemptInput,
  ): Promise<{ ok: true; attempt: { readonly id: string } } | Refused>;
  /** Records the response to a recovery attempt. */
  recordRecoveryResponse(input: RecoveryResponseInput): Promise<void>;
  /** Records a phase intent or fact. */
  recordPhase(input: PhaseInput): Promise<void>;
  /** Records a health round and its results; returns the round id. */
  recordHealthRound(input: HealthRoundInput): Promise<string>;
  /** Records the result of a pinned-evidence check for a plan on the hash-chained timeline. */
  recordEvidenceCheck(input: EvidenceCheckInput): Promise<number>;
  /** Records a dispatch check (pass, refusal or hold) on the hash-chained timeline. */
  recordDispatchCheck(input: DispatchCheckInput): Promise<number>;

  /** An evidence-determined transition, guarded by the evidence the store holds. */
  transition(input: TransitionInput): Promise<OperationRecord>;
  /**
   * Classifies an `unresolved` operation safe to retry (docs/operation-model.md#classification)
   * on a pre-dispatch observation.
   */
  classifySafeToRetry(
    operationId: string,
    token: OwnerToken,
    observationId: string,
    nowMs: number,
  ): Promise<OperationRecord>;
  /**
   * Resumes an operation taken over in flight: records each reading as the attempt's accounting
   * (only for phases in `OBSERVABLE_PHASES`, only for an earlier owner's attempts), then classifies
   * the `unresolved` operation so that the step's next attempt transaction may admit it. Refused
   * (`ResumeRefused`) unless the operation became `unresolved` by a controller's takeover, every
   * other attempt was accepted, authority is valid and the gate open.
   */
  resumeAfterTakeover(input: ResumeInput): Promise<OperationRecord>;
  /** Takeover: generation + 1, in-flight → `unresolved`; false when another takeover won. */
  takeOver(input: TakeoverInput): Promise<{ ok: true; operation: OperationRecord } | { ok: false }>;
  /** A recovery-admin accounting decision for an unaccounted attempt. */
  recordRecoveryDecision(input: RecoveryDecisionInput): Promise<void>;
  /**
   * No-attempt cancellation (docs/operation-model.md#no-attempt-cancellation):
   * committed/unresolved → cancelled, releasing the scope.
   */
  cancelNoAttempt(
    operationId: string,
    ground: CancelGround,
    actor: Actor,
    nowMs: number,
  ): Promise<OperationRecord>;
  /** Recovery-mode entry: new epoch, gates closed, every live operation taken over. */
  enterRecoveryMode(actor: Actor, evidence: string, nowMs: number): Promise<string>;
  /** Releases one machine scope in recovery mode, in the current epoch. */
  releaseRecoveryScope(machine: string, actor: Actor, nowMs: number): Promise<void>;
  /** Leaves recovery mode; refused while any scope is not released. */
  exitRecoveryMode(actor: Actor, nowMs: number): Promise<void>;

  getOperation(id: string): Promise<OperationRecord | undefined>;
  listOperations(): Promise<OperationRecord[]>;
  showOperation(id: string): Promise<OperationDetail | undefined>;
  events(afterSeq?: number): Promise<JournalEvent[]>;
  /** Recomputes the hash chain from the first row. */
  verifyChain(): Promise<ChainCheck>;
  /** Every table as plain rows, for `cairn journal export` only: reports read `planHistory`. */
  exportAll(): Promise<Record<string, unknown[]>>;
  close(): Promise<void>;
}

/** Options to open a journal. */
export interface OpenJournalOptions {
  /** `file:…`, `:memory:`, `libsql://…`, `http(s)://…` or `postgres://…`. */
  readonly url: string;
  /** Mints epochs and record ids (`ep_…`, `op_…`, `att_…`). */
  readonly ids: IdSource;
  /** Time of journal creation (the first epoch's `at`). */
  readonly nowMs: number;
  /** Apply pending migrations (default true); false refuses an unmigrated journal. */
  readonly migrate?: boolean;
  /**
   * Called at every write point inside a transaction (crash tests stop the process there).
   * Production leaves it unset.
   */
  readonly writePoint?: (name: string) => Promise<void>;
}
