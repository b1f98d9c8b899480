/**
 * cairn's metric set, typed: the reconcile loop calls these methods; `/metrics` renders them.
 * Every label value comes from a closed vocabulary (states, verdicts, phases, response classes,
 * reason codes), so cardinality stays bounded whatever the cluster or the plans contain.
 */
import type { Verdict } from "../../domain/health/types.ts";
import {
  OPERATION_STATES,
  type OperationState,
  type Phase,
  type ResponseClass,
} from "../../domain/operation.ts";
import type { Reason } from "../../domain/reasons.ts";
import { MetricsRegistry } from "./registry.ts";

/** Buckets for git fetch/commit latency in seconds: local fetches take ms, remote ones seconds. */
export const GIT_SECONDS_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** The typed metric set. */
export interface CairnMetrics {
  /** Sets `cairn_operations{state}` for every state (absent states read 0). */
  setOperations(counts: Partial<Record<OperationState, number>>): void;
  /** Counts one health round by verdict. */
  healthRound(verdict: Verdict): void;
  /** Counts one attempt outcome by phase and response class. */
  attempt(phase: Phase, responseClass: ResponseClass): void;
  observeGitFetchSeconds(seconds: number): void;
  observeGitCommitSeconds(seconds: number): void;
  /** Counts one reconcile error by reason code. */
  reconcileError(reason: Reason): void;
  /** Counts one hold before a commitment by reason code (a window, a freeze, a breakpoint). */
  hold(reason: Reason): void;
  /** Counts one stall reported while a step waits, by phase. */
  stall(phase: string): void;
  /** Prometheus text of every metric. */
  render(): string;
}

/** Creates the cairn metric set on a fresh registry. */
export function createCairnMetrics(opts: { readonly version: string }): CairnMetrics {
  const r = new MetricsRegistry();
  const operations = r.gauge({
    name: "cairn_operations",
    help: "Journal operations by ER state.",
    labelNames: ["state"],
  });
  const rounds = r.counter({
    name: "cairn_health_rounds_total",
    help: "Completed health rounds by verdict.",
    labelNames: ["verdict"],
  });
  const attempts = r.counter({
    name: "cairn_attempts_total",
    help: "Accounted attempts by phase and response class.",
    labelNames: ["phase", "response_class"],
  });
  const fetch = r.histogram({
    name: "cairn_git_fetch_seconds",
    help: "Latency of incremental fetches of the watched remote.",
    buckets: GIT_SECONDS_BUCKETS,
  });
  const commit = r.histogram({
    name: "cairn_git_commit_seconds",
    help: "Latency of committing and pushing a report, retries included.",
    buckets: GIT_SECONDS_BUCKETS,
  });
  const errors = r.counter({
    name: "cairn_reconcile_errors_total",
    help: "Reconcile errors by reason code.",
    labelNames: ["reason"],
  });
  const holds = r.counter({
    name: "cairn_holds_total",
    help: "Holds before a node commitment by reason (closed window, freeze, breakpoint).",
    labelNames: ["reason"],
  });
  const stalls = r.counter({
    name: "cairn_stalls_total",
    help: "Steps reported stalled while they waited, by phase.",
    labelNames: ["phase"],
  });
  const info = r.gauge({
    name: "cairn_build_info",
    help: "Always 1; the labels carry the running version.",
    labelNames: ["version"],
  });
  info.set({ version: opts.version }, 1);
  for (const state of OPERATION_STATES) operations.set({ state }, 0);
  return {
    setOperations(counts) {
      for (const state of OPERATION_STATES) operations.set({ state }, counts[state] ?? 0);
    },
    healthRound: (verdict) => rounds.inc({ verdict }),
    attempt: (phase, responseClass) => attempts.inc({ phase, response_class: responseClass }),
    observeGitFetchSeconds: (s) => fetch.observe(undefined, s),
    observeGitCommitSeconds: (s) => commit.observe(undefined, s),
    reconcileError: (reason) => errors.inc({ reason }),
    hold: (reason) => holds.inc({ reason }),
    stall: (phase) => stalls.inc({ phase }),
    render: () => r.render(),
  };
}
