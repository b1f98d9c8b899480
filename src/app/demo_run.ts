/**
 * The demo's steps (for the `cairn demo` command, `cli/demo.ts`): repository and keys, twin,
 * reconciler, preview, merge, execution, summary. Loaded lazily by the command.
 */
import { previewReportPath } from "../adapters/git/plan_paths.ts";
import { join } from "node:path";
import { gitOrThrow, gitText } from "../adapters/git/run_git.ts";
import { cryptoIdSource, openJournal } from "../adapters/journal/by_url.ts";
import { JsonLogger } from "../adapters/log/json_logger.ts";
import { buildPresets, type FaultPresetName } from "../sim/fault_presets.ts";
import type { Journal } from "../ports/journal.ts";
import { allowedSignersText, type DemoSigner, demoSigner } from "./demo_keys.ts";
import { withPresetJournal } from "./rehearsal.ts";
import { createReconciler, HookWakeup } from "./reconcile_wiring.ts";
import { fetchEvidenceIntoCache } from "./evidence_run.ts";
import { parseEvidenceManifest } from "../domain/evidence/manifest.ts";
import { buildUpstreamRepos } from "../sim/evidence_fixture.ts";
import type { ClusterConnection } from "./run_plan.ts";
import {
  startTwinCluster,
  type TwinCluster,
  twinExecutionTiming,
  twinInstallerResolver,
} from "./twin_cluster.ts";
import { TEST_PKI_CACHE } from "./twin_process.ts";
import type { TalosUpgradePlan } from "../domain/plan/schema.ts";
import type { Clock } from "../ports/clock.ts";
import { type PhaseEvent, watchPhases } from "./phase_watch.ts";

/** A live display of the execution (the CLI's status line or JSON lines). */
export interface DemoProgress {
  onPhase(e: PhaseEvent): void;
  /** Ends the display with a final line. */
  done(summary: string): void;
}

export interface DemoOptions {
  readonly dir: string;
  readonly root: string;
  readonly plan: string;
  readonly planBranch: string;
  readonly fault?: string;
  /** The journal (default: a libSQL file under `dir/state`). */
  readonly journalUrl?: string;
  readonly say: (line: string) => void;
  /**
   * Aborted on SIGINT/SIGTERM: the reconciler stops between steps (an execution ends `stopped`,
   * resumable, never rerun), the twin is stopped and the summary says so.
   */
  readonly signal?: AbortSignal;
  /** Starts the display once the twin's clock exists (elapsed is the twin's virtual time). */
  readonly progress?: (clock: Clock) => Promise<DemoProgress>;
}

const AUTHOR = "alice@example.com";
const APPROVER = "bob@example.com";

/** What a demo run produced. */
export interface DemoResult {
  readonly dir: string;
  readonly remote: string;
  readonly reportPath: string;
  /** The local copy of the execution report; absent when none was committed (a stop before it). */
  readonly reportCopy?: string;
  readonly previewVerdict: string;
  /** The execution report's headline words (`COMPLETED`, `COMPLETED, NOT VERIFIED`, …). */
  readonly reportVerdict: string;
  readonly outcome: string;
  readonly nodesCompleted: number;
  readonly nodes: number;
  readonly attempts: number;
  readonly unaccounted: number;
  readonly virtualMs: number;
  readonly journalHead: string;
  readonly fault?: string;
}

