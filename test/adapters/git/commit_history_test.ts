/**
 * `CommitHistory` over real git: a later commit contains the merge, an older or a sibling one
 * does not, and a commit the repository does not have is "not known", never "no".
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { gitCommitHistory } from "../../../src/adapters/git/commit_history.ts";
import { gitText } from "../../../src/adapters/git/run_git.ts";

const ID = ["-c", "user.name=T", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"];

Deno.test("contains: descendants yes, ancestors and siblings no, unknown commits undefined", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cairn-history-" });
  try {
    const git = (...a: string[]) => gitText([...ID, ...a], { cwd: dir });
    await git("init", "-q", "-b", "main");
    const commit = async (m: string) => {
      await git("commit", "-q", "--allow-empty", "-m", m);
      return (await git("rev-parse", "HEAD")).trim();
    };
    const base = await commit("base");
    const merge = await commit("merge");
    const later = await commit("later");
    await git("checkout", "-q", "-b", "side", base);
    const sibling = await commit("sibling");
    const h = gitCommitHistory(dir);
    assertEquals(await h.contains(merge, merge), true);
    assertEquals(await h.contains(later, merge), true);
    assertEquals(await h.contains(base, merge), false);
    assertEquals(await h.contains(sibling, merge), false);
    assertEquals(await h.contains("9".repeat(40), merge), undefined);
    assertEquals(await h.contains("--all", merge), undefined);
    // The bare cache clone the reconciler fetches into answers the same.
    const bare = `${dir}.git`;
    await gitText(["clone", "-q", "--bare", "--", dir, bare]);
    try {
      assertEquals(await gitCommitHistory({ gitDir: bare }).contains(later, merge), true);
    } finally {
      await Deno.remove(bare, { recursive: true });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
