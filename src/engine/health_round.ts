import type { Clock } from "../ports/clock.ts";
import { CairnError } from "../domain/errors.ts";
import { NOT_WANTED } from "./abort_reason.ts";
import type { Reason } from "../domain/reasons.ts";
import type { HealthPolicy } from "../domain/health/policy_parse.ts";
import type { Binding } from "../domain/health/policy_schema.ts";
import { readBinding } from "../domain/health/readers/index.ts";
import { unreadableResult } from "../domain/health/readers/common.ts";
import { evaluateRound, type RoundOutcome } from "../domain/health/round.ts";
import type {
  AlertView,
  BindingResult,
  EvidenceRead,
  HealthEvidence,
  HealthTarget,
} from "../domain/health/types.ts";

export interface RoundDeps {
  readonly clock: Clock;
  readonly evidence: HealthEvidence;
}

export interface RoundOptions {
  /** Length of the collection interval; every binding must finish inside it. */
  readonly intervalMs: number;
  readonly target?: HealthTarget;
  readonly signal?: AbortSignal;
  /**
   * The round decides a terminal state (verification, post-gate): it reads fresh lists, never a
   * watch cache that may have skipped events (`EvidenceRead`).
   */
  readonly fresh?: boolean;
}

/**
 * Collects one bounded round: every binding is prepared in parallel, each bounded by the smaller
 * of its own timeout and the time left in the round; a binding that runs out of time is
 * `unreadable` (never failed). The round is then evaluated over what was collected.
 */
export async function collectRound(
  deps: RoundDeps,
  policy: HealthPolicy,
  opts: RoundOptions,
): Promise<RoundOutcome> {
  const startedAtMs = deps.clock.now();
  const window = { startedAtMs, deadlineMs: startedAtMs + opts.intervalMs };
  // One identity per round: bindings reading the same resource share one fresh list.
  const read: EvidenceRead = { fresh: opts.fresh === true, round: {} };
  const results = await Promise.all(
    policy.bindings.map((b) => collectBinding(deps, b, window.deadlineMs, opts, read)),
  );
  return evaluateRound(policy, window, results);
}

async function collectBinding(
  deps: RoundDeps,
  b: Binding,
  deadlineMs: number,
  opts: RoundOptions,
  read: EvidenceRead,
): Promise<BindingResult> {
  const { clock, evidence } = deps;
  const startedAtMs = clock.now();
  const budget = Math.min(b.timeoutSeconds * 1000, deadlineMs - startedAtMs);
  if (budget <= 0) {
    return unreadableResult(
      b,
      "HealthReadTimedOut",
      "no time left in the round",
      startedAtMs,
      startedAtMs,
    );
  }
  const ac = new AbortController();
  const stop = () => ac.abort(opts.signal?.reason);
  opts.signal?.addEventListener("abort", stop, { once: true });
  try {
    const outcome = await Promise.race([
      evidence.prepare(b, startedAtMs + budget, ac.signal, read).then(() => "ready" as const),
      clock.sleep(budget, ac.signal).then(() => "timeout" as const),
    ]);
    if (outcome === "timeout") {
      return unreadableResult(
        b,
        "HealthReadTimedOut",
        `read not done within ${budget} ms`,
        startedAtMs,
        clock.now(),
      );
    }
  } catch (e) {
    const reason: Reason = e instanceof CairnError ? e.reason : "HealthReadFailed";
    const message = e instanceof Error ? e.message : String(e);
    return unreadableResult(b, reason, message, startedAtMs, clock.now());
  } finally {
    ac.abort(NOT_WANTED);
    opts.signal?.removeEventListener("abort", stop);
  }
  const inputs = {
    nowMs: clock.now(),
    kube: evidence.kubeView(),
    talos: evidence.talosView(),
    ...(evidence.routeView ? { routes: evidence.routeView() } : {}),
    ...(alertsOf(evidence) ? { alerts: alertsOf(evidence)! } : {}),
    ...(opts.target ? { target: opts.target } : {}),
  };
  return readBinding(b, inputs, startedAtMs);
}

function alertsOf(e: HealthEvidence): AlertView | undefined {
  return e.alertView?.();
}
