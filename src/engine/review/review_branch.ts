/**
 * Reviews the change a branch makes to a GitOps repository against the playbooks: resolve both
 * revisions, compare the head with its merge base on the base branch (what a pull request
 * shows, not the base branch's later commits reversed), read only the files the touched
 * playbooks judge, and hand them to the pure judge. Used by `cairn review` and by the reconciler
 * for plan branches that bump protected components.
 */
import {
  type BundledVersions,
  NO_BUNDLED_VERSIONS,
  parseBundledVersions,
} from "../../domain/playbook/bundled.ts";
import type { Playbook } from "../../domain/playbook/schema.ts";
import { type FileContent, filesToRead, judgeReview } from "../../domain/review/judge.ts";
import type { BranchReview } from "../../domain/review/model.ts";
import type { BranchReviewer, GitOpsTree } from "../../ports/gitops_tree.ts";

export interface ReviewBranchInput {
  readonly tree: GitOpsTree;
  readonly playbooks: readonly Playbook[];
  readonly bundled: BundledVersions;
  readonly base: string;
  readonly head: string;
}

/** Reviews `head` against `base`. */
export async function reviewBranch(input: ReviewBranchInput): Promise<BranchReview> {
  const baseCommit = await input.tree.resolve(input.base);
  const headCommit = await input.tree.resolve(input.head);
  // Without shared history the base commit itself is the only honest comparison point.
  const from = (await input.tree.mergeBase(baseCommit, headCommit)) ?? baseCommit;
  const changed = await input.tree.changedPaths(from, headCommit);
  const paths = filesToRead(input.playbooks, changed);
  const [before, after] = await Promise.all([
    input.tree.readFiles(from, paths),
    input.tree.readFiles(headCommit, paths),
  ]);
  const view = (files: ReadonlyMap<string, FileContent>) => (path: string): FileContent =>
    files.get(path) ?? { kind: "missing" };
  const result = judgeReview({
    playbooks: input.playbooks,
    bundled: input.bundled,
    changed,
    base: view(before),
    head: view(after),
  });
  return {
    base: { ref: input.base, commit: baseCommit },
    head: { ref: input.head, commit: headCommit },
    comparedWith: from,
    bundled: { name: input.bundled.name, date: input.bundled.date },
    result,
  };
}

/** Where the reconciler reads the bundled-versions snapshot: the watched branch's own copy. */
export const BUNDLED_VERSIONS_PATH = "catalogue/bundled-versions.yaml";

/**
 * The snapshot at `commit` (the base side, so the reviewed branch cannot supply its own
 * evidence). Missing: none (every riding companion is then unknown). Invalid: none either, and
 * its name says why, so the report shows the problem instead of hiding it.
 */
export async function bundledVersionsAt(
  tree: GitOpsTree,
  commit: string,
): Promise<BundledVersions> {
  const file = (await tree.readFiles(commit, [BUNDLED_VERSIONS_PATH])).get(BUNDLED_VERSIONS_PATH);
  if (!file || file.kind === "missing") return NO_BUNDLED_VERSIONS;
  if (file.kind === "unreadable") {
    return { ...NO_BUNDLED_VERSIONS, name: `${BUNDLED_VERSIONS_PATH} (unreadable: ${file.why})` };
  }
  const parsed = parseBundledVersions(new TextEncoder().encode(file.text), BUNDLED_VERSIONS_PATH);
  if (parsed.ok) return parsed.bundled;
  const first = parsed.problems[0]!;
  return {
    ...NO_BUNDLED_VERSIONS,
    name: `${BUNDLED_VERSIONS_PATH} (invalid at line ${
      first.location?.line ?? 1
    }: ${first.message})`,
  };
}

/** The reconciler's reviewer: playbooks fixed at start, the snapshot read from each base. */
export function branchReviewer(tree: GitOpsTree, playbooks: readonly Playbook[]): BranchReviewer {
  return {
    async review(base, head) {
      const bundled = await bundledVersionsAt(tree, base.commit);
      const r = await reviewBranch({
        tree,
        playbooks,
        bundled,
        base: base.commit,
        head: head.commit,
      });
      return {
        ...r,
        base: { ref: base.ref, commit: r.base.commit },
        head: { ref: head.ref, commit: r.head.commit },
      };
    },
  };
}
