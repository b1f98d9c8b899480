/**
 * Composition of the reconcile loop, shared by `cairn reconcile` and `cairn demo`: the Git plan
 * source and report sink, the journal, the engine's plan executor, the trust root read by
 * path, the poll/hook wake-up, metrics and the ops server. Not a command; the cluster connection
 * and clocks are passed in so the demo can use the twin's virtual clock.
 */
import { gitCommitHistory } from "../adapters/git/commit_history.ts";
import { gitOpsTree } from "../adapters/git/gitops_tree.ts";
import { branchReviewer } from "../engine/review/review_branch.ts";
import { loadPlaybooks } from "./playbooks.ts";
import { MAX_BOUND_FILE_BYTES, readCappedFile } from "../adapters/repo/bound_file_reader.ts";
import { CairnError } from "../domain/errors.ts";
import { sha256Hex } from "../domain/plan/digest.ts";
import {
  parseAllowedSigners,
  relabelSigners,
  trustRootLabel,
} from "../domain/trust/allowed_signers.ts";
import type { ExecutionObserver } from "../engine/executor/deps.ts";
import { planExecutor, type PlanExecutorSettings } from "../engine/reconcile/plan_executor.ts";
import { Reconciler } from "../engine/reconcile/reconciler.ts";
import type { Leadership } from "../engine/leadership/elector.ts";
import type { Clock } from "../ports/clock.ts";
import type { PlanSource } from "../ports/plan_source.ts";
import type { TrustRoot, WakeReason, Wakeup } from "../ports/reconcile.ts";
import type { ReportSink } from "../ports/report_sink.ts";
import { GitRemote } from "../adapters/git/git_remote.ts";
import { GitReportSink } from "../adapters/git/git_report_sink.ts";
import { PendingReportSink } from "../adapters/git/pending_report_sink.ts";
import type { CairnMetrics } from "../adapters/metrics/cairn_metrics.ts";
import { reconcileReports } from "../report/reconcile_reports.ts";
import { cacheEvidenceChecker } from "./evidence_run.ts";
import { livePreviewer } from "../engine/preview/live_preview.ts";
import { KubeEvidence } from "../engine/health/kube_evidence.ts";

/**
 * How the executor runs against the cluster: executePlan's options less the plan, its authority
 * (the loop supplies the trust root and the watched branch's bound files) and signal. There is no
 * health policy setting: each plan is gated by the policy it binds.
 */
export type ExecutorSettings = Omit<PlanExecutorSettings, "observer"> & {
  readonly metrics?: CairnMetrics;
};

/** Attempts and rounds, as the executor tells them, feed the metrics. */
export function metricsObserver(metrics: CairnMetrics): ExecutionObserver {
  return {
    onAttemptResponse: (a) => metrics.attempt(a.phase, a.responseClass),
    onHealthRound: (r) => metrics.healthRound(r.verdict),
    onHold: (h) => metrics.hold(h.reason),
    onStall: (st) => metrics.stall(st.phase),
  };
}

/**
 * The trust root read from its path on every cycle (edits take effect without a restart). A
 * malformed file is refused naming its path (that goes to the operator's log); once parsed, the
 * signers are named by their content, so the host path never reaches a committed report.
 */
export function fileTrustRoot(path: string): TrustRoot {
  return {
    load: async () => {
      const bytes = await readCappedFile(path, MAX_BOUND_FILE_BYTES);
      const signers = parseAllowedSigners(new TextDecoder().decode(bytes), path);
      return relabelSigners(signers, trustRootLabel(signers, await sha256Hex(bytes)));
    },
  };
}

/** A hook secret is a short token; anything larger is not one. */
const MAX_HOOK_SECRET_BYTES = 4096;

/**
 * The webhook's shared secret, read from its file (surrounding whitespace dropped). An unreadable
 * or empty file refuses to start (`ConfigInvalid`): running with no secret would accept anyone's
 * hook. The message names the path, never the content.
 */
