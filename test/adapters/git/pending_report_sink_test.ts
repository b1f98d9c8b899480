import { deepStrictEqual as assertEquals, ok, rejects } from "node:assert/strict";
import { GitRemote } from "../../../src/adapters/git/git_remote.ts";
import { GitReportSink } from "../../../src/adapters/git/git_report_sink.ts";
import { PendingReportSink } from "../../../src/adapters/git/pending_report_sink.ts";
import type { ReportDocument } from "../../../src/ports/report_sink.ts";
import { SimClock } from "../../../src/sim/clock.ts";
import { createBareRepo, git, GitWorkTree, startGitDaemon } from "../../_helpers/git_daemon.ts";

const BRANCH = "cairn-reports";

function execution(markdown: string): ReportDocument {
  return { plan: "p", kind: "execution", markdown };
}

/** A served repository whose remote can be taken away (moved) and restored. */
async function world() {
  const root = await Deno.makeTempDir({ prefix: "cairn-pending-" });
  await Deno.mkdir(`${root}/srv`);
  const bare = await createBareRepo(`${root}/srv`, "plans.git");
  await git(["config", "receive.denyNonFastForwards", "true"], bare);
  const seed = await GitWorkTree.clone(`file://${bare}`, `${root}/seed`);
  await seed.run("checkout", "--quiet", "-b", "main");
  await seed.commit({ "plans/p.yaml": "kind: TalosUpgrade\n" }, "initial");
  await seed.push("main");
  const daemon = await startGitDaemon(`${root}/srv`);
  const remote = await GitRemote.open({
    url: daemon.url("plans.git"),
    cacheDir: `${root}/cache`,
    watchedBranch: "main",
  });
  const inner = new GitReportSink(remote, {
    branch: BRANCH,
    authorName: "cairn",
    authorEmail: "cairn@localhost",
    clock: new SimClock(Date.UTC(2026, 9, 20, 12, 0, 0)),
  });
  const pendingDir = `${root}/state/pending-reports`;
  return {
    bare,
    pendingDir,
    sink: () => new PendingReportSink(inner, pendingDir),
    down: () => Deno.rename(bare, `${bare}.away`),
    up: () => Deno.rename(`${bare}.away`, bare),
    shown: (path: string) => git(["show", `${BRANCH}:${path}`], bare),
    close: async () => {
      await daemon.stop();
      await Deno.remove(root, { recursive: true });
    },
  };
}

Deno.test("PendingReportSink keeps reports the remote did not take and pushes them when it returns", async () => {
  const w = await world();
  try {
    const s = w.sink();
    await s.publish([execution("# started\n")], "execution of p: running");
    await w.down();
    await rejects(s.publish([execution("# node 1 done\n")], "execution of p: node 1"));
    // A later report while the remote is still away supersedes the earlier one on the same path.
    await rejects(s.publish([execution("# completed\n")], "execution of p: completed"));
    assertEquals((await s.pending()).map((d) => d.markdown), ["# completed\n"]);
    const away = await git(["show", `${BRANCH}:reports/p/execution.md`], `${w.bare}.away`);
    assertEquals(away, "# started", "nothing pushed meanwhile");
    // Still down: the retry fails and the queue is kept.
    await rejects(s.retryPending());
    assertEquals((await s.pending()).length, 1);

    // A restarted process (a new sink over the same directory) finds the queue and pushes it.
    await w.up();
    const r = await w.sink().retryPending();
    ok(r?.status === "committed", JSON.stringify(r));
    assertEquals(await w.shown("reports/p/execution.md"), "# completed");
    const subject = await git(["log", "-1", "--format=%s", BRANCH], w.bare);
    ok(subject.includes("execution of p: node 1; execution of p: completed"), subject);
    assertEquals(await w.sink().pending(), []);
    assertEquals(await w.sink().retryPending(), undefined, "nothing left to push");
  } finally {
    await w.close();
  }
});

Deno.test("PendingReportSink folds the queue into the next publish, so a kept report never lands after a newer one", async () => {
  const w = await world();
  try {
    const s = w.sink();
    await w.down();
    const preview: ReportDocument = {
      plan: "p",
      kind: "preview",
      branch: "plan/p",
      markdown: "# preview\n",
    };
    await rejects(s.publish([execution("# old\n"), preview], "both"));
    await w.up();
    await s.publish([execution("# new\n")], "newer");
    assertEquals(await w.shown("reports/p/execution.md"), "# new");
    assertEquals(await w.shown("reports/p/preview/plan~p.md"), "# preview", "kept one pushed too");
    assertEquals(await s.retryPending(), undefined);
    assertEquals(await git(["rev-list", "--count", BRANCH], w.bare), "1", "one commit for both");
  } finally {
    await w.close();
  }
});

Deno.test("PendingReportSink never queues a report cairn refuses (an unsafe plan name)", async () => {
  const w = await world();
  try {
    const s = w.sink();
    await rejects(
      s.publish([{ plan: "../x", kind: "execution", markdown: "x" }], "bad"),
      (e: { reason?: string }) => e.reason === "PlanPathInvalid",
    );
    assertEquals(await s.pending(), []);
  } finally {
    await w.close();
  }
});

Deno.test("PendingReportSink sets an unreadable queue aside once instead of blocking every later report", async () => {
  const w = await world();
  try {
    await Deno.mkdir(w.pendingDir, { recursive: true });
    await Deno.writeTextFile(`${w.pendingDir}/pending.json`, "{ half a queue");
    const s = w.sink();
    await rejects(s.retryPending(), (e: Error) => e.message.includes("set aside"));
    assertEquals(
      await Deno.readTextFile(`${w.pendingDir}/pending.json.unreadable`),
      "{ half a queue",
    );
    await s.publish([execution("# after\n")], "after");
    assertEquals(await w.shown("reports/p/execution.md"), "# after");
  } finally {
    await w.close();
  }
});