/** Runs the demo end to end; the directory is kept (it holds the repository and the report). */
export async function runDemo(o: DemoOptions): Promise<DemoResult> {
  const remote = join(o.dir, "remote.git");
  const work = join(o.dir, "work");
  const { path: trust, signers } = await makeTrustRoot(o.dir);
  o.say(`Throwaway keys for ${AUTHOR} (author) and ${APPROVER} (approver); trust root ${trust}`);
  await makeRepo(o, remote, work, signers);
  o.say(`Plan ${o.plan} pushed on branch ${o.planBranch} of ${remote}, signed by both`);
  await Deno.mkdir(join(o.dir, "state"), { recursive: true });
  const evidenceCache = join(o.dir, "state", "evidence");
  const fetched = await fetchEvidence(o, evidenceCache);
  o.say(
    `Pinned evidence: ${fetched.ok} of ${fetched.total} upstream files fetched at their exact ` +
      `revisions into ${evidenceCache} (local bare repositories stand in for the upstreams)`,
  );
  const tc = await startTwinCluster({
    cluster: join(o.root, "fixtures/clusters/home-ops.yaml"),
    pkiCacheDir: TEST_PKI_CACHE,
  });
  const journal = await openJournal({
    url: o.journalUrl ?? `file:${join(o.dir, "state", "journal.db")}`,
    ids: cryptoIdSource(),
    nowMs: tc.clock.now(),
  }).catch(async (e) => {
    await tc.stop();
    throw e;
  });
  try {
    return await runLoop(o, { remote, work, trust, tc, journal, evidenceCache });
  } finally {
    await journal.close();
    await tc.stop();
  }
}

/**
 * Builds the synthetic upstream repositories the example manifest pins and fetches every file
 * into the evidence cache as `cairn evidence check --fetch` does; the manifest's https URLs are
 * mapped to the local repositories with git `insteadOf` for these fetches only.
 */
async function fetchEvidence(
  o: DemoOptions,
  cacheDir: string,
): Promise<{ ok: number; total: number }> {
  const file = "evidence/upgrade-order.yaml";
  const parsed = parseEvidenceManifest(await Deno.readTextFile(join(o.root, file)), file);
  if (!parsed.ok) throw new Error(`${file}: ${parsed.problems[0]?.message ?? "invalid"}`);
  const repos = await buildUpstreamRepos(join(o.dir, "upstream"));
  const fetched = await fetchEvidenceIntoCache(parsed.manifest, cacheDir, repos.gitEnv);
  const ok = parsed.manifest.sources.filter((s) => {
    const f = fetched.get(s.id);
    return f?.ok === true && f.sha256 === s.sha256;
  }).length;
  return { ok, total: parsed.manifest.sources.length };
}

async function makeTrustRoot(dir: string): Promise<{ path: string; signers: DemoSigner[] }> {
  const signers = [await demoSigner(AUTHOR), await demoSigner(APPROVER)];
  const trustDir = join(dir, "trust");
  await Deno.mkdir(trustDir, { recursive: true });
  const path = join(trustDir, "allowed_signers");
  await Deno.writeTextFile(path, allowedSignersText(signers));
  return { path, signers };
}

const AS_ALICE = [
  "-c",
  "user.name=Alice",
  "-c",
  `user.email=${AUTHOR}`,
  "-c",
  "commit.gpgsign=false",
];

async function git(args: string[], cwd?: string): Promise<string> {
  return await gitText([...AS_ALICE, ...args], cwd ? { cwd } : {});
}

async function makeRepo(
  o: DemoOptions,
  remote: string,
  work: string,
  signers: readonly DemoSigner[],
): Promise<void> {
  await gitOrThrow(["init", "--bare", "--quiet", "--initial-branch=main", "--", remote]);
  await gitOrThrow(["init", "--quiet", "--initial-branch=main", "--", work]);
  await git(["remote", "add", "--", "origin", remote], work);
  for (
    const f of ["catalogue/talos.yaml", "policies/home-ops.yaml", "evidence/upgrade-order.yaml"]
  ) {
    await Deno.mkdir(join(work, f, ".."), { recursive: true });
    await Deno.copyFile(join(o.root, f), join(work, f));
  }
  await Deno.writeTextFile(join(work, "README.md"), "# home-ops plans (cairn demo)\n");
  await git(["add", "-A"], work);
  await git(
    ["commit", "--quiet", "-m", "Initial: catalogue, health policy and evidence manifest"],
    work,
  );
  await git(["push", "--quiet", "--", "origin", "main"], work);
  await git(["checkout", "--quiet", "-b", o.planBranch], work);
  const planPath = join(work, "plans", `${o.plan}.yaml`);
  await Deno.mkdir(join(work, "plans"), { recursive: true });
  await Deno.copyFile(join(o.root, "plans", `${o.plan}.yaml`), planPath);
  const bytes = await Deno.readFile(planPath);
  let sigs = "";
  for (const signer of signers) sigs += await signer.sign(bytes);
  await Deno.writeTextFile(`${planPath}.sig`, sigs);
  await git(["add", "-A"], work);
  await git(["commit", "--quiet", "-m", `Plan ${o.plan}`], work);
  await git(["push", "--quiet", "--", "origin", o.planBranch], work);
}

