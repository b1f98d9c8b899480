/**
 * The typed result of an evidence check, for the CLI, the journal and the preview/execution
 * reports. Every pinned tuple, assertion and control has a verdict; `ok` is true only when all
 * of them behaved as declared.
 */
import type { Problem } from "../errors.ts";
import type { Reason } from "../reasons.ts";
import type { SecretFinding } from "./secret_scan.ts";

/** Whether the checked thing behaved as the manifest declares. */
export type Verdict = "pass" | "fail";

/** Verdict on one `{repo, revision, path, sha256}` tuple. */
export interface SourceVerdict {
  readonly id: string;
  readonly repo: string;
  readonly revision: string;
  readonly path: string;
  readonly expectedSha256: string;
  /** SHA-256 of the cached bytes; absent when the cache has no entry. */
  readonly cachedSha256?: string;
  /** SHA-256 of the bytes git returned; present only in a `--fetch` run that got bytes. */
  readonly fetchedSha256?: string;
  readonly verdict: Verdict;
  /** Set when `verdict` is `fail`. */
  readonly reason?: Reason;
  readonly message: string;
}

/** Verdict on one named assertion. */
export interface AssertionVerdict {
  readonly name: string;
  readonly kind: "order" | "independent" | "contains";
  readonly source: string;
  /** What is asserted, in words, e.g. `in f: pull < install < drain`. */
  readonly claim: string;
  readonly verdict: Verdict;
  readonly reason?: Reason;
  readonly message: string;
}

/** Verdict on one control; `observed` is what the control's check did, `verdict` compares it with `expect`. */
export interface ControlVerdict {
  readonly name: string;
  readonly kind: "reversed-order" | "corrupted-cache";
  readonly expected: "fail";
  readonly observed: "pass" | "fail" | "not-run";
  readonly verdict: Verdict;
  readonly reason?: Reason;
  readonly message: string;
}

/** The complete check: manifest identity, mode and every verdict. */
export interface EvidenceCheckResult {
  readonly manifest: { readonly name: string; readonly file: string; readonly sha256: string };
  readonly mode: "offline" | "fetch";
  readonly ok: boolean;
  readonly sources: readonly SourceVerdict[];
  readonly assertions: readonly AssertionVerdict[];
  readonly controls: readonly ControlVerdict[];
  readonly counts: {
    readonly sources: { readonly passed: number; readonly failed: number };
    readonly assertions: { readonly passed: number; readonly failed: number };
    readonly controls: { readonly passed: number; readonly failed: number };
  };
}

/**
 * What a caller may show: a checked result, or a refusal because the result text looked like it
 * carried a secret (then no verdict text is released at all).
 */
export type EvidenceOutcome =
  | { readonly status: "checked"; readonly result: EvidenceCheckResult }
  | {
    readonly status: "refused";
    readonly problem: Problem;
    readonly findings: readonly SecretFinding[];
  };
