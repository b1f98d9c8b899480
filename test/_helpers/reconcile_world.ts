/**
 * A reconcile world for end-to-end tests and benchmarks: a bare plan repository served by
 * `git daemon` on loopback, a work tree pushing as "someone else", throwaway ssh keys for
 * alice (author), bob and carol (approvers) with allowed_signers outside the repository, the
 * twin as the cluster, a libSQL journal file, and the reconciler wired as `cairn reconcile`
 * wires it (poll/hook wake-up included).
 */
import { join } from "node:path";
import { cryptoIdSource, openJournal } from "../../src/adapters/journal/libsql_journal.ts";
import { generateKey, signBytes } from "../../src/adapters/ssh/ssh_keygen.ts";
import { fetchEvidenceIntoCache } from "../../src/app/evidence_run.ts";
import { createReconciler, HookWakeup } from "../../src/app/reconcile_wiring.ts";
import { DEFAULT_REPORT_BRANCH } from "../../src/config.ts";
import { parseEvidenceManifest } from "../../src/domain/evidence/manifest.ts";
import { buildUpstreamRepos } from "../../src/sim/evidence_fixture.ts";
import { TEST_PKI_CACHE } from "../../src/app/twin_process.ts";
import {
  startTwinCluster,
  type TwinCluster,
  twinExecutionTiming,
  twinInstallerResolver,
} from "../../src/app/twin_cluster.ts";
import type { Reconciler } from "../../src/engine/reconcile/reconciler.ts";
import type { Journal } from "../../src/ports/journal.ts";
import type { Logger } from "../../src/ports/logger.ts";
import { createBareRepo, git, type GitDaemon, GitWorkTree, startGitDaemon } from "./git_daemon.ts";
import { MemoryLogger } from "./memory_logger.ts";
import { ROOT } from "./twin_world.ts";

export const PEOPLE = ["alice", "bob", "carol"] as const;
export type Person = (typeof PEOPLE)[number];

export interface ReconcileWorld {
  readonly dir: string;
  readonly bare: string;
  /** The allowed_signers trust root (outside the repository). */
  readonly trustPath: string;
  readonly daemon: GitDaemon;
  readonly wt: GitWorkTree;
  readonly tc: TwinCluster;
  readonly journal: Journal;
  readonly reconciler: Reconciler;
  readonly wakeup: HookWakeup;
  readonly stopper: AbortController;
  readonly log: MemoryLogger;
  /** The evidence cache, filled from local upstream repositories (every tuple fetched). */
  readonly evidenceCache: string;
  /** Another reconciler over the same repository, journal and twin (a restart). */
  makeReconciler(signal: AbortSignal): Promise<Reconciler>;
  /** The example plan's text. */
  readonly planText: string;
  /** Armored signatures of `text` by each person, concatenated (a `.sig` file). */
  sign(text: string, who: readonly Person[]): Promise<string>;
  /** The branch reports are committed to (`cairn-reports`, the config's default). */
  readonly reportBranch: string;
  /** A file on the report branch of the served repository, or undefined. */
  reportAt(path: string): Promise<string | undefined>;
  /** Every file on every branch of the served repository: path → text, keyed `branch:path`. */
  committedFiles(): Promise<Map<string, string>>;
  stop(): Promise<void>;
}

export interface ReconcileWorldOptions {
  readonly pollIntervalMs?: number;
  readonly log?: Logger;
  /** Wraps the journal the executor writes through (benchmarks time its first intent). */
  readonly wrapJournal?: (j: Journal) => Journal;
  /** Where reports go (default `cairn-reports`, as `cairn reconcile` defaults it). */
  readonly reportBranch?: string;
}

