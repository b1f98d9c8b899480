/**
 * The merge `cairn apply` ties a ComponentUpgrade's delivery to: the commit given, else the commit
 * that introduced the plan on the first-parent history of its repository's HEAD (the pull
 * request's merge commit, as the reconciler finds it), else none outside git.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { join } from "node:path";
import { planMerge } from "../../src/app/component_run.ts";
import { git } from "../_helpers/git_daemon.ts";

Deno.test("planMerge: the given commit, else the merge that introduced the plan, else none", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cairn-plan-merge-" });
  const outside = await Deno.makeTempDir({ prefix: "cairn-plan-merge-nogit-" });
  try {
    const run = (...a: string[]) =>
      git(["-c", "user.name=T", "-c", "user.email=t@example.com", ...a], dir);
    await run("init", "-q", "-b", "main");
    await run("commit", "-q", "--allow-empty", "-m", "base");
    await run("checkout", "-q", "-b", "bump");
    await Deno.mkdir(join(dir, "plans"));
    const plan = join(dir, "plans", "x.yaml");
    await Deno.writeTextFile(plan, "kind: ComponentUpgrade\n");
    await run("add", "plans/x.yaml");
    await run("commit", "-q", "-m", "plan");
    await run("checkout", "-q", "main");
    await run("merge", "-q", "--no-ff", "-m", "Merge bump", "bump");
    const merge = await run("rev-parse", "HEAD");
    await run("commit", "-q", "--allow-empty", "-m", "later");

    assertEquals((await planMerge(plan, undefined)).merged?.commit, merge);
    const given = "a".repeat(40);
    assertEquals((await planMerge(plan, given)).merged?.commit, given);
    const elsewhere = join(outside, "x.yaml");
    await Deno.writeTextFile(elsewhere, "kind: ComponentUpgrade\n");
    assertEquals((await planMerge(elsewhere, undefined)).merged, undefined);
  } finally {
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(outside, { recursive: true });
  }
});
