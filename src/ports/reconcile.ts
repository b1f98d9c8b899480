/**
 * What the reconcile loop reaches beyond Git and the journal: the executor of one approved plan,
 * the report renderer, the trust root, the wake-up source (poll timer, webhook, stop) and the
 * metrics it feeds. The composition root (`src/app/reconcile_wiring.ts`) provides each.
 */
import type { BranchReview } from "../domain/review/model.ts";
import type { ComponentOutcome } from "../domain/component/outcome.ts";
import type { Problem } from "../domain/errors.ts";
import type { SourceProvenance } from "../domain/evidence/provenance.ts";
import type { EvidenceOutcome } from "../domain/evidence/result.ts";
import type { InstallerRecord } from "../domain/safeguards/judge_installer.ts";
import type { OperationState, RolloutEnd } from "../domain/operation.ts";
import type { Reason, ReasonNote } from "../domain/reasons.ts";
import type { Plan } from "../domain/plan/schema.ts";
import type { ParsedPlan } from "../domain/plan/parse.ts";
import type { AllowedSigners } from "../domain/trust/allowed_signers.ts";
import type { PolicyVerdict } from "../domain/trust/policy.ts";
import type { PlanHistory } from "./journal_history.ts";
import type { BoundFileSource } from "./dispatch.ts";
import type { Verdict } from "../domain/verdict.ts";

/** Everything the loop established about one plan file at one commit. */
export interface PlanFacts {
  readonly name: string;
  /** `plans/<name>.yaml`. */
  readonly path: string;
  readonly branch: string;
  /** Branch tip for previews, the introducing (merge) commit for merged plans. */
  readonly commit: string;
  /** SHA-256 hex of the plan bytes. */
  readonly digest: string;
  /** Present when the file parsed. */
  readonly plan?: Plan;
  /** Parse and check problems, located in the file. */
  readonly problems: readonly Problem[];
  /** Absent when the plan did not parse (no author to verify against). */
  readonly policy?: PolicyVerdict;
  readonly requiredApprovals: number;
  /** Why the plan may not run, in order found; empty when it may. */
  readonly refusals: readonly ReasonNote[];
  /** The bound evidence manifest's offline check; absent when none is bound or none was run. */
  readonly evidence?: EvidenceReading;
  /** For a ComponentUpgrade on a plan branch: the review of the branch's change (playbooks). */
  readonly review?: BranchReview;
}

/**
 * What checking a plan's bound evidence manifest established: the offline check's outcome, or
 * why it could not run (manifest missing at the commit, digest different from the bound one,
 * manifest invalid) — never a pass it did not see.
 */
export type EvidenceReading =
  | {
    readonly status: "checked";
    readonly file: string;
    readonly outcome: EvidenceOutcome;
    /** Where each cached source's bytes came from, by source id (absent: not recorded). */
    readonly provenance?: Readonly<Record<string, SourceProvenance>>;
  }
  | {
    readonly status: "unread";
    readonly file: string;
    readonly expectedSha256: string;
    /** SHA-256 of the manifest bytes found, when some were. */
    readonly actualSha256?: string;
    /** `fail` when the bytes are wrong (digest, schema), `unreadable` when absent. */
    readonly verdict: "fail" | "unreadable";
    readonly reason: Reason;
    readonly message: string;
  };

/** The plan's bound manifest as the loop found it at the plan's commit. */
export interface BoundEvidenceInput {
  readonly path: string;
  readonly sha256: string;
  /** The manifest bytes at the commit, absent when no file is there. */
  readonly bytes?: Uint8Array;
}

/** Runs the offline evidence check of a bound manifest against the evidence cache. */
export interface EvidenceChecker {
  check(input: BoundEvidenceInput): Promise<EvidenceReading>;
}

/** One read-only check of the live preview (node version, drain planning). */
export interface LiveCheck {
  readonly name: string;
  readonly verdict: Verdict;
  readonly detail: string;
}

/** A safeguard row the live preview evaluated (`id` is a safeguard table id). */
export interface LiveSafeguard {
  readonly id: string;
  readonly verdict: Verdict | "not-applicable";
  readonly evidence: string;
  readonly reason?: string;
}

/** The preview's one health round (not recorded in the journal). */
export interface LiveHealthRound {
  readonly startedAt: number;
  readonly endedAt: number;
  readonly verdict: Verdict;
  readonly results: ReadonlyArray<{
    readonly binding: string;
    /** The reader label (`readerLabel`), which maps the result to its safeguard row. */
    readonly reader?: string;
    readonly verdict: Verdict;
    readonly reason?: string;
    readonly evidence: string;
  }>;
}

