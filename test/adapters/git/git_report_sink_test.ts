import { deepStrictEqual as assertEquals, ok, rejects } from "node:assert/strict";
import { CairnError } from "../../../src/domain/errors.ts";
import { GitRemote } from "../../../src/adapters/git/git_remote.ts";
import { BRANCH_FILE_MAX, branchFileName } from "../../../src/adapters/git/plan_paths.ts";
import {
  GitReportSink,
  isMovedBranch,
  type ReportBranchRemote,
} from "../../../src/adapters/git/git_report_sink.ts";
import { SimClock } from "../../../src/sim/clock.ts";
import {
  createBareRepo,
  git,
  type GitDaemon,
  GitWorkTree,
  startGitDaemon,
} from "../../_helpers/git_daemon.ts";

interface Fixture {
  readonly root: string;
  readonly bare: string;
  readonly daemon: GitDaemon;
  readonly remote: GitRemote;
  readonly other: GitWorkTree;
  close(): Promise<void>;
}

async function fixture(): Promise<Fixture> {
  const root = await Deno.makeTempDir({ prefix: "cairn-sink-" });
  await Deno.mkdir(`${root}/srv`);
  const bare = await createBareRepo(`${root}/srv`, "plans.git");
  // The server refuses any non-fast-forward update: a force push could never land silently.
  await git(["config", "receive.denyNonFastForwards", "true"], bare);
  await git(["config", "receive.denyDeletes", "true"], bare);
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
  const other = await GitWorkTree.clone(daemon.url("plans.git"), `${root}/other`);
  return {
    root,
    bare,
    daemon,
    remote,
    other,
    close: async () => {
      await daemon.stop();
      await Deno.remove(root, { recursive: true });
    },
  };
}

function sink(
  remote: ReportBranchRemote,
  extra: Partial<{ maxAttempts: number; branch: string }> = {},
) {
  return new GitReportSink(remote, {
    authorName: "cairn bot",
    authorEmail: "cairn@example.com",
    clock: new SimClock(Date.UTC(2026, 9, 20, 12, 0, 0)),
    ...extra,
  });
}

const preview = {
  plan: "p",
  kind: "preview" as const,
  branch: "plan/p",
  markdown: "# Preview\n\nready\n",
};

function reasonOf(err: unknown): string {
  return err instanceof CairnError ? err.reason : `not a CairnError: ${String(err)}`;
}

Deno.test("GitReportSink commits a report onto the watched branch with the configured author", async () => {
  const f = await fixture();
  try {
    const before = await git(["rev-parse", "main"], f.bare);
    const result = await sink(f.remote).publish([preview], "reports: preview of p");
    assertEquals(result.status, "committed");
    assertEquals(result.attempts, 1);
    assertEquals(await git(["rev-parse", "main"], f.bare), result.commit);
    assertEquals(await git(["rev-parse", `${result.commit}^`], f.bare), before);
    assertEquals(
      await git(["show", `main:reports/p/preview/plan~p.md`], f.bare),
      "# Preview\n\nready",
    );
    assertEquals(await git(["show", "main:plans/p.yaml"], f.bare), "kind: TalosUpgrade");
    assertEquals(
      await git(["log", "-1", "--format=%an <%ae>|%cn|%at|%s", "main"], f.bare),
      `cairn bot <cairn@example.com>|cairn bot|${
        Date.UTC(2026, 9, 20, 12) / 1000
      }|reports: preview of p`,
    );
  } finally {
    await f.close();
  }
});

Deno.test("GitReportSink makes no commit when the report bytes are unchanged", async () => {
  const f = await fixture();
  try {
    const s = sink(f.remote);
    const first = await s.publish([preview], "one");
    const second = await s.publish([preview], "two");
    assertEquals(second.status, "unchanged");
    assertEquals(second.commit, first.commit);
    assertEquals(await git(["rev-list", "--count", "main"], f.bare), "2");
  } finally {
    await f.close();
  }
});

Deno.test("GitReportSink rebuilds on a concurrent push and retries; both changes survive", async () => {
  const f = await fixture();
  try {
    let otherCommit = "";
    // Someone else pushes between our fetch and our push: a real race on the real remote.
    const racing: ReportBranchRemote = {
      gitDir: f.remote.gitDir,
      watchedBranch: "main",
      fetchBranch: async (branch) => {
        const tip = await f.remote.fetchBranch(branch);
        if (!otherCommit) {
          await f.other.pull("main");
          otherCommit = await f.other.commit({ "plans/q.yaml": "kind: ConfigApply\n" }, "add q");
          await f.other.push("main");
        }
        return tip;
      },
    };
    const result = await sink(racing).publish([preview], "reports: preview of p");
    assertEquals(result.status, "committed");
    assertEquals(result.attempts, 2, "first push rejected, second landed");
    assertEquals(await git(["rev-parse", "main"], f.bare), result.commit);
    assertEquals(await git(["rev-parse", `${result.commit}^`], f.bare), otherCommit);
    await git(["merge-base", "--is-ancestor", otherCommit, "main"], f.bare);
    assertEquals(await git(["show", "main:plans/q.yaml"], f.bare), "kind: ConfigApply");
    assertEquals(
      await git(["show", "main:reports/p/preview/plan~p.md"], f.bare),
      "# Preview\n\nready",
    );
  } finally {
    await f.close();
  }
});

