/**
 * `cairn review` wiring: the playbooks (shipped, or a directory), the bundled-versions snapshot
 * (a file, or none: companions are then unknown, never unchanged), real git over the repository
 * directory, the engine's review.
 */
import { gitOpsTree } from "../adapters/git/gitops_tree.ts";
import { runGit } from "../adapters/git/run_git.ts";
import { CairnError } from "../domain/errors.ts";
import { type BundledVersions, parseBundledVersions } from "../domain/playbook/bundled.ts";
import type { BranchReview } from "../domain/review/model.ts";
import { bundledVersionsAt, reviewBranch } from "../engine/review/review_branch.ts";
import { loadPlaybooks } from "./playbooks.ts";

export interface ReviewRunOptions {
  readonly repo: string;
  readonly base: string;
  readonly head: string;
  readonly playbooksDir?: string;
  readonly bundledFile?: string;
}

/** Reads a bundled-versions file; its first problem is thrown (located). */
export async function loadBundledVersions(file: string): Promise<BundledVersions> {
  let bytes: Uint8Array;
  try {
    const info = await Deno.stat(file);
    if (!info.isFile) throw new Error("not a regular file");
    if (info.size > 4 * 1024 * 1024) {
      throw new CairnError({
        reason: "BundledVersionsInvalid",
        message: `${file} is ${info.size} bytes; the limit is ${4 * 1024 * 1024}`,
      });
    }
    bytes = await Deno.readFile(file);
  } catch (e) {
    if (e instanceof CairnError) throw e;
    throw new CairnError({
      reason: "FileUnreadable",
      message: `cannot read ${file}: ${(e as Error).message}`,
    });
  }
  const r = parseBundledVersions(bytes, file);
  if (!r.ok) throw new CairnError(r.problems[0]!);
  return r.bundled;
}

/**
 * `--repo` names a git repository (a working copy or a bare one): a typo is said as such, not as
 * git failing to start or a ref that names no commit.
 */
async function requireRepository(dir: string): Promise<void> {
  const st = await Deno.stat(dir).catch(() => undefined);
  const refuse = (why: string) =>
    new CairnError({ reason: "FileUnreadable", message: `--repo ${dir}: ${why}` });
  if (!st?.isDirectory) throw refuse(st ? "not a directory" : "no such directory");
  const out = await runGit(["rev-parse", "--git-dir"], { cwd: dir });
  if (out.code !== 0) throw refuse("not a git repository");
}

/**
 * Runs a review of `head` against `base` in the repository at `repo`. The snapshot is the file
 * given, else the base commit's `catalogue/bundled-versions.yaml` (as the reconciler reads it:
 * from the side the reviewed branch cannot change), else none.
 */
export async function runReview(o: ReviewRunOptions): Promise<BranchReview> {
  await requireRepository(o.repo);
  const playbooks = await loadPlaybooks(o.playbooksDir);
  const tree = gitOpsTree(o.repo);
  const bundled = o.bundledFile
    ? await loadBundledVersions(o.bundledFile)
    : await bundledVersionsAt(tree, await tree.resolve(o.base));
  return await reviewBranch({ tree, playbooks, bundled, base: o.base, head: o.head });
}
