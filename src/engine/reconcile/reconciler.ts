/**
 * The GitOps loop (docs/architecture.md#the-gitops-loop): fetch, assess every plan on the watched
 * branch in merge order and on plan branches, publish previews, bind approved merged plans (name →
 * digest, once), run them one per cluster in merge order, and commit execution reports at
 * milestones. Pure orchestration over ports; time comes from the Clock, waiting from the Wakeup.
 */
import { CairnError } from "../../domain/errors.ts";
import { OPERATION_STATES, type OperationState } from "../../domain/operation.ts";
import { sha256Hex } from "../../domain/plan/digest.ts";
import { isReason, type Reason, type ReasonNote } from "../../domain/reasons.ts";
import type { BranchReview } from "../../domain/review/model.ts";
import type { BranchReviewer } from "../../ports/gitops_tree.ts";
import type { AllowedSigners } from "../../domain/trust/allowed_signers.ts";
import type { Clock } from "../../ports/clock.ts";
import type { Journal } from "../../ports/journal.ts";
import type { BoundFileSource } from "../../ports/dispatch.ts";
import type { Notifier } from "../../ports/notifier.ts";
import type { Logger } from "../../ports/logger.ts";
import type {
  BranchHead,
  PlanFile,
  PlanIntroduction,
  PlanSource,
  RefusedPlanPath,
} from "../../ports/plan_source.ts";
import type {
  EvidenceChecker,
  ExecutionEnd,
  LiveFindings,
  LivePreviewer,
  PlanExecutor,
  PlanFacts,
  ReconcileMetrics,
  ReportRenderer,
  TrustRoot,
  Wakeup,
} from "../../ports/reconcile.ts";
import type { PublishResult, ReportDocument, ReportSink } from "../../ports/report_sink.ts";
import { type Assessed, assessPlan, boundPathCandidates } from "./assess.ts";
import type { Plan } from "../../domain/plan/schema.ts";
import {
  boundManifest,
  checkBoundEvidence,
  evidenceJournalEntry,
  evidencePassed,
  evidenceRefusal,
} from "./bound_evidence.ts";
import { branchFiles } from "./branch_files.ts";
import { ExecutionRun } from "./execution_run.ts";
import { type Leadership, type LeadershipStatus, soleLeader } from "../leadership/elector.ts";

/** Bound-file paths the watched listing reads ahead, at most (a handful per plan). */
const READ_AHEAD_PATHS = 32;

/** Everything the loop reaches the world through. */
export interface ReconcilerDeps {
  readonly source: PlanSource;
  readonly sink: ReportSink;
  readonly journal: Journal;
  readonly executor: PlanExecutor;
  readonly renderer: ReportRenderer;
  readonly trust: TrustRoot;
  readonly wakeup: Wakeup;
  readonly clock: Clock;
  /**
   * Waits that must not move a virtual cluster's time (the "started" report's, `execution_run.ts`):
   * a twin's timeout view. Absent: `clock`, the system clock in production.
   */
  readonly waitClock?: Clock;
  readonly log: Logger;
  readonly metrics?: ReconcileMetrics;
  /** Told of previews ready and executions started and completed (docs/operating.md#notifications). */
  readonly notifier?: Notifier;
  /** Offline check of a plan's bound evidence manifest; absent: the manifest shows unread. */
  readonly evidence?: EvidenceChecker;
  /** Zero-write checks of plan-branch previews against the live cluster, when connected. */
  readonly live?: LivePreviewer;
  /**
   * Reviews a plan branch's change against the upgrade playbooks for its ComponentUpgrade plans
   * (absent: no review; the preview says nothing about the bump itself).
   */
  readonly reviewer?: BranchReviewer;
  readonly watchedBranch: string;
  /** Branches (other than the watched and report branches) whose plans get previews. */
  readonly isPlanBranch: (branch: string) => boolean;
  readonly reportBranch: string;
  readonly requiredApprovals: number;
  readonly pollIntervalMs: number;
  /** Aborted on SIGTERM: executions stop between steps, the loop after the current cycle. */
  readonly signal: AbortSignal;
  /**
   * Whether this replica leads (Lease election); absent: the only replica, always leading. Only
   * a leader binds and executes merged plans; a standby keeps previewing plan branches (reads
   * only). An execution runs in the term it started in and stops between steps when it ends.
   */
  readonly leadership?: Leadership;
  /**
   * The journal epoch this process started in, read once at its start (absent: read by
   * `create`). Once the journal's epoch is another (a recovery entry, a journal restore) the
   * process must not act (docs/operation-model.md#fencing): the loop stops its runs, binds and
   * starts nothing more, and `run` throws `EpochSuperseded` naming both epochs, so the process
   * exits non-zero and its supervisor starts a new one, which reads the new epoch.
   */
  readonly epoch?: string;
}