Deno.test("GitReportSink gives up with GitPushRejected when the branch keeps moving, never forcing", async () => {
  const f = await fixture();
  try {
    const others: string[] = [];
    const alwaysRacing: ReportBranchRemote = {
      gitDir: f.remote.gitDir,
      watchedBranch: "main",
      fetchBranch: async (branch) => {
        const tip = await f.remote.fetchBranch(branch);
        await f.other.pull("main");
        others.push(await f.other.commit({ [`notes/${others.length}.md`]: "x\n" }, "busy"));
        await f.other.push("main");
        return tip;
      },
    };
    await rejects(
      sink(alwaysRacing, { maxAttempts: 3 }).publish([preview], "r"),
      (e) => reasonOf(e) === "GitPushRejected",
    );
    assertEquals(others.length, 3);
    assertEquals(await git(["rev-parse", "main"], f.bare), others[2]);
    const missing = await git(["ls-tree", "main", "reports/"], f.bare);
    assertEquals(missing, "", "no report commit landed");
  } finally {
    await f.close();
  }
});

Deno.test("GitReportSink writes to a separate report branch, creating it when absent", async () => {
  const f = await fixture();
  try {
    const s = sink(f.remote, { branch: "cairn-reports" });
    const exec = { plan: "p", kind: "execution" as const, markdown: "# Execution\n" };
    const first = await s.publish([preview, exec], "reports");
    assertEquals(await git(["rev-parse", "cairn-reports"], f.bare), first.commit);
    assertEquals(
      await git(["ls-tree", "-r", "--name-only", "cairn-reports"], f.bare),
      "reports/p/execution.md\nreports/p/preview/plan~p.md",
    );
    const second = await s.publish([{ ...exec, markdown: "# Execution\n\ndone\n" }], "update");
    assertEquals(await git(["rev-parse", `${second.commit}^`], f.bare), first.commit);
    assertEquals(
      await git(["show", "cairn-reports:reports/p/preview/plan~p.md"], f.bare),
      "# Preview\n\nready",
    );
    ok((await git(["ls-tree", "main", "reports/"], f.bare)) === "", "watched branch untouched");
  } finally {
    await f.close();
  }
});

Deno.test("GitReportSink refuses report paths built from unsafe plan names", async () => {
  const f = await fixture();
  try {
    for (const plan of ["../escape", "/abs", ".hidden", "a\nb", "a\0b", "x".repeat(101), ""]) {
      await rejects(
        sink(f.remote).publish([{ plan, kind: "preview", branch: "b", markdown: "x" }], "m"),
        (e) => reasonOf(e) === "PlanPathInvalid",
        JSON.stringify(plan),
      );
    }
    assertEquals(await git(["rev-list", "--count", "main"], f.bare), "1");
  } finally {
    await f.close();
  }
});

Deno.test("GitReportSink keeps one preview per branch: branches never overwrite each other's", async () => {
  const f = await fixture();
  try {
    const branches = [
      "plan/p",
      "plan/q",
      "plan_p", // would collide with plan/p under a naive '/' → '_' mapping
      "../x", // path tricks stay inside reports/p/preview/
      "a/../../b",
      ".hidden",
      "*bold* [link](http://x)",
      "ünï/cødé",
    ];
    const s = sink(f.remote, { branch: "cairn-reports" });
    const docs = branches.map((branch) => ({
      plan: "p",
      kind: "preview" as const,
      branch,
      markdown: `# Preview of ${branch}\n`,
    }));
    await s.publish(docs, "previews");
    const listed = (await git(["ls-tree", "-r", "--name-only", "cairn-reports"], f.bare))
      .split("\n");
    assertEquals(listed.length, branches.length, listed.join("\n"));
    for (const path of listed) {
      ok(/^reports\/p\/preview\/[A-Za-z0-9_~-][A-Za-z0-9._~-]*\.md$/.test(path), path);
    }
    for (const branch of branches) {
      const path = listed.find((p) => p.endsWith(`/${branchFileName(branch)}.md`))!;
      assertEquals(await git(["show", `cairn-reports:${path}`], f.bare), `# Preview of ${branch}`);
    }
    // A later preview of one branch leaves the others' files as they were.
    await s.publish([{ ...docs[0]!, markdown: "# Preview of plan/p, again\n" }], "again");
    assertEquals(
      await git(["show", "cairn-reports:reports/p/preview/plan~q.md"], f.bare),
      "# Preview of plan/q",
    );
  } finally {
    await f.close();
  }
});

Deno.test("GitReportSink refuses a preview whose branch name cannot name a file, committing nothing", async () => {
  const f = await fixture();
  try {
    for (const branch of ["", "b".repeat(BRANCH_FILE_MAX + 1)]) {
      await rejects(
        sink(f.remote).publish([{ ...preview, branch }], "m"),
        (e) => reasonOf(e) === "PlanPathInvalid",
        branch.slice(0, 20),
      );
    }
    assertEquals(await git(["rev-list", "--count", "main"], f.bare), "1");
  } finally {
    await f.close();
  }
});

Deno.test("isMovedBranch() tells a moved branch from other push failures", () => {
  ok(isMovedBranch("!\trefs/heads/x:refs/heads/main\t[rejected] (fetch first)"));
  ok(isMovedBranch("!\tabc:refs/heads/main\t[remote rejected] (failed to update ref)"));
  ok(!isMovedBranch("fatal: unable to connect to 127.0.0.1"));
  ok(!isMovedBranch("!\tabc:refs/heads/main\t[remote rejected] (pre-receive hook declined)"));
});