interface LoopParts {
  readonly remote: string;
  readonly work: string;
  readonly trust: string;
  readonly tc: TwinCluster;
  readonly journal: Journal;
  readonly evidenceCache: string;
}

async function runLoop(o: DemoOptions, p: LoopParts): Promise<DemoResult> {
  const started = p.tc.clock.now();
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  if (o.signal?.aborted) stop.abort();
  o.signal?.addEventListener("abort", onAbort, { once: true });
  const logFile = await Deno.open(join(o.dir, "reconcile.log"), { create: true, append: true });
  const enc = new TextEncoder();
  const log = new JsonLogger({
    write: (line) => void logFile.writeSync(enc.encode(line)),
    clock: p.tc.clock,
  });
  const armed = o.fault ? await armFault(o, p) : p.journal;
  const progress = await o.progress?.(p.tc.clock);
  // Each phase the executor records is also shown live: node, phase, what it waits for.
  const journal = progress
    ? watchPhases(
      armed,
      (await readPlan(o)).spec.nodes.map((n) => n.name),
      (e) => progress.onPhase(e),
    )
    : armed;
  const reconciler = await createReconciler({
    git: {
      remote: p.remote,
      cacheDir: join(o.dir, "state", "repo-cache"),
      branch: "main",
      reportBranch: "main",
      reportAuthor: { name: "cairn", email: "cairn@localhost" },
    },
    executor: {
      journal,
      cluster: p.tc.cluster,
      ...twinExecutionTiming(p.tc.clock),
      log,
      owner: "ctl_demo",
      installers: await twinInstallerResolver(p.tc.twin),
    },
    allowedSignersPath: p.trust,
    requiredApprovals: 1,
    pollIntervalMs: 1_000,
    planBranchesGlob: "*",
    evidenceCacheDir: p.evidenceCache,
    signal: stop.signal,
    wakeup: new HookWakeup(stop.signal),
  });
  try {
    await reconciler.cycle();
    await reconciler.settled();
    const previewPath = previewReportPath(o.plan, o.planBranch) ?? "";
    const preview = await reportAt(p.remote, previewPath);
    const previewVerdict = verdictWords(preview);
    o.say(`Preview report: ${previewPath} (verdict ${previewVerdict})`);
    if (stop.signal.aborted) {
      // Asked to stop before the merge: nothing was executed.
      return await summarise(o, p, "stopped", { previewVerdict, started });
    }
    // The preview landed on main (the report branch): merge on top of it, as a PR merge would.
    await git(["fetch", "--quiet", "origin"], p.work);
    await git(["checkout", "--quiet", "main"], p.work);
    await git(["reset", "--quiet", "--hard", "origin/main"], p.work);
    await git(["merge", "--quiet", "--no-ff", "-m", `Merge ${o.planBranch}`, o.planBranch], p.work);
    await git(["push", "--quiet", "origin", "main"], p.work);
    o.say(`Merged ${o.planBranch} into main; the reconciler executes it on the twin`);
    await reconciler.cycle();
    await reconciler.settled();
    const outcome = reconciler.finished()[0]?.outcome ??
      (stop.signal.aborted ? "stopped" : "not-run");
    progress?.done(`rollout ${outcome}`);
    return await summarise(o, p, outcome, {
      previewVerdict,
      started,
    });
  } finally {
    o.signal?.removeEventListener("abort", onAbort);
    stop.abort();
    logFile.close();
  }
}