/** What the live, zero-write preview of a plan found on the cluster. */
export interface LiveFindings {
  /** Refusing findings (wrong node version, drain refused, failed gate) and unreadable reads. */
  readonly reasons: readonly ReasonNote[];
  readonly checks: readonly LiveCheck[];
  readonly safeguards: readonly LiveSafeguard[];
  readonly healthRounds: readonly LiveHealthRound[];
  /** Something could not be read: the plan is held, not refused. */
  readonly held: boolean;
  /** Refused on live evidence. */
  readonly refused: boolean;
  /** What was issued, for the report's write statement. */
  readonly reads: string;
  /** Every hop's installer resolution (absent or empty: not resolved), for row 10. */
  readonly installers?: readonly InstallerRecord[];
  /**
   * Mutating calls the read-only guard refused (none was sent): the read-only row's evidence.
   * Absent when the previewer failed outside the guard and its count is unknown.
   */
  readonly writes?: { readonly count: number; readonly refused: readonly string[] };
}

/**
 * Checks a parsed plan against the live cluster with reads only; `files` holds the plan's bound
 * files as the previewed branch has them (the health round uses the bound policy from there).
 */
export interface LivePreviewer {
  preview(parsed: ParsedPlan, files: BoundFileSource): Promise<LiveFindings>;
}

/** A preview to render: `reports/<plan>/preview/<branch>.md`. */
export interface PreviewFacts {
  readonly facts: PlanFacts;
  readonly verdict: "ready" | "refused" | "held";
  readonly generatedAt: number;
  /** The live preview's findings, when the loop has a cluster connection. */
  readonly live?: LiveFindings;
}

/** How an execution ended, as far as the loop knows (absent while running). */
export interface ExecutionEnd {
  /** `refused`: a check re-run at dispatch found contrary evidence; nothing was sent. */
  readonly state: RolloutEnd;
  readonly reasons: readonly ReasonNote[];
  /** A ComponentUpgrade's observation (its execution report is rendered from it). */
  readonly component?: ComponentOutcome;
}

/** An execution report to render from journal records. */
export interface ExecutionFacts {
  readonly facts: PlanFacts;
  /** The plan's typed history from the journal; absent before the plan was recorded. */
  readonly history: PlanHistory | undefined;
  readonly head: { readonly hash: string; readonly events: number };
  readonly generatedAt: number;
  readonly end?: ExecutionEnd;
}

/** Renders reports; pure functions of their inputs (byte-identical on re-render). */
export interface ReportRenderer {
  preview(f: PreviewFacts): string;
  execution(f: ExecutionFacts): string;
  /** Outcome word of an execution report (`running`, `completed`, `unresolved`, …). */
  outcome(f: ExecutionFacts): string;
  /** The preview's verdict as its rows allow it (`ready`, `not-ready`, `refused`, `held`). */
  previewVerdict(f: PreviewFacts): string;
}

/** Input to bind an approved plan (name → digest) in the journal. */
export interface BindInput {
  readonly parsed: ParsedPlan;
  readonly bytes: Uint8Array;
  readonly signatures: string;
  readonly commit: string;
  /** The approver principal the policy counted first. */
  readonly approver: string;
  readonly nowMs: number;
}

/** Runs approved plans. */
export interface PlanExecutor {
  /**
   * Records the plan and its approval; refuses a different digest under a bound name with
   * `PlanChangedAfterApproval` (the journal decides), and plan kinds it cannot run.
   */
  bind(input: BindInput): Promise<{ ok: true } | { ok: false; note: ReasonNote }>;
  /**
   * Runs one bound plan to its end; `onProgress` fires after each recorded state change. `files`
   * reads the plan's bound files as they are now (the watched branch's current tip): the
   * dispatch check compares them with the bound digests before the run and each commitment.
   */
  execute(
    digest: string,
    opts: {
      readonly signal: AbortSignal;
      readonly onProgress: () => void;
      readonly files: BoundFileSource;
    },
  ): Promise<ExecutionEnd>;
}

/** The trust root, read by path on each use (never from the watched repository). */
export interface TrustRoot {
  load(): Promise<AllowedSigners>;
}

/** Why the loop woke up. */
export type WakeReason = "timer" | "hook" | "stop";

/** Poll timer, webhook nudges and stop requests. */
export interface Wakeup {
  /** Resolves at the next poll, on a hook received since the last wait, or on stop. */
  wait(ms: number): Promise<WakeReason>;
}

/** Metrics the loop feeds (`CairnMetrics` satisfies it). */
export interface ReconcileMetrics {
  setOperations(counts: Partial<Record<OperationState, number>>): void;
  observeGitCommitSeconds(seconds: number): void;
  reconcileError(reason: Reason): void;
}
