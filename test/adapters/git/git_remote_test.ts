import { deepStrictEqual as assertEquals, ok, rejects } from "node:assert/strict";
import { CairnError } from "../../../src/domain/errors.ts";
import { GitRemote } from "../../../src/adapters/git/git_remote.ts";
import { useGitProgram } from "../../../src/adapters/git/run_git.ts";
import {
  createBareRepo,
  git,
  type GitDaemon,
  GitWorkTree,
  startGitDaemon,
} from "../../_helpers/git_daemon.ts";
import { startSilentListener, within } from "../../_helpers/silent_listener.ts";

const td = new TextDecoder();

interface Fixture {
  readonly root: string;
  readonly daemon: GitDaemon;
  readonly url: string;
  readonly work: GitWorkTree;
  close(): Promise<void>;
}

async function fixture(): Promise<Fixture> {
  const root = await Deno.makeTempDir({ prefix: "cairn-git-" });
  await Deno.mkdir(`${root}/srv`);
  await createBareRepo(`${root}/srv`, "plans.git");
  const daemon = await startGitDaemon(`${root}/srv`);
  const url = daemon.url("plans.git");
  const seed = await GitWorkTree.clone(`file://${root}/srv/plans.git`, `${root}/seed`);
  await seed.run("checkout", "--quiet", "-b", "main");
  await seed.commit({ "README.md": "plans live here\n" }, "initial");
  await seed.push("main");
  const work = await GitWorkTree.clone(url, `${root}/work`);
  return {
    root,
    daemon,
    url,
    work,
    close: async () => {
      await daemon.stop();
      await Deno.remove(root, { recursive: true });
    },
  };
}

async function openRemote(f: Fixture, url = f.url): Promise<GitRemote> {
  return await GitRemote.open({ url, cacheDir: `${f.root}/cache`, watchedBranch: "main" });
}

/** Commits `files` onto main as a contributor would (up to date first) and pushes them. */
async function pushToMain(f: Fixture, files: Record<string, string>, message: string) {
  await f.work.checkout("main");
  await f.work.pull("main");
  await f.work.commit(files, message);
  await f.work.push("main");
}

function reasonOf(err: unknown): string {
  return err instanceof CairnError ? err.reason : `not a CairnError: ${String(err)}`;
}

Deno.test("GitRemote.fetch() over git:// picks up a commit pushed after the previous fetch", async () => {
  const f = await fixture();
  try {
    const remote = await openRemote(f);
    const first = await remote.fetch();
    assertEquals(first.watched.commit, await f.work.run("rev-parse", "HEAD"));
    assertEquals(first.changed, ["main"]);
    const again = await remote.fetch();
    assertEquals(again.changed, [], "an idle remote reports no change");
    const next = await f.work.commit({ "plans/a.yaml": "kind: A\n" }, "add a");
    await f.work.push("main");
    const second = await remote.fetch();
    assertEquals(second.watched.commit, next);
    assertEquals(second.changed, ["main"]);
  } finally {
    await f.close();
  }
});

Deno.test("GitRemote lists plan branches and the plans with signatures at their tips", async () => {
  const f = await fixture();
  try {
    await f.work.checkout("plan/talos", true);
    const tip = await f.work.commit({
      "plans/talos-v1.14.2.yaml": "kind: TalosUpgrade\n",
      "plans/talos-v1.14.2.yaml.sig": "-----BEGIN SSH SIGNATURE-----\n",
      "plans/notes.txt": "ignored\n",
    }, "propose talos");
    await f.work.push("plan/talos");
    const remote = await openRemote(f);
    const fetched = await remote.fetch();
    assertEquals(fetched.branches, [{ branch: "plan/talos", commit: tip }]);
    const listing = await remote.listPlans(tip);
    assertEquals(listing.refused, []);
    assertEquals(listing.plans.map((p) => p.name), ["talos-v1.14.2"]);
    const plan = listing.plans[0]!;
    assertEquals(plan.path, "plans/talos-v1.14.2.yaml");
    assertEquals(td.decode(plan.bytes), "kind: TalosUpgrade\n");
    assertEquals(td.decode(plan.signature!), "-----BEGIN SSH SIGNATURE-----\n");
    assertEquals(plan.blob, await f.work.run("rev-parse", `${tip}:plans/talos-v1.14.2.yaml`));
    const onMain = await remote.listPlans(fetched.watched.commit);
    assertEquals(onMain.plans, [], "the plan is not on the watched branch yet");
  } finally {
    await f.close();
  }
});

