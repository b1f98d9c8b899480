/**
 * What a review of a bump found: per protected component the pins it moved, every value it
 * judged (file, side, line), the findings with their reason codes and the playbook's required
 * actions, and what the playbook says to read, check after merge and beware of on rollback.
 * Built by `judge.ts`, rendered by `report/render_review.ts`, serialised as-is for JSON output.
 */
import type { Reason } from "../reasons.ts";

/** Which commit a value was read on. */
export type Side = "base" | "head";

/** A place in the repository a judgement rests on. */
export interface Where {
  readonly file: string;
  readonly side: Side;
  readonly line: number;
  readonly column: number;
}

/** How far a version moved. */
export type MoveKind = "none" | "patch" | "minor" | "major" | "downgrade" | "unparsed";

/** `blocking`: do not merge as is; `attention`: a human must look before merging. */
export type Severity = "blocking" | "attention";

export interface ReviewFinding {
  readonly code: Reason;
  readonly component: string;
  readonly severity: Severity;
  readonly message: string;
  readonly where: readonly Where[];
  /** The playbook's required actions for the breaking patterns this finding reveals. */
  readonly actions: readonly { readonly pattern: string; readonly action: string }[];
}

/** One value the review read and what it concluded from it. */
export interface JudgedValue {
  /** `pin talos/talconfig`, `deviation rbd-driver-name`, `companion ceph`, `edit talhelper`. */
  readonly subject: string;
  readonly file: string;
  readonly side: Side;
  readonly line: number;
  readonly column: number;
  /** The value as read (shortened), or why there is none. */
  readonly value: string;
  readonly outcome: string;
}

export interface PinSetMove {
  readonly pinSet: string;
  readonly from: string;
  readonly to: string;
  readonly kind: MoveKind;
  /** Pins that moved, of how many. */
  readonly moved: number;
  readonly of: number;
}

/** A breaking pattern and how this review dealt with it. */
export interface PatternStatus {
  readonly id: string;
  readonly pattern: string;
  readonly action: string;
  /**
   * `detected`: a finding reveals it; `not-seen`: its review check ran and did not fire;
   * `manual`: a preflight check the diff cannot show (a human does it before merging);
   * `after-merge`: only the running cluster shows it (the named check).
   */
  readonly status: "detected" | "not-seen" | "manual" | "after-merge";
  readonly check?: string;
}

export interface ComponentReview {
  readonly name: string;
  readonly title: string;
  /** True when a pin of the component moved; false when only its files were touched. */
  readonly moved: boolean;
  readonly moves: readonly PinSetMove[];
  readonly arrivesAs: string;
  /** The changed paths this component owns. */
  readonly changedFiles: readonly string[];
  readonly judged: readonly JudgedValue[];
  readonly findings: readonly ReviewFinding[];
  readonly readBeforeMerge: readonly { title: string; url?: string; note?: string }[];
  readonly patterns: readonly PatternStatus[];
  readonly afterMerge: readonly { id: string; reader: string; summary: string }[];
  readonly rollback: readonly { kind: string; text: string }[];
}

/** `clean`: protected components moved and nothing was found; `untouched`: none was touched. */
export type ReviewVerdict = "clean" | "findings" | "untouched";

export interface ReviewResult {
  readonly verdict: ReviewVerdict;
  readonly components: readonly ComponentReview[];
  readonly findings: readonly ReviewFinding[];
  /** Changed paths no playbook owns (ordinary apps Renovate may auto-merge). */
  readonly unprotected: readonly string[];
  readonly changedFiles: number;
}

/** What a review compared, and what it found. */
export interface BranchReview {
  readonly base: { readonly ref: string; readonly commit: string };
  readonly head: { readonly ref: string; readonly commit: string };
  /** The commit the head was compared with: the merge base of base and head. */
  readonly comparedWith: string;
  readonly bundled: { readonly name: string; readonly date: string };
  readonly result: ReviewResult;
}
