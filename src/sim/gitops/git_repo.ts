/**
 * Writes generated repository states into a real git repository: the first state on `main`, then
 * each bump as one commit on a branch, the way a Renovate pull request arrives. Author, committer
 * and dates are fixed, so the same states give the same commit ids on every run.
 */
import { dirname, join } from "node:path";
import { gitOrThrow, gitText } from "../../adapters/git/run_git.ts";
import type { RepoFiles } from "./render.ts";

const FIXED_ENV = {
  GIT_AUTHOR_NAME: "renovate[bot]",
  GIT_AUTHOR_EMAIL: "renovate@example.invalid",
  GIT_COMMITTER_NAME: "renovate[bot]",
  GIT_COMMITTER_EMAIL: "renovate@example.invalid",
  GIT_AUTHOR_DATE: "2026-11-25T00:00:00Z",
  GIT_COMMITTER_DATE: "2026-11-25T00:00:00Z",
  GIT_CONFIG_GLOBAL: "/dev/null",
};

async function git(dir: string, args: readonly string[]): Promise<string> {
  return await gitText(["-c", "commit.gpgsign=false", ...args], { cwd: dir, env: FIXED_ENV });
}

/** Initialises `dir` with `files` committed on `main`; returns that commit id. */
export async function initGitOpsRepo(
  dir: string,
  files: RepoFiles,
  message = "chore: initial import",
): Promise<string> {
  await gitOrThrow(["init", "-q", "-b", "main", "--", dir], { env: FIXED_ENV });
  return await commitFiles(dir, files, message);
}

/**
 * Makes the working tree exactly `files` (writing, and deleting what `files` no longer has) and
 * commits it on the current branch; returns the commit id.
 */
export async function commitFiles(dir: string, files: RepoFiles, message: string): Promise<string> {
  const tracked = (await git(dir, ["ls-files", "-z"])).split("\0").filter((p) => p !== "");
  for (const path of tracked) {
    if (!(path in files)) await Deno.remove(join(dir, path));
  }
  for (const [path, text] of Object.entries(files)) {
    await Deno.mkdir(join(dir, dirname(path)), { recursive: true });
    await Deno.writeTextFile(join(dir, path), text);
  }
  await git(dir, ["add", "-A", "--", "."]);
  await git(dir, ["commit", "-q", "--allow-empty", "-m", message]);
  return await git(dir, ["rev-parse", "HEAD"]);
}

/** Creates and checks out `branch` at `from`. */
export async function checkoutBranch(dir: string, branch: string, from: string): Promise<void> {
  await git(dir, ["checkout", "-q", "-b", branch, from]);
}