export async function readHookSecret(path: string): Promise<string> {
  let text: string;
  try {
    // Capped, and only a regular file: pointed at /dev/zero it must refuse, not read forever.
    text = new TextDecoder().decode(await readCappedFile(path, MAX_HOOK_SECRET_BYTES));
  } catch (e) {
    throw new CairnError({
      reason: "ConfigInvalid",
      message: `cannot read the hook secret at ${path}: ${
        (e as { reason?: string })?.reason ?? (e instanceof Error ? e.name : "unreadable")
      }`,
    });
  }
  const secret = text.trim();
  if (secret.length === 0) {
    throw new CairnError({
      reason: "ConfigInvalid",
      message: `the hook secret at ${path} is empty; an empty secret would accept anyone's hook`,
    });
  }
  return secret;
}

/** Poll timer + webhook nudges + stop signal. */
export class HookWakeup implements Wakeup {
  readonly #signal: AbortSignal;
  #nudged = false;
  #wake: ((r: WakeReason) => void) | undefined;

  constructor(signal: AbortSignal) {
    this.#signal = signal;
    signal.addEventListener("abort", () => this.#wake?.("stop"), { once: true });
  }

  /** A webhook arrived: wake the loop now (or at its next wait). */
  nudge(): void {
    if (this.#wake) this.#wake("hook");
    else this.#nudged = true;
  }

  wait(ms: number): Promise<WakeReason> {
    if (this.#signal.aborted) return Promise.resolve("stop");
    if (this.#nudged) {
      this.#nudged = false;
      return Promise.resolve("hook");
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => done("timer"), ms);
      const done = (r: WakeReason) => {
        clearTimeout(timer);
        this.#wake = undefined;
        resolve(r);
      };
      this.#wake = done;
    });
  }
}

/** Times every fetch into the git fetch histogram. */
export function timedSource(source: PlanSource, metrics?: CairnMetrics): PlanSource {
  return {
    fetch: async (opts) => {
      const t0 = performance.now();
      const r = await source.fetch(opts);
      metrics?.observeGitFetchSeconds((performance.now() - t0) / 1000);
      return r;
    },
    listPlans: (c, o) => source.listPlans(c, o),
    introductions: (c, since) => source.introductions(c, since),
    readFile: (c, p) => source.readFile(c, p),
    ...(source.prefetch ? { prefetch: (c, ps) => source.prefetch!(c, ps) } : {}),
  };
}

/** Where the loop watches and reports. */
export interface GitSettings {
  readonly remote: string;
  readonly cacheDir: string;
  readonly branch: string;
  readonly reportBranch: string;
  readonly reportAuthor: { readonly name: string; readonly email: string };
  readonly clock?: Clock;
  /**
   * Where reports the remote did not take are kept until it does (beside the journal, in the
   * state directory); unset: such a report is logged as failed and lost.
   */
  readonly pendingReportsDir?: string;
  /** Deadline of each git network call (fetch, push), ms; default run_git's. */
  readonly timeoutMs?: number;
  /** Aborted when a stopping cairn may wait no longer: git network calls in flight are killed. */
  readonly stop?: AbortSignal;
}

/** Opens the plan source and report sink over one cache clone. */
export async function openGit(g: GitSettings): Promise<{ source: GitRemote; sink: ReportSink }> {
  const network = {
    ...(g.timeoutMs !== undefined ? { timeoutMs: g.timeoutMs } : {}),
    ...(g.stop ? { signal: g.stop } : {}),
  };
  const source = await GitRemote.open({
    url: g.remote,
    cacheDir: g.cacheDir,
    watchedBranch: g.branch,
    ...network,
  });
  const git = new GitReportSink(source, {
    branch: g.reportBranch,
    authorName: g.reportAuthor.name,
    authorEmail: g.reportAuthor.email,
    ...(g.clock ? { clock: g.clock } : {}),
    ...network,
  });
  const sink = g.pendingReportsDir ? new PendingReportSink(git, g.pendingReportsDir) : git;
  return { source, sink };
}

/** Everything `createReconciler` needs. */
export interface ReconcilerSettings {
  readonly git: GitSettings;
  readonly executor: ExecutorSettings;
  readonly allowedSignersPath: string;
  readonly requiredApprovals: number;
  readonly pollIntervalMs: number;
  readonly planBranchesGlob: string;
  /**
   * Evidence cache the bound manifests are checked against (offline); unset: a bound manifest
   * shows as unread in the reports.
   */
  readonly evidenceCacheDir?: string;
  readonly signal: AbortSignal;
  readonly wakeup: Wakeup;
  /** Lease election among replicas; absent: the only replica, always leading. */
  readonly leadership?: Leadership;
}

/** Wires the reconcile loop. */
export async function createReconciler(s: ReconcilerSettings): Promise<Reconciler> {
  const { source, sink } = await openGit(s.git);
  const metrics = s.executor.metrics;
  const trust = fileTrustRoot(s.allowedSignersPath);
  const playbooks = await loadPlaybooks();
  // Read once, at the process's start: every run acts in this epoch and no other, and the loop
  // stops (exits non-zero) once the journal's epoch is another (docs/recovery.md).
  const epoch = s.executor.epoch ?? (await s.executor.journal.installation()).epoch;
  // One set of watch caches per cluster connection, shared by previews and runs: the run after a
  // merge gates on caches its plan's preview already listed and watches, not on a LIST of every
  // resource type first. Their watches end with the loop.
  const watchCaches = new KubeEvidence(s.executor.cluster.kube, s.executor.clock);
  if (s.signal.aborted) watchCaches.stop();
  else s.signal.addEventListener("abort", () => watchCaches.stop(), { once: true });
  return await Reconciler.create({
    epoch,
    source: timedSource(source, metrics),
    sink,
    journal: s.executor.journal,
    executor: planExecutor({
      ...s.executor,
      epoch,
      watchCaches,
      ...(metrics ? { observer: metricsObserver(metrics) } : {}),
      // A ComponentUpgrade's delivery: does the revision Flux applied contain the merge?
      commitHistory: gitCommitHistory({ gitDir: source.gitDir }),
    }, { trust, requiredApprovals: s.requiredApprovals }),
    ...(s.executor.notifier ? { notifier: s.executor.notifier } : {}),
    renderer: reconcileReports({ playbooks }),
    trust,
    wakeup: s.wakeup,
    clock: s.executor.clock,
    ...(s.executor.timeoutClock ? { waitClock: s.executor.timeoutClock } : {}),
    log: s.executor.log,
    ...(metrics ? { metrics } : {}),
    ...(s.evidenceCacheDir ? { evidence: cacheEvidenceChecker(s.evidenceCacheDir) } : {}),
    // Plan-branch previews read the live cluster; the round is timed by the timeout view so a
    // preview never moves a virtual cluster's time.
    live: livePreviewer({
      cluster: s.executor.cluster,
      clock: s.executor.timeoutClock ?? s.executor.clock,
      ...(s.executor.installers ? { installers: s.executor.installers } : {}),
      journal: s.executor.journal,
      watchCaches,
    }),
    // ComponentUpgrade plans on plan branches: their branch's bump reviewed against the
    // shipped playbooks, read from the cache clone the source fetched into.
    reviewer: branchReviewer(gitOpsTree({ gitDir: source.gitDir }), playbooks),
    watchedBranch: s.git.branch,
    isPlanBranch: globMatcher(s.planBranchesGlob),
    reportBranch: s.git.reportBranch,
    requiredApprovals: s.requiredApprovals,
    pollIntervalMs: s.pollIntervalMs,
    signal: s.signal,
    ...(s.leadership ? { leadership: s.leadership } : {}),
  });
}

/** `*` and `?` globs over branch names (`*` also crosses `/`: `plan/*` matches `plan/a/b`). */
export function globMatcher(glob: string): (branch: string) => boolean {
  const re = new RegExp(
    "^" + glob.replace(/[.+^${}()|\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".") + "$",
  );
  return (b) => re.test(b);
}