Deno.test("GitRemote.introductions() gives merge order and the merge commit that added each plan", async () => {
  const f = await fixture();
  try {
    const w = f.work;
    await w.checkout("plan/b", true);
    await w.commit({ "plans/b.yaml": "b\n", "plans/b.yaml.sig": "sig\n" }, "propose b");
    await w.checkout("main");
    await w.checkout("plan/a", true);
    await w.commit({ "plans/a.yaml": "a\n" }, "propose a");
    await w.checkout("main");
    const mergeB = await w.merge("plan/b");
    const mergeA = await w.merge("plan/a");
    await w.push("main");
    const remote = await openRemote(f);
    const head = (await remote.fetch()).watched.commit;
    const intro = await remote.introductions(head);
    assertEquals(intro.map((i) => [i.name, i.commit, i.order]), [["b", mergeB, 0], [
      "a",
      mergeA,
      1,
    ]]);
    ok(intro.every((i) => i.committedAt > 1_600_000_000_000), "committer time in epoch ms");
    const later = await w.commit({ "plans/c.yaml": "c\n", "plans/a.yaml": "a changed\n" }, "c");
    await w.push("main");
    const head2 = (await remote.fetch()).watched.commit;
    const incremental = await remote.introductions(head2, head);
    assertEquals(incremental.map((i) => [i.name, i.commit]), [["c", later]]);
  } finally {
    await f.close();
  }
});

Deno.test("GitRemote.listPlans() refuses hidden, oversized, symlinked and oddly named plan files", async () => {
  const f = await fixture();
  try {
    const long = "x".repeat(101);
    const tip = await f.work.commit({
      "plans/.hidden.yaml": "h\n",
      "plans/ok.yaml": "ok\n",
      [`plans/${long}.yaml`]: "long\n",
      "plans/sp ace.yaml": "s\n",
      "plans/big.yaml": "y".repeat(2048),
    }, "odd names");
    await Deno.writeTextFile(`${f.work.dir}/plans/evil\nname.yaml`, "nl\n");
    await Deno.symlink("/etc/passwd", `${f.work.dir}/plans/link.yaml`);
    await f.work.run("add", "--", "plans");
    await f.work.run("commit", "--quiet", "-m", "more odd names");
    await f.work.push("main");
    const remote = await GitRemote.open({
      url: f.url,
      cacheDir: `${f.root}/cache`,
      watchedBranch: "main",
      maxPlanBytes: 1024,
    });
    const head = (await remote.fetch()).watched.commit;
    ok(head !== tip);
    const listing = await remote.listPlans(head);
    assertEquals(listing.plans.map((p) => p.name), ["ok"]);
    const refused = Object.fromEntries(listing.refused.map((r) => [r.path, r.reason]));
    assertEquals(refused, {
      "plans/.hidden.yaml": "PlanPathInvalid",
      [`plans/${long}.yaml`]: "PlanPathInvalid",
      "plans/big.yaml": "PlanTooLarge",
      "plans/evil\\u000aname.yaml": "PlanPathInvalid",
      "plans/link.yaml": "PlanPathInvalid",
      "plans/sp ace.yaml": "PlanPathInvalid",
    });
    const intro = await remote.introductions(head);
    // Names that are unsafe as paths never surface; `link` does (its name is fine), and
    // listPlans() is what refuses its content.
    assertEquals(intro.map((i) => i.name), ["big", "ok", "link"]);
  } finally {
    await f.close();
  }
});

Deno.test("GitRemote.readFile() returns bytes, undefined for a missing path, and refuses path tricks", async () => {
  const f = await fixture();
  try {
    const remote = await openRemote(f);
    const head = (await remote.fetch()).watched.commit;
    assertEquals(td.decode((await remote.readFile(head, "README.md"))!), "plans live here\n");
    assertEquals(await remote.readFile(head, "plans/none.yaml"), undefined);
    for (const path of ["../etc/passwd", "/etc/passwd", "plans/../README.md", "a\0b"]) {
      await rejects(remote.readFile(head, path), (e) => reasonOf(e) === "PlanPathInvalid");
    }
    await rejects(
      remote.readFile("0".repeat(40), "README.md"),
      (e) => reasonOf(e) === "GitObjectMissing",
    );
    await rejects(remote.listPlans("HEAD"), (e) => reasonOf(e) === "GitObjectMissing");
  } finally {
    await f.close();
  }
});

