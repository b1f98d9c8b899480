/**
 * Ancestry of commits in the watched GitOps repository: whether a revision Flux reports contains
 * the merge a ComponentUpgrade was approved for. Implemented over real git by
 * `adapters/git/commit_history.ts` (the reconciler's cache clone, or the plan's repository).
 */
export interface CommitHistory {
  /**
   * Whether `descendant` is `ancestor` or has it in its history; undefined when git does not
   * know one of them (a commit not fetched yet), never a guess.
   */
  contains(descendant: string, ancestor: string): Promise<boolean | undefined>;
}