/** What `/readyz` shows: ready after a good fetch, and this replica's part. */
export interface LoopReadiness {
  readonly ready: boolean;
  readonly why?: string;
  readonly role: LeadershipStatus["role"];
  /** The Lease holder as last seen, when there is an election. */
  readonly leader?: string;
}

/** A finished execution, for summaries (the demo, status). */
export interface ExecutionRecord {
  readonly plan: string;
  readonly digest: string;
  readonly end: ExecutionEnd;
  readonly outcome: string;
}

interface Queued {
  readonly facts: PlanFacts;
  readonly cluster: string;
}

/** The reconcile loop's state and steps. */
export class Reconciler {
  readonly #d: ReconcilerDeps;
  readonly #bound = new Map<string, string>();
  readonly #seen = new Map<string, string>();
  readonly #previewed = new Map<string, string>();
  /** Refused plan paths already reported (branch, path, reason, message). */
  readonly #refusedMarks = new Set<string>();
  readonly #queue: Queued[] = [];
  readonly #running = new Map<string, Promise<void>>();
  readonly #finished: ExecutionRecord[] = [];
  #intros: PlanIntroduction[] = [];
  #lastWatched: string | undefined;
  #watchedMark = "";
  /** Where plans seen so far read their bound files (`#learnBoundPaths`). */
  readonly #boundPaths = new Set<string>();
  readonly #branchTips = new Map<string, string>();
  /** Digests queued, running or finished since start: each runs at most once per reconciler. */
  readonly #enqueued = new Set<string>();
  #publishing: Promise<unknown> = Promise.resolve();
  #ready: { ready: boolean; why?: string } = { ready: false, why: "no fetch yet" };
  readonly #leadership: Leadership;
  /** The term merged plans were last assessed in: a new term assesses them again. */
  #term: AbortSignal | undefined;
  /** The epoch this process started in (docs/operation-model.md#fencing: never refreshed under it). */
  readonly #epoch: string;
  /** Aborted once the journal's epoch is found superseded: every run stops, nothing starts. */
  readonly #halt = new AbortController();
  /** The journal's epoch when it was found superseded. */
  #supersededBy: string | undefined;

  private constructor(deps: ReconcilerDeps, epoch: string) {
    this.#d = deps;
    this.#epoch = epoch;
    this.#leadership = deps.leadership ?? soleLeader();
  }

  /** Loads the name → digest bindings the journal already holds. */
  static async create(deps: ReconcilerDeps): Promise<Reconciler> {
    const epoch = deps.epoch ?? (await deps.journal.installation()).epoch;
    const r = new Reconciler(deps, epoch);
    for (const b of await deps.journal.nameBindings()) r.#bound.set(b.name, b.digest);
    return r;
  }

