/**
 * Where reports go: `reports/<plan>/preview/<branch>.md` (one per branch the plan was previewed
 * on, the branch name encoded to one safe file name) and `reports/<plan>/execution.md` on the
 * report branch (`cairn-reports` by default). Implementations never force-push; a moving branch is re-fetched, rebuilt on
 * the new tip and retried a bounded number of times (`GitPushRejected` when they run out).
 */

/** The two report kinds, one file each per plan. */
export type ReportKind = "preview" | "execution";

/** One rendered report to publish. */
export type ReportDocument = PreviewDocument | ExecutionDocument;

interface DocumentBase {
  /** Plan name; must pass the plan path rules (else `PlanPathInvalid`). */
  readonly plan: string;
  readonly markdown: string;
}

/** A plan's preview as it stands on one branch: each branch has its own file. */
export interface PreviewDocument extends DocumentBase {
  readonly kind: "preview";
  /** The branch the plan was assessed on (the watched branch for a refused merged plan). */
  readonly branch: string;
}

/** A bound plan's execution report (one per plan). */
export interface ExecutionDocument extends DocumentBase {
  readonly kind: "execution";
}

/** What a publish did. */
export interface PublishResult {
  /** `unchanged` when every document already had these bytes: no commit was made. */
  readonly status: "committed" | "unchanged";
  /** The report branch tip after publishing (the new commit, or the unchanged tip). */
  readonly commit: string;
  /** Push attempts used (0 when unchanged). */
  readonly attempts: number;
  /** Wall time spent, ms, for the commit-latency metric. */
  readonly durationMs: number;
}

/** Commits reports. */
export interface ReportSink {
  /** Writes all `documents` in one commit with `message`. */
  publish(documents: readonly ReportDocument[], message: string): Promise<PublishResult>;
  /**
   * Pushes reports kept from publishes the remote did not take (when the sink keeps them);
   * undefined when nothing was waiting. Throws when the remote still does not take them.
   */
  retryPending?(): Promise<PublishResult | undefined>;
}
