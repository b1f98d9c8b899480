/**
 * `CommitHistory` over real git: `merge-base --is-ancestor` (exit 0: contains, 1: does not),
 * after `cat-file -e` found both commits, so an unknown commit is "not known", never "no".
 * Read-only; works on a bare cache clone (`{ gitDir }`) or a repository's directory.
 */
import type { CommitHistory } from "../../ports/commit_history.ts";
import { runGit } from "./run_git.ts";

const COMMIT = /^[0-9a-f]{40}$/;

export function gitCommitHistory(at: string | { readonly gitDir: string }): CommitHistory {
  const where = typeof at === "string" ? { cwd: at } : { gitDir: at.gitDir };
  // Ancestry between two commits never changes: an answer, once had, is kept.
  const answers = new Map<string, boolean>();
  const known = async (c: string) =>
    (await runGit(["cat-file", "-e", "--end-of-options", `${c}^{commit}`], where)).code === 0;
  return {
    async contains(descendant, ancestor) {
      // Only full commit ids reach git: a revision from the cluster is data, never an option.
      if (!COMMIT.test(descendant) || !COMMIT.test(ancestor)) return undefined;
      if (descendant === ancestor) return true;
      const key = `${descendant}:${ancestor}`;
      const kept = answers.get(key);
      if (kept !== undefined) return kept;
      if (!(await known(descendant)) || !(await known(ancestor))) return undefined;
      const out = await runGit(
        ["merge-base", "--is-ancestor", "--end-of-options", ancestor, descendant],
        where,
      );
      const answer = out.code === 0 ? true : out.code === 1 ? false : undefined;
      if (answer !== undefined) answers.set(key, answer);
      return answer;
    },
  };
}
