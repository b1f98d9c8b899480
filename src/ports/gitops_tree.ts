import type { FileContent } from "../domain/review/judge.ts";
import type { BranchReview } from "../domain/review/model.ts";

/**
 * Read-only access to the commits of a GitOps repository for a review: resolve revisions, list
 * the paths a change touches, read files at a commit. Implemented over real git by
 * `adapters/git/gitops_tree.ts`.
 */
export interface GitOpsTree {
  /** The commit id `rev` names; a CairnError `ReviewRefUnknown` when it names none. */
  resolve(rev: string): Promise<string>;
  /** The best common ancestor of two commits, or undefined when they share no history. */
  mergeBase(a: string, b: string): Promise<string | undefined>;
  /** Paths that differ between two commits (renames as a deletion and an addition). */
  changedPaths(from: string, to: string): Promise<readonly string[]>;
  /** The named files at `commit`; each missing, unreadable (too large, not UTF-8) or its text. */
  readFiles(commit: string, paths: readonly string[]): Promise<ReadonlyMap<string, FileContent>>;
}

/** Reviews the change a branch makes, for the reconciler's plan-branch previews. */
export interface BranchReviewer {
  /** The review of `head` against `base` (both full commit ids, named by their branches). */
  review(
    base: { readonly ref: string; readonly commit: string },
    head: { readonly ref: string; readonly commit: string },
  ): Promise<BranchReview>;
}