  /**
   * Readiness for `/readyz`: the last cycle fetched successfully. A standby is ready (it serves
   * previews) and says it stands by and who leads.
   */
  readiness(): LoopReadiness {
    const s = this.#leadership.status();
    return {
      ...this.#ready,
      role: s.role,
      ...(s.holder !== undefined && this.#d.leadership ? { leader: s.holder } : {}),
    };
  }

  /** Executions that ended, in the order they ended. */
  finished(): readonly ExecutionRecord[] {
    return this.#finished;
  }

  /**
   * Loops until stopped: a cycle, then wait for the poll interval or a hook. Throws
   * `EpochSuperseded` once this process outlived a recovery entry or a journal restore (after its
   * runs stopped): it must not act again, and exits for its supervisor to restart it.
   */
  async run(): Promise<void> {
    const halted = new Promise<"stop">((resolve) =>
      this.#halt.signal.addEventListener("abort", () => resolve("stop"), { once: true })
    );
    while (!this.#d.signal.aborted && !this.#halt.signal.aborted) {
      await this.cycle();
      if (this.#halt.signal.aborted) break;
      const woke = await Promise.race([this.#d.wakeup.wait(this.#d.pollIntervalMs), halted]);
      if (woke === "stop") break;
    }
    await this.settled();
    const superseded = this.#supersededError();
    if (superseded) throw superseded;
    this.#d.log.info("reconciler stopped");
  }

  /** The epoch refusal this process stops with, once its epoch was found superseded. */
  #supersededError(): CairnError | undefined {
    if (this.#supersededBy === undefined) return undefined;
    return new CairnError({
      reason: "EpochSuperseded",
      message: `this process started in journal epoch ${this.#epoch}; the journal is now in ` +
        `epoch ${this.#supersededBy} (a recovery entry or a journal restore): it stopped acting ` +
        `and exits; a new process reads the new epoch`,
    });
  }

  /**
   * True once the journal's epoch is not the one this process started in; the first time, stops
   * every run and says so. A process that outlived a recovery entry acts no more (docs/operation-model.md#fencing).
   */
  async #superseded(): Promise<boolean> {
    if (this.#halt.signal.aborted) return true;
    const { epoch } = await this.#d.journal.installation();
    if (epoch === this.#epoch) return false;
    this.#supersededBy = epoch;
    const why = this.#supersededError()!.message;
    this.#ready = { ready: false, why: `EpochSuperseded: ${why}` };
    this.#d.log.error("journal epoch superseded: this process stops acting", {
      reason: "EpochSuperseded",
      error: why,
    });
    this.#halt.abort(new Error(why));
    return true;
  }

  /** One fetch-assess-publish-dispatch pass; errors are logged and counted, never thrown. */
  async cycle(): Promise<void> {
    try {
      // The port's git fetch (the architecture check forbids the global fetch call by name).
      const gitFetch = this.#d.source.fetch.bind(this.#d.source);
      // The stop signal ends a fetch in flight: a remote that never answers cannot hold SIGTERM.
      const fetched = await gitFetch({ signal: this.#d.signal });
      // A process that outlived a recovery entry or a journal restore acts no more (the fetch
      // before only reads).
      if (await this.#superseded()) return;
      this.#ready = { ready: true };
      // The remote answered: reports it missed earlier go first (never after newer ones). They
      // are queued, not awaited: every later publish waits its turn in the same queue, and a
      // merged plan is bound and started without waiting for a push (issue 18).
      void this.#retryPending();
      const signers = await this.#d.trust.load();
      // Only the leader binds and runs merged plans; a standby previews plan branches only.
      const term = this.#leadership.term();
      if (term) {
        this.#enterTerm(term);
        await this.#watched(fetched.watched, signers);
      }
      // A merged plan starts before any plan branch is previewed: a preview reads the live
      // cluster (seconds with a slow API), and it is unrelated to the merge (issue 18).
      this.#dispatch();
      for (const b of fetched.branches) {
        if (this.#isPreviewBranch(b.branch)) {
          await this.#previewBranch(b, signers, fetched.watched);
        }
      }
      await this.refreshOperationMetrics();
    } catch (e) {
      const reason = reasonOf(e);
      this.#ready = { ready: false, why: `${reason}: ${messageOf(e)}` };
      if (this.#d.signal.aborted) {
        // Asked to stop (SIGTERM): a cycle cut short on the way out is not a failure.
        this.#d.log.info("reconcile cycle stopped", { reason });
        return;
      }
      this.#d.metrics?.reconcileError(reason as Reason);
      this.#d.log.error("reconcile cycle failed", { reason, error: messageOf(e) });
    }
  }

  /** Resolves when every running execution and pending publish has finished. */
  async settled(): Promise<void> {
    while (this.#running.size > 0) await Promise.all(this.#running.values());
    await this.#publishing;
  }

  /**
   * A new term (this replica just became leader, or leads again) assesses the merged plans
   * again, and a plan whose execution an ended term stopped may run again: the executor takes
   * its operations over from the journal, never reruns what was sent.
   */
  #enterTerm(term: AbortSignal): void {
    if (term === this.#term) return;
    this.#term = term;
    this.#watchedMark = "";
    this.#seen.clear();
  }

  #isPreviewBranch(branch: string): boolean {
    return branch !== this.#d.watchedBranch && branch !== this.#d.reportBranch &&
      this.#d.isPlanBranch(branch);
  }

  async #watched(head: BranchHead, signers: AllowedSigners): Promise<void> {
    // An unchanged tip under an unchanged trust root has nothing new to assess.
    const mark = `${head.commit}|${trustMark(signers)}`;
    if (mark === this.#watchedMark) return;
    this.#watchedMark = mark;
    // The walk for merge order and the tip's listing are independent reads: side by side. The
    // listing starts first: a source that looks the new tip up once for both (GitRemote does, in
    // the listing's own git process) then spares the walk a look of its own.
    const listed = this.#d.source.listPlans(head.commit, { readAhead: [...this.#boundPaths] });
    const [fresh, listing] = await Promise.all([
      head.commit !== this.#lastWatched
        ? this.#d.source.introductions(head.commit, this.#lastWatched)
        : undefined,
      listed,
    ]);
    if (fresh) {
      const known = new Set(this.#intros.map((i) => i.name));
      this.#intros = [...this.#intros, ...fresh.filter((i) => !known.has(i.name))];
      this.#lastWatched = head.commit;
    }
    await this.#refusedFiles(listing.refused, this.#d.watchedBranch, head.commit);
    const order = new Map(this.#intros.map((i, k) => [i.name, k]));
    const files = listing.plans.slice().sort((a, b) =>
      (order.get(a.name) ?? Infinity) - (order.get(b.name) ?? Infinity)
    );
    for (const file of files) {
      const key = `${await fileKey(file)}|${trustMark(signers)}`;
      if (this.#seen.get(file.name) === key) continue;
      this.#seen.set(file.name, key);
      const intro = this.#intros.find((i) => i.name === file.name);
      await this.#mergedPlan(file, intro?.commit ?? head.commit, signers);
    }
  }

  async #mergedPlan(file: PlanFile, commit: string, signers: AllowedSigners): Promise<void> {
    const log = this.#d.log.child({ planName: file.name, branch: this.#d.watchedBranch, commit });
    const a = await this.#assess(file, this.#d.watchedBranch, commit, signers);
    if (a.facts.refusals.length === 0 && a.parsed && a.facts.policy) {
      const bound = await this.#d.executor.bind({
        parsed: a.parsed,
        bytes: file.bytes,
        signatures: file.signature ? new TextDecoder().decode(file.signature) : "",
        commit,
        approver: a.facts.policy.approvers[0] ?? "",
        nowMs: this.#d.clock.now(),
      });
      if (bound.ok) {
        this.#bound.set(file.name, a.facts.digest);
        await this.#recordEvidence(a.facts);
        if (this.#enqueued.has(a.facts.digest)) return;
        this.#enqueued.add(a.facts.digest);
        this.#queue.push({ facts: a.facts, cluster: a.parsed.plan.metadata.cluster });
        log.info("plan approved and queued", { planDigest: a.facts.digest });
        return;
      }
      a.facts.refusals.push(bound.note);
    }
    log.warn("merged plan refused", {
      planDigest: a.facts.digest,
      reason: a.facts.refusals[0]?.reason ?? "PlanNotApproved",
    });
    await this.#publishPreview(a.facts, "refused", `refuse ${file.name}`);
  }

  /** The evidence the plan was approved on goes onto the journal's hash-chained timeline. */
  async #recordEvidence(facts: PlanFacts): Promise<void> {
    const bound = boundManifest(facts.plan);
    if (!bound || !facts.evidence) return;
    await this.#d.journal.recordEvidenceCheck({
      planDigest: facts.digest,
      ...evidenceJournalEntry(facts.evidence, bound),
      actor: { identity: "cairn-reconciler", role: "controller" },
      nowMs: this.#d.clock.now(),
    });
  }

  async #assess(
    file: PlanFile,
    branch: string,
    commit: string,
    signers: AllowedSigners,
  ): Promise<{ facts: PlanFacts & { refusals: PlanFacts["refusals"][number][] } } & Assessed> {
    const boundDigest = this.#bound.get(file.name);
    const a = await assessPlan(file, {
      source: this.#d.source,
      signers,
      requiredApprovals: this.#d.requiredApprovals,
      nowMs: this.#d.clock.now(),
      branch,
      commit,
      ...(boundDigest !== undefined ? { boundDigest } : {}),
    });
    if (a.parsed) this.#learnBoundPaths(a.parsed.plan);
    const refusals = [...a.facts.refusals];
    const evidence = this.#d.evidence
      ? await checkBoundEvidence(a.facts.plan, commit, this.#d.source, this.#d.evidence)
      : undefined;
    const refusal = evidenceRefusal(evidence);
    if (refusal) refusals.push(refusal);
    return { ...a, facts: { ...a.facts, refusals, ...(evidence ? { evidence } : {}) } };
  }

  /**
   * Remembers where `plan`'s bound files are read: a plan previewed on its branch binds the same
   * files once merged, and the watched tip's listing reads them ahead in its own git process
   * (issue 18). Bounded; the oldest paths go first.
   */
  #learnBoundPaths(plan: Plan): void {
    for (const p of boundPathCandidates(plan)) {
      this.#boundPaths.delete(p);
      this.#boundPaths.add(p);
    }
    for (const p of this.#boundPaths) {
      if (this.#boundPaths.size <= READ_AHEAD_PATHS) break;
      this.#boundPaths.delete(p);
    }
  }

  async #previewBranch(
    b: BranchHead,
    signers: AllowedSigners,
    watched: BranchHead,
  ): Promise<void> {
    const tip = `${b.commit}|${trustMark(signers)}`;
    if (this.#branchTips.get(b.branch) === tip) return;
    this.#branchTips.set(b.branch, tip);
    const listing = await this.#d.source.listPlans(b.commit);
    await this.#refusedFiles(listing.refused, b.branch, b.commit);
    // One review of the branch's change per tip, shared by its ComponentUpgrade plans.
    const reviewed: { review?: BranchReview; failed?: ReasonNote } = {};
    const reviewOnce = async () => {
      if (!reviewed.review && !reviewed.failed) {
        Object.assign(reviewed, await this.#review(watched, b));
      }
      return reviewed;
    };
    for (const file of listing.plans) {
      const key = `${await fileKey(file)}|${trustMark(signers)}`;
      if (this.#seen.get(file.name) === key) continue; // unchanged from the watched branch
      const mark = `${b.branch}\u0000${file.name}`;
      if (this.#previewed.get(mark) === key) continue;
      this.#previewed.set(mark, key);
      const assessed = await this.#assess(file, b.branch, b.commit, signers);
      const bump = assessed.parsed?.plan.kind === "ComponentUpgrade" && this.#d.reviewer
        ? await reviewOnce()
        : undefined;
      const a = bump ? { ...assessed, facts: withReview(assessed.facts, bump) } : assessed;
      const files = branchFiles(this.#d.source, b.branch, () => b.commit);
      const live = a.parsed ? await this.#live(a.parsed, files) : undefined;
      const verdict = previewVerdict(a.facts, live);
      const generatedAt = this.#d.clock.now();
      this.#d.log.info("plan previewed", {
        planName: file.name,
        branch: b.branch,
        commit: b.commit,
        // What the report says: the checks' verdict held back by any P row that did not pass.
        verdict: this.#d.renderer.previewVerdict({
          facts: a.facts,
          verdict,
          generatedAt,
          ...(live ? { live } : {}),
        }),
      });
      await this.#publishPreview(
        a.facts,
        verdict,
        `preview ${file.name} at ${b.commit.slice(0, 12)}`,
        live,
      );
      void this.#d.notifier?.notify({
        event: "preview-ready",
        plan: file.name,
        digest: a.facts.digest,
        ...(a.facts.plan ? { cluster: a.facts.plan.metadata.cluster } : {}),
        text: `preview of ${b.branch} at ${b.commit.slice(0, 12)} is ready`,
        atMs: generatedAt,
      });
    }
  }

  /**
   * Plan files the source refused before reading them (unsafe name, symlink, oversized): each
   * still gets a refused preview saying why, once per branch and problem. A name that cannot
   * name a report path is refused again by the sink, which the log then shows.
   */
  async #refusedFiles(
    refused: readonly RefusedPlanPath[],
    branch: string,
    commit: string,
  ): Promise<void> {
    for (const r of refused) {
      const mark = `${branch}\u0000${r.path}\u0000${r.reason}\u0000${r.message}`;
      if (this.#refusedMarks.has(mark)) continue;
      this.#refusedMarks.add(mark);
      this.#d.log.warn("plan file refused", { branch, commit, path: r.path, reason: r.reason });
      const name = r.path.replace(/^plans\//, "").replace(/\.yaml$/, "");
      const facts: PlanFacts = {
        name,
        path: r.path,
        branch,
        commit,
        digest: "not computed: the file was refused before it was read",
        problems: [],
        requiredApprovals: this.#d.requiredApprovals,
        refusals: [{ reason: r.reason, message: r.message, where: r.path }],
      };
      await this.#publishPreview(facts, "refused", `refuse ${name}`);
    }
  }

  /**
   * The review of the branch's change against the playbooks (its merge base with the watched
   * branch). A review that cannot run refuses the bump's plans: an unread change passes nothing.
   */
  async #review(
    watched: BranchHead,
    b: BranchHead,
  ): Promise<{ review: BranchReview } | { failed: ReasonNote }> {
    try {
      const review = await this.#d.reviewer!.review(
        { ref: watched.branch, commit: watched.commit },
        { ref: b.branch, commit: b.commit },
      );
      this.#d.log.info("branch reviewed", {
        branch: b.branch,
        commit: b.commit,
        verdict: review.result.verdict,
        count: review.result.findings.length,
      });
      return { review };
    } catch (e) {
      this.#d.log.warn("branch review failed", {
        branch: b.branch,
        reason: reasonOf(e),
        error: messageOf(e),
      });
      const reason = reasonOf(e);
      return {
        failed: {
          reason: isReason(reason) ? reason : "Internal",
          message: `the review of ${b.branch} against the playbooks could not run: ${messageOf(e)}`,
        },
      };
    }
  }

  /** The live preview; a failure of the previewer itself holds the plan, it never passes it. */
  async #live(
    parsed: NonNullable<Assessed["parsed"]>,
    files: BoundFileSource,
  ): Promise<LiveFindings | undefined> {
    if (!this.#d.live) return undefined;
    try {
      return await this.#d.live.preview(parsed, files);
    } catch (e) {
      this.#d.log.warn("live preview failed", { reason: reasonOf(e), error: messageOf(e) });
      return {
        reasons: [{ reason: "NodeUnreadable", message: `live preview failed: ${messageOf(e)}` }],
        checks: [],
        safeguards: [],
        healthRounds: [],
        held: true,
        refused: false,
        reads: "the live preview stopped before completing its reads",
      };
    }
  }

  #publishPreview(
    facts: PlanFacts,
    verdict: PreviewVerdict,
    message: string,
    live?: LiveFindings,
  ) {
    const markdown = this.#d.renderer.preview({
      facts,
      verdict,
      generatedAt: this.#d.clock.now(),
      ...(live ? { live } : {}),
    });
    return this.publish(
      [{ plan: facts.name, kind: "preview", branch: facts.branch, markdown }],
      message,
    );
  }

  /** Publishes through one queue: report commits never race each other. */
  publish(docs: readonly ReportDocument[], message: string): Promise<void> {
    return this.#serially(
      () => this.#d.sink.publish(docs, `cairn: ${message}`),
      docs.length,
    );
  }

  /** Pushes reports the sink kept while the remote was away, in the same queue. */
  #retryPending(): Promise<void> {
    const sink = this.#d.sink;
    if (!sink.retryPending) return Promise.resolve();
    return this.#serially(() => sink.retryPending!(), undefined);
  }

  #serially(
    send: () => Promise<PublishResult | undefined>,
    count: number | undefined,
  ): Promise<void> {
    const next = this.#publishing.then(async () => {
      try {
        const r = await send();
        if (!r) return;
        this.#d.metrics?.observeGitCommitSeconds(r.durationMs / 1000);
        this.#d.log.info(count === undefined ? "pending reports published" : "reports published", {
          commit: r.commit,
          branch: this.#d.reportBranch,
          ...(count !== undefined ? { count } : {}),
          durationMs: r.durationMs,
          verdict: r.status,
        });
      } catch (e) {
        this.#d.metrics?.reconcileError(reasonOf(e) as Reason);
        this.#d.log.error("report publish failed", { reason: reasonOf(e), error: messageOf(e) });
      }
    });
    this.#publishing = next;
    return next;
  }

  /** Starts the first queued plan of every cluster whose slot is free, while leading. */
  #dispatch(): void {
    if (this.#d.signal.aborted || this.#halt.signal.aborted) return;
    const term = this.#leadership.term();
    if (!term) return;
    // The run stops between steps on SIGTERM, when this term ends (leadership lost) or when this
    // process's epoch is found superseded.
    const deps = {
      ...this.#d,
      signal: AbortSignal.any([this.#d.signal, term, this.#halt.signal]),
    };
    for (const q of [...this.#queue]) {
      if (this.#running.has(q.cluster)) continue;
      this.#queue.splice(this.#queue.indexOf(q), 1);
      const files = branchFiles(this.#d.source, this.#d.watchedBranch, () => this.#lastWatched);
      const run = new ExecutionRun(deps, q.facts, (docs, msg) => this.publish(docs, msg), files);
      const p = run.run().then(async (rec) => {
        this.#finished.push(rec);
        // A run the journal refused for its epoch (a commit, a takeover, an owed hook's claim, any
        // fenced act): this process outlived a recovery entry and stops acting, here and now.
        if (rec.end.reasons.some((r) => r.reason === "EpochSuperseded")) {
          await this.#superseded().catch(() => false);
        }
        this.#running.delete(q.cluster);
        // Stopped by the end of its term, not by SIGTERM: the plan may run again in a later
        // term, which takes its operations over from the journal.
        if (rec.end.state === "stopped" && !this.#d.signal.aborted) {
          this.#enqueued.delete(rec.digest);
        }
        this.#dispatch();
      });
      this.#running.set(q.cluster, p);
    }
  }

  /** Counts operations by state for the metrics gauge. */
  async refreshOperationMetrics(): Promise<void> {
    if (!this.#d.metrics) return;
    const counts: Partial<Record<OperationState, number>> = {};
    for (const s of OPERATION_STATES) counts[s] = 0;
    for (const o of await this.#d.journal.listOperations()) {
      counts[o.state] = (counts[o.state] ?? 0) + 1;
    }
    this.#d.metrics.setOperations(counts);
  }
}

type PreviewVerdict = "ready" | "refused" | "held";

/**
 * Refused on any refusal or refusing live finding; held when something could not be read or the
 * bound evidence did not pass every check; ready only when all of it was seen to pass.
 */
export function previewVerdict(facts: PlanFacts, live?: LiveFindings): PreviewVerdict {
  if (facts.refusals.length > 0 || live?.refused) return "refused";
  if (live?.held || (facts.evidence && !evidencePassed(facts.evidence))) return "held";
  return "ready";
}

/**
 * A ComponentUpgrade plan's facts with the review of its branch: every blocking finding refuses
 * the plan (the bump must not merge as it stands), named by its file and line; the review itself
 * rides along for the report.
 */
export function withReview(
  facts: PlanFacts,
  r: { readonly review?: BranchReview; readonly failed?: ReasonNote },
): PlanFacts {
  if (r.failed) return { ...facts, refusals: [...facts.refusals, r.failed] };
  if (!r.review) return facts;
  const blocking = r.review.result.findings.filter((f) => f.severity === "blocking");
  return {
    ...facts,
    refusals: [
      ...facts.refusals,
      ...blocking.map((f): ReasonNote => ({
        reason: f.code,
        message: `${f.component}: ${f.message}`,
        ...(f.where[0]
          ? {
            where: `${f.where[0].file}:${f.where[0].line}:${f.where[0].column} (${
              f.where[0].side
            })`,
          }
          : {}),
      })),
    ],
    review: r.review,
  };
}

/** Identifies the trust root's content: an edited allowed_signers re-assesses everything. */
function trustMark(signers: AllowedSigners): string {
  return JSON.stringify(signers.entries);
}

async function fileKey(file: PlanFile): Promise<string> {
  const sig = file.signature ? await sha256Hex(file.signature) : "-";
  return `${file.blob}:${sig}`;
}

export function reasonOf(e: unknown): string {
  const r = (e as { reason?: unknown })?.reason;
  return typeof r === "string" ? r : "Internal";
}

export function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