Deno.test("GitRemote.readFile() read again at a commit gives that commit's bytes, whatever the caller did with the last copy", async () => {
  const f = await fixture();
  try {
    const remote = await openRemote(f);
    const old = (await remote.fetch()).watched.commit;
    const first = (await remote.readFile(old, "README.md"))!;
    first.fill(0); // a caller scribbling on its copy must not change the next read
    assertEquals(td.decode((await remote.readFile(old, "README.md"))!), "plans live here\n");
    await f.work.commit({ "README.md": "plans moved\n" }, "edit");
    await f.work.push("main");
    const next = (await remote.fetch()).watched.commit;
    assertEquals(td.decode((await remote.readFile(next, "README.md"))!), "plans moved\n");
    assertEquals(td.decode((await remote.readFile(old, "README.md"))!), "plans live here\n");
  } finally {
    await f.close();
  }
});

Deno.test("GitRemote.fetch() translates failures: unreachable remote, missing watched branch", async () => {
  const f = await fixture();
  try {
    const gone = await GitRemote.open({
      url: `file://${f.root}/srv/absent.git`,
      cacheDir: `${f.root}/cache-gone`,
      watchedBranch: "main",
    });
    await rejects(gone.fetch(), (e) => reasonOf(e) === "GitFetchFailed");
    const wrong = await GitRemote.open({
      url: f.url,
      cacheDir: `${f.root}/cache-b`,
      watchedBranch: "trunk",
    });
    await rejects(wrong.fetch(), (e) => reasonOf(e) === "GitBranchMissing");
    await rejects(
      GitRemote.open({
        url: f.url,
        cacheDir: `${f.root}/cache-c`,
        watchedBranch: "--upload-pack=x",
      }),
      (e) => reasonOf(e) === "ConfigInvalid",
    );
  } finally {
    await f.close();
  }
});

Deno.test("GitRemote works over file:// as well as git://", async () => {
  const f = await fixture();
  try {
    const remote = await openRemote(f, `file://${f.root}/srv/plans.git`);
    const fetched = await remote.fetch();
    assertEquals(
      fetched.watched.commit,
      await git(["rev-parse", "main"], `${f.root}/srv/plans.git`),
    );
  } finally {
    await f.close();
  }
});

