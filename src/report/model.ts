/**
 * What the reports are rendered from. The reconciler fills these from journal records; the
 * renderers are pure functions of them (times are epoch-ms numbers, never read from a clock).
 * Every string field may come from the cluster, the plan or git and is escaped on output.
 */
import type { BesideEvent, HookRow, OperatingPlan, WindowLine } from "./beside_section.ts";
import type { OperationState, Phase, ResponseClass } from "../domain/operation.ts";
import type { SourceProvenance } from "../domain/evidence/provenance.ts";
import type { RowResult, RowVerdict } from "../domain/safeguards/result.ts";
import type {
  ExecutionVerdict,
  OperationsOutcome,
  PreviewVerdict as PreviewRowsVerdict,
  RowGaps,
} from "../domain/safeguards/verdict.ts";
import type { Component } from "./rollback_caveats.ts";
import type { Verdict } from "../domain/verdict.ts";
import type { Reason, ReasonNote } from "../domain/reasons.ts";

/** Outcome of one read-only check. A timed-out or unavailable read is `unreadable`, never `fail`. */

/** A safeguard row's verdict; `not-applicable` needs evidence saying why. */
export type SafeguardVerdict = RowVerdict;

/** One signature found beside the plan. */
export interface SignerEvidence {
  readonly principal: string;
  readonly role: "author" | "approver";
  /** `SHA256:…` key fingerprint. */
  readonly keyFingerprint: string;
  readonly verdict: "valid" | "invalid";
  /** Reason code when invalid. */
  readonly reason?: string;
}

/** Who and what the report is about. */
export interface PlanIdentity {
  readonly name: string;
  readonly kind: string;
  readonly cluster: string;
  /** SHA-256 (hex) of the plan file bytes: the plan's identity. */
  readonly digest: string;
  readonly author: string;
  /** Commit the plan was read at (branch tip for previews, introducing commit for execution). */
  readonly commit: string;
  readonly branch: string;
  readonly signers: readonly SignerEvidence[];
  readonly approvals: { readonly required: number; readonly valid: number };
  /** Epoch ms. */
  readonly expiresAt?: number;
}

/** One safeguard row's result; rows without a result render as "not evaluated". */
export type SafeguardResult = RowResult;

/** One pinned-source tuple's hash check. */
export interface SourceCheck {
  readonly repository: string;
  readonly revision: string;
  readonly path: string;
  readonly expectedSha256: string;
  /** Absent when the source could not be read. */
  readonly actualSha256?: string;
  readonly verdict: Verdict;
  readonly reason?: Reason;
  /** Where the bytes came from (fetched from the upstream, a mirror, a local stand-in, cache). */
  readonly provenance?: SourceProvenance;
}

/** A call-path or documentation assertion over the pinned sources. */
export interface AssertionResult {
  readonly name: string;
  readonly verdict: Verdict;
  readonly detail: string;
}

/** One binding's result within a health round. */
export interface HealthCheckResult {
  readonly binding: string;
  readonly verdict: Verdict;
  readonly reason?: string;
  /** Observation basis and object identity/version, already free of secrets. */
  readonly evidence: string;
}

/** A bounded health round (gate, post-gate, verification, preview preflight). */
export interface HealthRound {
  readonly id: string;
  readonly purpose: "preflight" | "gate" | "verify" | "post-gate";
  readonly node?: string;
  readonly startedAt: number;
  readonly endedAt: number;
  readonly verdict: Verdict;
  readonly results: readonly HealthCheckResult[];
}

/** How one phase of a node step went. */
export type PhaseOutcome = "ok" | "failed" | "unresolved" | "running" | "skipped";

/** One phase span on the node timeline. */
export interface PhaseSpan {
  readonly phase: Phase;
  readonly startedAt: number;
  /** Absent while running; rendered up to `generatedAt`. */
  readonly endedAt?: number;
  readonly outcome: PhaseOutcome;
}

/** A node's operation and its phases. */
export interface NodeTimeline {
  readonly node: string;
  readonly role: "worker" | "controlplane";
  /** `pending` = no operation yet. */
  readonly state: OperationState | "pending";
  readonly phases: readonly PhaseSpan[];
  readonly note?: string;
}

/** Accounting of one external mutation attempt. */
export interface AttemptAccount {
  readonly node: string;
  readonly phase: Phase;
  readonly attempt: number;
  readonly intentAt: number;
  /** Absent when the intent was recorded but nothing was sent. */
  readonly sentAt?: number;
  readonly transportDeadline: number;
  readonly verificationDeadline: number;
  /** `null` while unaccounted. */
  readonly responseClass: ResponseClass | null;
  readonly accountedBy: "response" | "recovery" | null;
  readonly detail?: string;
}

