/**
 * The PlanExecutor port of the reconcile loop over the engine's `bindPlan` and `executePlan`:
 * binding refuses with the journal's reason instead of throwing, execution reports every
 * operation milestone to the loop (which re-checks its execution report) and turns the rollout's
 * outcome into the loop's end-of-run facts.
 */
import { CairnError } from "../../domain/errors.ts";
import type { InstallerResolver } from "../../ports/dispatch.ts";
import type { ExecutionEnd, PlanExecutor, TrustRoot } from "../../ports/reconcile.ts";
import type { BoundPlan, ExecutionObserver } from "../executor/deps.ts";
import { bindPlan, type ExecuteOptions, executePlan } from "../executor/run_plan.ts";
import { notifyingObserver } from "../operating/notify.ts";
import type { Notifier } from "../../ports/notifier.ts";
import type { CommitHistory } from "../../ports/commit_history.ts";
import { bindComponentUpgrade } from "../component/run_component.ts";
import { type BoundComponent, executeComponent } from "./component_execution.ts";
import { bindKubernetesUpgrade, executeKubernetesUpgrade } from "../k8s_upgrade/run.ts";
import { bindConfigApply, executeConfigApply } from "../config_apply/run_config_apply.ts";
import type {
  ConfigApplyPlan,
  KubernetesUpgradePlan,
  TalosUpgradePlan,
} from "../../domain/plan/schema.ts";

/** The plan kinds the loop executes, each bound and run by its own executor. */
type ExecutablePlan = TalosUpgradePlan | KubernetesUpgradePlan | ConfigApplyPlan;

/**
 * How plans run under the loop: executePlan's options less the plan, its authority and the stop
 * signal; `installers` resolves installer references before each commitment (absent: recorded as
 * not resolved).
 */
export type PlanExecutorSettings = Omit<ExecuteOptions, "bound" | "signal" | "authority"> & {
  readonly installers?: InstallerResolver;
  /** Told of holds, stalls and unresolved operations (docs/operating.md#notifications). */
  readonly notifier?: Notifier;
  /**
   * The watched repository's history: whether a revision Flux reports contains a
   * ComponentUpgrade's merge (absent: only the merge commit itself counts as delivered).
   */
  readonly commitHistory?: CommitHistory;
};

/** What a bound plan is re-authorised with: its bytes and signatures as approved. */
interface BoundRun {
  readonly plan: BoundPlan<ExecutablePlan>;
  readonly bytes: Uint8Array;
  readonly signatures: string;
}

/**
 * The PlanExecutor: plans are bound once per process, then executed by digest. Each run re-checks
 * the plan's authority against `authority.trust` (read at every check) and the watched branch's
 * bound files the loop hands over.
 */
export function planExecutor(
  s: PlanExecutorSettings,
  authority: { readonly trust: TrustRoot; readonly requiredApprovals: number },
): PlanExecutor {
  const bound = new Map<string, BoundRun>();
  const components = new Map<string, BoundComponent>();
  return {
    async bind(input) {
      try {
        if (input.parsed.plan.kind === "ComponentUpgrade") {
          // Delivered by Flux, observed by cairn (engine/reconcile/component_execution.ts).
          const c = await bindComponentUpgrade(s.journal, {
            parsed: input.parsed,
            bytes: input.bytes,
            signatures: input.signatures,
            firstSeenCommit: input.commit,
            approver: { identity: input.approver, role: "approver" },
            nowMs: input.nowMs,
          });
          components.set(c.digest, {
            ...c,
            bytes: input.bytes,
            signatures: input.signatures,
            merge: input.commit,
          });
          return { ok: true };
        }
        const binding = {
          parsed: input.parsed,
          bytes: input.bytes,
          signatures: input.signatures,
          firstSeenCommit: input.commit,
          approver: { identity: input.approver, role: "approver" as const },
          nowMs: input.nowMs,
        };
        // A KubernetesUpgrade (engine/k8s_upgrade/run.ts) and a ConfigApply
        // (engine/config_apply/run_config_apply.ts) have their own executors; the rest bind here.
        const kind = input.parsed.plan.kind;
        const b: BoundPlan<ExecutablePlan> = kind === "KubernetesUpgrade"
          ? await bindKubernetesUpgrade(s.journal, binding)
          : kind === "ConfigApply"
          ? await bindConfigApply(s.journal, binding)
          : await bindPlan(s.journal, binding);
        bound.set(b.digest, { plan: b, bytes: input.bytes, signatures: input.signatures });
        return { ok: true };
      } catch (e) {
        if (!(e instanceof CairnError)) throw e;
        return { ok: false, note: { reason: e.reason, message: e.message } };
      }
    },
    async execute(digest, opts) {
      const c = components.get(digest);
      if (c) return await executeComponent(s, authority, c, opts);
      const b = bound.get(digest);
      if (!b) throw new TypeError(`plan ${digest} was not bound in this process`);
      const { installers, notifier, ...settings } = s;
      const notified = {
        name: b.plan.plan.metadata.name,
        digest: b.plan.digest,
        cluster: b.plan.plan.metadata.cluster,
      };
      const observer = notifier
        ? notifyingObserver(notifier, notified, s.clock, s.observer)
        : s.observer;
      const run = {
        ...settings,
        observer: withProgress(opts.onProgress, observer),
        authority: {
          bytes: b.bytes,
          signatures: b.signatures,
          requiredApprovals: authority.requiredApprovals,
          files: opts.files,
          trust: authority.trust,
          ...(installers ? { installers } : {}),
        },
        signal: opts.signal,
      };
      const plan = b.plan.plan;
      const outcome = plan.kind === "KubernetesUpgrade"
        ? await executeKubernetesUpgrade({ ...run, bound: { plan, digest: b.plan.digest } })
        : plan.kind === "ConfigApply"
        ? await executeConfigApply({ ...run, bound: { plan, digest: b.plan.digest } })
        : await executePlan({ ...run, bound: { plan, digest: b.plan.digest } });
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
    // A hold or a stall is news for the report (and the operator): re-check it.
    onHold: (h) => {
      also?.onHold?.(h);
      onProgress();
    },
    onStall: (st) => {
      also?.onStall?.(st);
      onProgress();
    },
  };
}