/** Builds the world with an initial commit (catalogue + health policy) on main. */
export async function startReconcileWorld(o: ReconcileWorldOptions = {}): Promise<ReconcileWorld> {
  const dir = await Deno.makeTempDir({ prefix: "cairn-reconcile-" });
  const closers: Array<() => Promise<unknown> | void> = [];
  try {
    const served = join(dir, "served");
    await Deno.mkdir(served);
    const bare = await createBareRepo(served, "plans.git");
    const daemon = await startGitDaemon(served);
    closers.push(() => daemon.stop());
    const wt = await initialCommit(daemon.url("plans.git"), join(dir, "work"));
    const trustPath = await trustRoot(dir);
    const evidenceCache = await fillEvidenceCache(dir);
    const tc = await startTwinCluster({
      cluster: join(ROOT, "fixtures/clusters/home-ops.yaml"),
      pkiCacheDir: TEST_PKI_CACHE,
    });
    closers.push(() => tc.stop());
    const installers = await twinInstallerResolver(tc.twin);
    const journal = await openJournal({
      url: `file:${join(dir, "journal.db")}`,
      ids: cryptoIdSource(),
      nowMs: tc.clock.now(),
    });
    closers.push(() => journal.close());
    const stopper = new AbortController();
    closers.push(() => stopper.abort());
    const wakeup = new HookWakeup(stopper.signal);
    const log = new MemoryLogger();
    const reportBranch = o.reportBranch ?? DEFAULT_REPORT_BRANCH;
    const makeReconciler = (signal: AbortSignal, wake: HookWakeup) =>
      createReconciler({
        git: {
          remote: daemon.url("plans.git"),
          cacheDir: join(dir, "state", "repo-cache"),
          branch: "main",
          reportBranch,
          reportAuthor: { name: "cairn", email: "cairn@localhost" },
          pendingReportsDir: join(dir, "state", "pending-reports"),
        },
        executor: {
          journal: o.wrapJournal ? o.wrapJournal(journal) : journal,
          cluster: tc.cluster,
          ...twinExecutionTiming(tc.clock),
          log: o.log ?? log,
          owner: "ctl_e2e",
          installers,
        },
        allowedSignersPath: trustPath,
        requiredApprovals: 1,
        pollIntervalMs: o.pollIntervalMs ?? 1_000,
        planBranchesGlob: "plan/*",
        evidenceCacheDir: evidenceCache,
        signal,
        wakeup: wake,
      });
    const reconciler = await makeReconciler(stopper.signal, wakeup);
    const planText = await Deno.readTextFile(join(ROOT, "plans/talos-v1.14.2.yaml"));
    return {
      dir,
      bare,
      trustPath,
      daemon,
      wt,
      tc,
      journal,
      reconciler,
      wakeup,
      stopper,
      log,
      evidenceCache,
      planText,
      makeReconciler: (signal) => makeReconciler(signal, new HookWakeup(signal)),
      sign: (text, who) => signAll(dir, text, who),
      reportBranch,
      reportAt: async (path) => {
        try {
          return await git(["--git-dir", bare, "show", `${reportBranch}:${path}`]);
        } catch {
          return undefined;
        }
      },
      committedFiles: () => committedFiles(bare),
      async stop() {
        for (const c of closers.splice(0).reverse()) await c();
        await removeDir(dir);
      },
    };
  } catch (e) {
    for (const c of closers.reverse()) await c();
    throw e;
  }
}

async function committedFiles(bare: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const refs = await git([
    "--git-dir",
    bare,
    "for-each-ref",
    "--format=%(refname:short)",
    "refs/heads",
  ]);
  for (const branch of refs.split("\n").filter((b) => b)) {
    const paths = await git(["--git-dir", bare, "ls-tree", "-r", "--name-only", branch]);
    for (const path of paths.split("\n").filter((p) => p)) {
      files.set(`${branch}:${path}`, await git(["--git-dir", bare, "show", `${branch}:${path}`]));
    }
  }
  return files;
}

async function initialCommit(url: string, dir: string): Promise<GitWorkTree> {
  const wt = await GitWorkTree.clone(url, dir);
  await wt.run("checkout", "--quiet", "-b", "main");
  const files: Record<string, string> = { "README.md": "# plans\n" };
  for (
    const f of ["catalogue/talos.yaml", "policies/home-ops.yaml", "evidence/upgrade-order.yaml"]
  ) {
    files[f] = await Deno.readTextFile(join(ROOT, f));
  }
  await wt.commit(files, "Initial");
  await wt.push("main");
  return wt;
}

/** Fetches the example manifest's pinned files from local upstream repositories into a cache. */
async function fillEvidenceCache(dir: string): Promise<string> {
  const file = "evidence/upgrade-order.yaml";
  const parsed = parseEvidenceManifest(await Deno.readTextFile(join(ROOT, file)), file);
  if (!parsed.ok) throw new Error(`${file} does not parse`);
  const repos = await buildUpstreamRepos(join(dir, "upstream"));
  const cache = join(dir, "state", "evidence");
  const fetched = await fetchEvidenceIntoCache(parsed.manifest, cache, repos.gitEnv);
  if (![...fetched.values()].every((f) => f.ok)) throw new Error("evidence fetch failed");
  return cache;
}

async function trustRoot(dir: string): Promise<string> {
  const keys = join(dir, "keys");
  await Deno.mkdir(keys);
  const lines: string[] = [];
  for (const p of PEOPLE) {
    const pub = await generateKey("ed25519", join(keys, p), `${p}@example.com`);
    lines.push(`${p}@example.com ${pub.split(/\s+/).slice(0, 2).join(" ")}`);
  }
  const path = join(dir, "allowed_signers");
  await Deno.writeTextFile(path, lines.join("\n") + "\n");
  return path;
}

async function signAll(dir: string, text: string, who: readonly Person[]): Promise<string> {
  const bytes = new TextEncoder().encode(text);
  let out = "";
  for (const p of who) out += await signBytes(bytes, { key: join(dir, "keys", p) });
  return out;
}

/** Removes the world's directory; a process that just exited may still be closing files in it. */
async function removeDir(dir: string): Promise<void> {
  for (let tries = 1;; tries++) {
    try {
      return await Deno.remove(dir, { recursive: true });
    } catch (e) {
      if (tries >= 5) throw e;
    }
  }
}