Deno.test("GitRemote.open() refuses a remote URL git would read as an option or a remote helper", async () => {
  const root = await Deno.makeTempDir({ prefix: "cairn-git-" });
  try {
    const marker = `${root}/pwned`;
    for (
      const url of [
        `--upload-pack=touch ${marker}`,
        `ext::sh -c touch% ${marker}`,
        "file:///srv/plans.git\n[core]\n\tsshCommand = touch x",
      ]
    ) {
      await rejects(
        GitRemote.open({ url, cacheDir: `${root}/cache`, watchedBranch: "main" }),
        (e) => reasonOf(e) === "ConfigInvalid",
        url,
      );
      await rejects(Deno.lstat(marker), Deno.errors.NotFound);
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("GitRemote.fetch() from a remote that never answers ends at its deadline with GitTimedOut", async () => {
  const root = await Deno.makeTempDir({ prefix: "cairn-git-" });
  const silent = startSilentListener();
  try {
    const remote = await GitRemote.open({
      url: `git://127.0.0.1:${silent.port}/plans.git`,
      cacheDir: `${root}/cache`,
      watchedBranch: "main",
      timeoutMs: 1_000,
    });
    const started = Date.now();
    await rejects(within(10_000, remote.fetch()), (e) => reasonOf(e) === "GitTimedOut");
    await rejects(
      within(10_000, remote.fetchBranch("plan/x")),
      (e) => reasonOf(e) === "GitTimedOut",
    );
    ok(Date.now() - started < 8_000, `took ${Date.now() - started} ms`);
    ok(silent.accepted() >= 2);
  } finally {
    await silent.close();
    await Deno.remove(root, { recursive: true });
  }
});

/**
 * Pushes a commit holding a readable policy, a symlink to /dev/zero and a blob over a 1 KiB cap,
 * and opens a remote with that cap at it: the entries readFile must refuse, each for its reason.
 */
async function refusableBoundFiles(f: Fixture) {
  await f.work.checkout("main");
  await f.work.pull("main");
  await Deno.symlink("/dev/zero", `${f.work.dir}/zero.yaml`);
  await f.work.run("add", "--", "zero.yaml");
  await f.work.commit({
    "policies/home.yaml": "cluster: home-ops\n",
    "big.yaml": new Uint8Array(4096),
  }, "bound files");
  await f.work.push("main");
  const remote = await GitRemote.open({
    url: f.url,
    cacheDir: `${f.root}/cache`,
    watchedBranch: "main",
    maxPlanBytes: 1024,
  });
  const head = (await remote.fetch()).watched.commit;
  return { remote, head };
}

Deno.test("GitRemote.readFile() refuses a symlink entry, a directory and a blob over the cap before reading it", async () => {
  const f = await fixture();
  try {
    const { remote, head } = await refusableBoundFiles(f);
    assertEquals(
      td.decode((await remote.readFile(head, "policies/home.yaml"))!),
      "cluster: home-ops\n",
    );
    const cases: [string, string][] = [
      ["zero.yaml", "BoundPathSymlink"],
      ["policies", "BoundFileNotRegular"],
      ["big.yaml", "BoundFileTooLarge"],
    ];
    for (const [path, reason] of cases) {
      await rejects(remote.readFile(head, path), (e) => reasonOf(e) === reason, path);
    }
  } finally {
    await f.close();
  }
});

Deno.test("GitRemote.prefetch() reads several files with one git process; readFile then answers without git", async () => {
  const f = await fixture();
  try {
    await pushToMain(f, {
      "policies/home.yaml": "cluster: home-ops\n",
      "catalogue/talos.yaml": "releases: []\n",
    }, "bound files");
    const cacheDir = `${f.root}/cache`;
    const remote = await openRemote(f);
    const head = (await remote.fetch()).watched.commit;
    await remote.prefetch(head, [
      "policies/home.yaml",
      "plans/catalogue/talos.yaml",
      "catalogue/talos.yaml",
    ]);
    // With the cache repository gone, only what the read-ahead kept can answer.
    await Deno.rename(cacheDir, `${f.root}/moved`);
    assertEquals(
      td.decode((await remote.readFile(head, "policies/home.yaml"))!),
      "cluster: home-ops\n",
    );
    assertEquals(
      td.decode((await remote.readFile(head, "catalogue/talos.yaml"))!),
      "releases: []\n",
    );
    assertEquals(await remote.readFile(head, "plans/catalogue/talos.yaml"), undefined);
    await rejects(remote.readFile(head, "README.md"), (e) => reasonOf(e) === "GitCommandFailed");
  } finally {
    await f.close();
  }
});

Deno.test("GitRemote.prefetch() keeps no link, directory or oversized blob: readFile still refuses each with its reason", async () => {
  const f = await fixture();
  try {
    const { remote, head } = await refusableBoundFiles(f);
    const cases: [string, string][] = [
      ["zero.yaml", "BoundPathSymlink"],
      ["policies", "BoundFileNotRegular"],
      ["big.yaml", "BoundFileTooLarge"],
    ];
    await remote.prefetch(head, [...cases.map(([p]) => p), "../escape.yaml"]);
    for (const [path, reason] of cases) {
      await rejects(remote.readFile(head, path), (e) => reasonOf(e) === reason, path);
    }
    await rejects(
      remote.readFile(head, "../escape.yaml"),
      (e) => reasonOf(e) === "PlanPathInvalid",
    );
  } finally {
    await f.close();
  }
});

Deno.test("a stop signal ends a fetch stuck on a silent remote at once with GitStopped, long before its deadline", async () => {
  const root = await Deno.makeTempDir({ prefix: "cairn-git-" });
  const silent = startSilentListener();
  try {
    const stopping = new AbortController();
    const remote = await GitRemote.open({
      url: `git://127.0.0.1:${silent.port}/plans.git`,
      cacheDir: `${root}/cache`,
      watchedBranch: "main",
      timeoutMs: 600_000,
    });
    const fetching = remote.fetch({ signal: stopping.signal });
    // Stop only once git is connected and waiting: the stop must reach a call in flight.
    for (let i = 0; i < 600 && silent.accepted() === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    ok(silent.accepted() > 0, "git connected");
    stopping.abort();
    await rejects(within(20_000, fetching), (e) => reasonOf(e) === "GitStopped");
    // The remote's own stop (given at open) reaches every network call, before it starts too.
    const closed = new AbortController();
    closed.abort();
    const stopped = await GitRemote.open({
      url: `git://127.0.0.1:${silent.port}/plans.git`,
      cacheDir: `${root}/cache`,
      watchedBranch: "main",
      timeoutMs: 600_000,
      signal: closed.signal,
    });
    await rejects(
      within(60_000, stopped.fetchBranch("plan/x")),
      (e) => reasonOf(e) === "GitStopped",
    );
  } finally {
    await silent.close();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("the cache repository runs no maintenance of its own: no gc, and no process after each fetch", async () => {
  const f = await fixture();
  try {
    const remote = await openRemote(f);
    const config = async (key: string) =>
      (await git(["--git-dir", remote.gitDir, "config", "--get", key])).trim();
    assertEquals(await config("gc.auto"), "0");
    assertEquals(await config("maintenance.auto"), "false");
    // A fetch started with git's trace on names every process it runs: no `maintenance run`.
    await f.work.commit({ "plans/a.yaml": "a: 1\n" }, "a plan");
    await f.work.push("main");
    const traced = await new Deno.Command("git", {
      args: ["--git-dir", remote.gitDir, "fetch", "--quiet", "--", "origin"],
      env: { GIT_TRACE: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const trace = td.decode(traced.stderr);
    ok(traced.success, trace);
    ok(trace.includes("run_command"), trace);
    ok(!trace.includes("maintenance run"), trace);
  } finally {
    await f.close();
  }
});

Deno.test("a plan listing and a bound file read each start one git process; a new tip is looked up once", async () => {
  const f = await fixture();
  const shim = await Deno.makeTempDir({ prefix: "cairn-git-shim-" });
  let undo = () => {};
  try {
    await pushToMain(f, {
      "plans/a.yaml": "a: 1\n",
      "plans/a.yaml.sig": "sig\n",
      "plans/b.yaml": "b: 1\n",
      "policies/home.yaml": "cluster: home-ops\n",
    }, "plans and a policy");
    const remote = await openRemote(f);
    const head = (await remote.fetch()).watched.commit;
    // A git that notes each start, then runs the real one.
    const real = (await new Deno.Command("sh", { args: ["-c", "command -v git"], stdout: "piped" })
      .output()).stdout;
    const log = `${shim}/starts`;
    await Deno.writeTextFile(
      `${shim}/git`,
      `#!/bin/sh\necho "$*" >> '${log}'\nexec '${td.decode(real).trim()}' "$@"\n`,
      { mode: 0o755 },
    );
    undo = useGitProgram(`${shim}/git`);
    const starts = async () =>
      (await Deno.readTextFile(log).catch(() => "")).split("\n").filter(
        (l) => l !== "",
      );
    const listing = await remote.listPlans(head);
    assertEquals(listing.plans.map((p) => [p.name, td.decode(p.bytes), !!p.signature]), [
      ["a", "a: 1\n", true],
      ["b", "b: 1\n", false],
    ]);
    assertEquals((await starts()).length, 1, (await starts()).join("\n"));
    assertEquals(
      td.decode((await remote.readFile(head, "policies/home.yaml"))!),
      "cluster: home-ops\n",
    );
    assertEquals((await starts()).length, 2, (await starts()).join("\n"));
    ok((await starts()).every((l) => l.endsWith("cat-file --batch-command")));
    // A new tip listed and walked together (as the reconcile loop does, listing first) is looked
    // up once, in the listing's process: two processes, the listing's and the walk's git log.
    await pushToMain(f, { "plans/c.yaml": "c: 1\n" }, "another plan");
    const tip = (await remote.fetch()).watched.commit;
    const before = (await starts()).length;
    const listed = remote.listPlans(tip);
    const [intros] = await Promise.all([remote.introductions(tip, head), listed]);
    assertEquals(intros.map((i) => i.name), ["c"]);
    const added = (await starts()).slice(before);
    assertEquals(added.map((l) => l.split(" ").find((w) => !w.startsWith("-"))).sort(), [
      "cat-file",
      "log",
    ], added.join("\n"));
  } finally {
    undo();
    await Deno.remove(shim, { recursive: true });
    await f.close();
  }
});

Deno.test("GitRemote.listPlans() reads ahead the files it is told in its own process: readFile answers them without git, and still refuses a link", async () => {
  const f = await fixture();
  try {
    const { remote, head } = await refusableBoundFiles(f);
    const listing = await remote.listPlans(head, {
      readAhead: ["policies/home.yaml", "zero.yaml", "nowhere.yaml", "../escape.yaml"],
    });
    assertEquals(listing.plans, []);
    // With the cache repository gone, only what the listing kept can answer.
    await Deno.rename(`${f.root}/cache`, `${f.root}/moved`);
    assertEquals(
      td.decode((await remote.readFile(head, "policies/home.yaml"))!),
      "cluster: home-ops\n",
    );
    assertEquals(await remote.readFile(head, "nowhere.yaml"), undefined);
    // Neither kept: each is read, and refused, on its own (here git cannot even start).
    await rejects(remote.readFile(head, "zero.yaml"), (e) => reasonOf(e) === "GitCommandFailed");
    await rejects(
      remote.readFile(head, "../escape.yaml"),
      (e) => reasonOf(e) === "PlanPathInvalid",
    );
  } finally {
    await f.close();
  }
});
