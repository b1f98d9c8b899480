/**
 * One approved plan's execution under the reconcile loop: runs it through the PlanExecutor and
 * commits `reports/<plan>/execution.md` at milestones only — a node's operation changing state
 * (a node done, a node unresolved) or the outcome changing — never every health round.
 */
import { isInFlight } from "../../domain/operation.ts";
import { isReason } from "../../domain/reasons.ts";
import type { BoundFileSource } from "../../ports/dispatch.ts";
import type { ExecutionEnd, ExecutionFacts, PlanFacts } from "../../ports/reconcile.ts";
import type { ReportDocument } from "../../ports/report_sink.ts";
import type { ExecutionRecord, ReconcilerDeps } from "./reconciler.ts";

/** Longest the "started" report waits for the run's first milestone (see `run`). */
export const STARTED_REPORT_WAIT_MS = 2_000;

type Publish = (docs: readonly ReportDocument[], message: string) => Promise<void>;

/** Runs one plan and keeps its execution report current. */
export class ExecutionRun {
  readonly #d: ReconcilerDeps;
  readonly #facts: PlanFacts;
  readonly #publish: Publish;
  readonly #files: BoundFileSource;
  #lastMilestone = "";
  #check: Promise<void> = Promise.resolve();
  #pending = false;

  /** `files`: the watched branch's bound files as they are now (re-checked at dispatch). */
  constructor(deps: ReconcilerDeps, facts: PlanFacts, publish: Publish, files: BoundFileSource) {
    this.#d = deps;
    this.#facts = facts;
    this.#publish = publish;
    this.#files = files;
  }

  async run(): Promise<ExecutionRecord> {
    const log = this.#d.log.child({ planName: this.#facts.name, planDigest: this.#facts.digest });
    log.info("execution starting");
    this.#notify("execution-start", "execution started");
    // The "started" report goes through the same coalescing queue as every later milestone, and
    // waits for the run's first one (a commitment, a hold, a stall) or STARTED_REPORT_WAIT_MS,
    // whichever comes first: its commit and push (ten git processes) took the CPU from the reads
    // on the way to the first intent, 60-100 ms of it on two cores (issue 18). A gate that waits
    // longer still shows the run as started within that time.
    const startedWait = new AbortController();
    (this.#d.waitClock ?? this.#d.clock).sleep(STARTED_REPORT_WAIT_MS, startedWait.signal).then(
      () => this.#progress(),
      () => {},
    );
    let end: ExecutionEnd;
    try {
      end = await this.#d.executor.execute(this.#facts.digest, {
        signal: this.#d.signal,
        onProgress: () => {
          startedWait.abort();
          this.#progress();
        },
        files: this.#files,
      });
    } catch (e) {
      const reason = (e as { reason?: unknown })?.reason;
      end = {
        state: "halted",
        reasons: [{
          reason: typeof reason === "string" && isReason(reason) ? reason : "ExecutorError",
          message: e instanceof Error ? e.message : String(e),
        }],
      };
    }
    startedWait.abort();
    await this.#check;
    const outcome = await this.#milestone(end);
    // Unresolved operations and holds were told as they happened; a clean end is told here.
    if (end.state === "completed") this.#notify("completed", `execution ended: ${outcome}`);
    log.info("execution ended", {
      verdict: outcome,
      ...(end.reasons[0] ? { reason: end.reasons[0].reason } : {}),
    });
    return { plan: this.#facts.name, digest: this.#facts.digest, end, outcome };
  }

  #notify(event: "execution-start" | "completed", text: string): void {
    void this.#d.notifier?.notify({
      event,
      plan: this.#facts.name,
      digest: this.#facts.digest,
      ...(this.#facts.plan ? { cluster: this.#facts.plan.metadata.cluster } : {}),
      text,
      atMs: this.#d.clock.now(),
    });
  }

  /** Coalesces progress signals: at most one milestone check runs, one more may wait. */
  #progress(): void {
    if (this.#pending) return;
    this.#pending = true;
    this.#check = this.#check.then(async () => {
      this.#pending = false;
      await this.#milestone();
    });
  }

  /** Publishes the report when the milestone signature moved; returns the outcome word. */
  async #milestone(end?: ExecutionEnd): Promise<string> {
    const f = await this.#facts_(end);
    const outcome = this.#d.renderer.outcome(f);
    // In-flight moves (committed → sending → verifying) are not milestones; settled states are.
    const ops = (await this.#d.journal.listOperations())
      .filter((o) => o.planDigest === this.#facts.digest && !isInFlight(o.state))
      .map((o) => `${o.machine}=${o.state}`).sort().join(",");
    // Holds, stalls and silences are milestones too: the report shows them while they last.
    const beside = f.history?.rolloutEvents?.length ?? 0;
    const signature = `${outcome}|${ops}|${end ? end.state : "live"}|${beside}`;
    if (signature === this.#lastMilestone) return outcome;
    this.#lastMilestone = signature;
    const markdown = this.#d.renderer.execution(f);
    await this.#publish(
      [{ plan: this.#facts.name, kind: "execution", markdown }],
      `execution of ${this.#facts.name}: ${outcome}`,
    );
    return outcome;
  }

  async #facts_(end?: ExecutionEnd): Promise<ExecutionFacts> {
    const history = await this.#d.journal.planHistory(this.#facts.digest);
    const chain = await this.#d.journal.verifyChain();
    return {
      facts: this.#facts,
      history,
      head: chain.ok
        ? { hash: chain.head, events: chain.rows }
        : { hash: `chain broken at seq ${chain.seq}: ${chain.why}`, events: 0 },
      generatedAt: this.#d.clock.now(),
      ...(end ? { end } : {}),
    };
  }
}
