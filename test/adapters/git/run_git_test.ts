/** A failed git call is named by its subcommand, whatever `-c` options precede it. */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { gitOrThrow, subcommandOf } from "../../../src/adapters/git/run_git.ts";
import { CairnError } from "../../../src/domain/errors.ts";

Deno.test("subcommandOf() skips -c / -C and their values and other options", () => {
  assertEquals(subcommandOf(["-c", "user.name=x", "remote", "add", "origin", "u"]), "git remote");
  assertEquals(subcommandOf(["-C", "/repo", "--no-pager", "log"]), "git log");
  assertEquals(subcommandOf(["push"]), "git push");
  assertEquals(subcommandOf(["--version"]), "git");
});

Deno.test("a failing git call with -c options says which subcommand failed", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await gitOrThrow(["-c", "init.defaultBranch=main", "rev-parse", "--verify", "nope"], {
      cwd: dir,
    });
    throw new Error("git succeeded outside a repository");
  } catch (e) {
    assert(e instanceof CairnError, String(e));
    assert(e.message.startsWith("git rev-parse failed (exit "), e.message);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