/** A recovery decision with its actor and evidence. */
export interface RecoveryDecision {
  readonly at: number;
  readonly node?: string;
  readonly decision: string;
  readonly actor: string;
  readonly evidence: string;
  readonly reason?: string;
}

/** The journal's hash-chain head at rendering time. */
export interface JournalHead {
  readonly headHash: string;
  readonly eventCount: number;
}

/** One step of the planned rollout, for previews. */
export interface PlannedStep {
  readonly node: string;
  readonly role: "worker" | "controlplane";
  readonly from: string;
  readonly to: string;
}

/** Parts both reports share. */
interface ReportCommon {
  readonly plan: PlanIdentity;
  /** Epoch ms the reconciler stamps (from its clock); the only "now" a renderer sees. */
  readonly generatedAt: number;
  readonly reasons: readonly ReasonNote[];
  readonly safeguards: readonly SafeguardResult[];
  readonly sourceChecks: readonly SourceCheck[];
  readonly assertions: readonly AssertionResult[];
  readonly healthRounds: readonly HealthRound[];
  readonly components: readonly Component[];
  /** Extra, plan-specific caveats (free text, escaped). */
  readonly extraCaveats?: readonly string[];
  readonly journal?: JournalHead;
}

/** Verdict of a preview: can reviewers approve this plan as it stands? Follows from the rows. */
export type PreviewVerdict = PreviewRowsVerdict;

/** Input of `renderPreviewReport`. */
export interface PreviewReportModel extends ReportCommon {
  readonly verdict: PreviewVerdict;
  /** Windows, breakpoints, hooks and expected noise the plan declares (docs/operating.md). */
  readonly operating?: OperatingPlan;
  /** The P-placed rows that did not pass (the headline names them). */
  readonly gaps: RowGaps;
  readonly rollout: readonly PlannedStep[];
  /**
   * Mutating calls the preview attempted (the read-only guard refused them; must be 0) and how
   * that was established; `null` when the count is unknown.
   */
  readonly writes: { readonly count: number | null; readonly evidence: string };
}

/**
 * Outcome of the operations so far (`held`: the rollout stopped before the next node's
 * commitment, nothing was sent for it).
 */
export type ExecutionOutcome = OperationsOutcome;

/** Input of `renderExecutionReport`. */
export interface ExecutionReportModel extends ReportCommon {
  /** How the operations ended, by ER's rules. */
  readonly outcome: ExecutionOutcome;
  /** The headline: the outcome, held below `completed` by any row that did not pass. */
  readonly verdict: ExecutionVerdict;
  /** The applicable rows that did not pass (the headline names them). */
  readonly gaps: RowGaps;
  readonly startedAt: number;
  readonly finishedAt?: number;
  readonly nodes: readonly NodeTimeline[];
  readonly attempts: readonly AttemptAccount[];
  readonly recoveries: readonly RecoveryDecision[];
  readonly journal: JournalHead;
  /** Holds, resumes, stalls, silences and notifications beside the steps (docs/operating.md). */
  readonly beside?: readonly BesideEvent[];
  /** Node hooks' Jobs and their observed outcomes (docs/operating.md#node-hooks). */
  readonly hooks?: readonly HookRow[];
  /** The plan's maintenance window in force or next, when it declares windows. */
  readonly window?: WindowLine;
}

/** Size limits that keep a 500-node report readable and bounded. */
export interface RenderLimits {
  /** Rows shown per table before summarising (attention-worthy rows first). */
  readonly tableRows: number;
  /** Folded `<details>` blocks per section. */
  readonly detailBlocks: number;
  /** Up to this many nodes, the gantt chart shows every phase; beyond, one bar per node. */
  readonly ganttPhaseNodes: number;
  /** Bars in the gantt chart at most. */
  readonly ganttBars: number;
  /** Health results listed inside one round's details. */
  readonly resultsPerRound: number;
  /** Longest free-text field, in characters, before truncation. */
  readonly textMax: number;
}

/** Defaults for {@link RenderLimits}. */
export const DEFAULT_LIMITS: RenderLimits = {
  tableRows: 100,
  detailBlocks: 25,
  ganttPhaseNodes: 20,
  ganttBars: 100,
  resultsPerRound: 50,
  textMax: 300,
};
