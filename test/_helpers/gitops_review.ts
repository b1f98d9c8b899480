/**
 * A generated home-ops repository in real git with one branch per bump, and the review of a
 * branch against main through the real git adapter and the shipped playbooks.
 */
import { gitOpsTree } from "../../src/adapters/git/gitops_tree.ts";
import { loadPlaybooks } from "../../src/app/playbooks.ts";
import { parseBundledVersions } from "../../src/domain/playbook/bundled.ts";
import type { BranchReview } from "../../src/domain/review/model.ts";
import { reviewBranch } from "../../src/engine/review/review_branch.ts";
import {
  checkoutBranch,
  commitFiles,
  type HomeOpsState,
  initGitOpsRepo,
  renderBundledVersions,
  renderRepo,
  type RepoFiles,
} from "../../src/sim/gitops/mod.ts";

export const PLAYBOOKS = await loadPlaybooks();
const parsedBundled = parseBundledVersions(
  new TextEncoder().encode(renderBundledVersions()),
  "bundled-versions.yaml",
);
if (!parsedBundled.ok) throw new Error("the generated bundled-versions snapshot does not parse");
export const BUNDLED = parsedBundled.bundled;

/** A repository whose `main` holds `base`; `branch()` adds a bump branch off it. */
export class GitOpsRepo {
  private constructor(readonly dir: string, readonly main: string) {}

  static async create(base: HomeOpsState): Promise<GitOpsRepo> {
    const dir = await Deno.makeTempDir({ prefix: "cairn-review-" });
    return new GitOpsRepo(dir, await initGitOpsRepo(dir, renderRepo(base)));
  }

  /** Commits `files` (or the rendering of a state) on a new branch off main. */
  async branch(name: string, next: HomeOpsState | RepoFiles, message = `bump ${name}`) {
    await checkoutBranch(this.dir, name, this.main);
    const files = "versions" in next ? renderRepo(next as HomeOpsState) : next as RepoFiles;
    return await commitFiles(this.dir, files, message);
  }

  async review(head: string, base = "main"): Promise<BranchReview> {
    return await reviewBranch({
      tree: gitOpsTree(this.dir),
      playbooks: PLAYBOOKS,
      bundled: BUNDLED,
      base,
      head,
    });
  }

  async [Symbol.asyncDispose]() {
    await Deno.remove(this.dir, { recursive: true });
  }
}

/** 1-based line of the first occurrence of `needle` in `text`. */
export function lineOf(text: string, needle: string): number {
  const i = text.indexOf(needle);
  if (i < 0) throw new Error(`${needle} not found`);
  return text.slice(0, i).split("\n").length;
}