/** Arms the named fault on the plan's first node; returns the journal the executor uses. */
async function armFault(o: DemoOptions, p: LoopParts): Promise<Journal> {
  const plan = await readPlan(o);
  const node = plan.spec.nodes[0]!.name;
  const effect = buildPresets([o.fault as FaultPresetName], {
    node,
    pods: await podsOn(p.tc.cluster, node),
    drainBoundSeconds: plan.spec.phases.drainTimeoutSeconds,
    verifySeconds: plan.spec.phases.deadlines.verify.verificationSeconds,
    otherNodes: plan.spec.nodes.map((n) => n.name).filter((n) => n !== node),
  });
  for (const f of effect.faults) await p.tc.control.arm(f);
  o.say(`Fault '${o.fault}' armed on ${node}`);
  return withPresetJournal(p.journal, effect, node, p.tc.control, () => p.tc.clock.now());
}

async function readPlan(o: DemoOptions): Promise<TalosUpgradePlan> {
  const { parse } = await import("yaml");
  return parse(await Deno.readTextFile(join(o.root, "plans", `${o.plan}.yaml`)));
}

async function podsOn(cluster: ClusterConnection, node: string) {
  return (await cluster.kube.listPods(node)).items.map((pod) => ({
    name: pod.name,
    evictable: !pod.daemonSet && !pod.mirror && pod.owner !== undefined &&
      pod.phase !== "Succeeded" && pod.phase !== "Failed",
    graceSeconds: pod.terminationGracePeriodSeconds,
  }));
}

async function reportAt(remote: string, path: string): Promise<string | undefined> {
  try {
    // Exact bytes: the local copy must equal the committed report.
    return new TextDecoder().decode(
      await gitOrThrow(["show", "--end-of-options", `main:${path}`], { gitDir: remote }),
    );
  } catch {
    return undefined;
  }
}

async function summarise(
  o: DemoOptions,
  p: LoopParts,
  outcome: string,
  x: { previewVerdict: string; started: number },
): Promise<DemoResult> {
  const reportPath = `reports/${o.plan}/execution.md`;
  const report = await reportAt(p.remote, reportPath);
  // No report committed (stopped before the execution): no empty file standing in for one.
  const reportCopy = report !== undefined ? join(o.dir, "execution.md") : undefined;
  if (reportCopy !== undefined) await Deno.writeTextFile(reportCopy, report!);
  const ops = await p.journal.listOperations();
  const digest = ops[0]?.planDigest;
  const history = digest ? await p.journal.planHistory(digest) : undefined;
  const attempts = history?.operations.flatMap((op) => op.attempts) ?? [];
  const chain = await p.journal.verifyChain();
  return {
    dir: o.dir,
    remote: p.remote,
    reportPath,
    ...(reportCopy !== undefined ? { reportCopy } : {}),
    previewVerdict: x.previewVerdict,
    reportVerdict: verdictWords(report),
    outcome,
    nodesCompleted: ops.filter((op) => op.state === "completed").length,
    nodes: (await readPlan(o)).spec.nodes.length,
    attempts: attempts.length,
    unaccounted: attempts.filter((a) => a.accountedBy === null).length,
    virtualMs: p.tc.clock.now() - x.started,
    journalHead: chain.ok ? chain.head : `chain broken at ${chain.seq}`,
    ...(o.fault ? { fault: o.fault } : {}),
  };
}

/** The headline words of a report (`READY FOR APPROVAL`, `NOT READY`, `COMPLETED, NOT VERIFIED`). */
function verdictWords(report: string | undefined): string {
  return /\*\*Verdict: ([A-Z][A-Z ,]*[A-Z])/.exec(report ?? "")?.[1] ?? "missing";
}
