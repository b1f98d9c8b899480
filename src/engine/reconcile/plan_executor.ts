/**
 * The PlanExecutor port of the reconcile loop over the engine's `bindPlan` and `executePlan`:
 * binding refuses with the journal's reason instead of throwing, execution reports every
 * operation milestone to the loop (which re-checks its execution report) and turns the rollout's
 * outcome into the loop's end-of-run facts.
 */
import { CairnError } from "../../domain/errors.ts";
import type { ExecutionEnd, PlanExecutor } from "../../ports/reconcile.ts";
import type { BoundPlan, ExecutionObserver } from "../executor/deps.ts";
import { bindPlan, type ExecuteOptions, executePlan } from "../executor/run_plan.ts";

/** How plans run under the loop: executePlan's options less the plan and the stop signal. */
export type PlanExecutorSettings = Omit<ExecuteOptions, "bound" | "signal">;

/** The PlanExecutor: plans are bound once per process, then executed by digest. */
export function planExecutor(s: PlanExecutorSettings): PlanExecutor {
  const bound = new Map<string, BoundPlan>();
  return {
    async bind(input) {
      try {
        const b = await bindPlan(s.journal, {
          parsed: input.parsed,
          bytes: input.bytes,
          signatures: input.signatures,
          firstSeenCommit: input.commit,
          approver: { identity: input.approver, role: "approver" },
          nowMs: input.nowMs,
        });
        bound.set(b.digest, b);
        return { ok: true };
      } catch (e) {
        if (!(e instanceof CairnError)) throw e;
        return { ok: false, note: { reason: e.reason, message: e.message } };
      }
    },
    async execute(digest, opts) {
      const b = bound.get(digest);
      if (!b) throw new TypeError(`plan ${digest} was not bound in this process`);
      const outcome = await executePlan({
        ...s,
        observer: withProgress(opts.onProgress, s.observer),
        bound: b,
        signal: opts.signal,
      });
      const reasons = outcome.nodes.filter((n) => n.state !== "completed").map((n) => ({
        reason: n.reason,
        message: n.detail,
        where: n.node,
      }));
      if (outcome.state === "stopped" && reasons.length === 0) {
        reasons.push({
          reason: "Stopped",
          message: "the controller stopped between node steps; the next start resumes the plan",
          where: "controller",
        });
      }
      return { state: outcome.state, reasons } satisfies ExecutionEnd;
    },
  };
}

/**
 * Every operation milestone re-checks the execution report (the run publishes only when its
 * milestone signature moved); the settings' own observer (metrics) is told everything too.
 */
function withProgress(onProgress: () => void, also?: ExecutionObserver): ExecutionObserver {
  return {
    onOperationState: (m) => {
      also?.onOperationState?.(m);
      onProgress();
    },
    onAttemptResponse: (a) => also?.onAttemptResponse?.(a),
    onHealthRound: (r) => also?.onHealthRound?.(r),
  };
}
