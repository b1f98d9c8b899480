import type { Clock } from "../../ports/clock.ts";
import type { Journal } from "../../ports/journal.ts";
import type { HealthPolicy } from "../../domain/health/policy_parse.ts";
import { failsOnlyElsewhere, journalRows } from "../../domain/health/round.ts";
import type { HealthEvidence } from "../../domain/health/types.ts";
import { collectRound } from "../health_round.ts";
import type { ExecutionObserver, HealthGate, RoundPurpose } from "./deps.ts";

export interface JournalHealthGateOptions {
  readonly clock: Clock;
  /** Clock for the per-read timeouts of a round (defaults to `clock`). */
  readonly timeoutClock?: Clock;
  readonly journal: Journal;
  readonly evidence: HealthEvidence;
  readonly policy: HealthPolicy;
  readonly cluster: string;
  /** The bounded collection interval of one round. */
  readonly intervalMs: number;
  /** Told of each recorded round (metrics). */
  readonly observer?: ExecutionObserver;
}

/**
 * The rounds that decide a terminal state: a verification round failing at its deadline fails the
 * node, a post-gate round decides completed or failed. They read fresh lists, never a watch cache
 * that may have skipped events (a lagging cache turned an upgraded node `failed`: docs/dst.md).
 * Gate and preview rounds only hold or show; they read the caches.
 */
const DECIDES_TERMINAL_STATE: ReadonlySet<RoundPurpose> = new Set(["verify", "post-gate"]);

/** A HealthGate that collects fresh bounded rounds and records every one in the journal. */
export function journalHealthGate(o: JournalHealthGateOptions): HealthGate {
  return {
    async round(purpose, opts) {
      const policy = opts.readers
        ? {
          ...o.policy,
          bindings: o.policy.bindings.filter((b) => opts.readers!.includes(b.reader)),
        }
        : o.policy;
      const outcome = await collectRound(
        { clock: o.timeoutClock ?? o.clock, evidence: o.evidence },
        policy,
        {
          intervalMs: o.intervalMs,
          fresh: DECIDES_TERMINAL_STATE.has(purpose),
          ...(opts.target ? { target: opts.target } : {}),
        },
      );
      const roundId = await o.journal.recordHealthRound({
        cluster: o.cluster,
        ...(opts.operationId ? { operationId: opts.operationId } : {}),
        purpose,
        startedAtMs: outcome.window.startedAtMs,
        finishedAtMs: o.clock.now(),
        results: journalRows(outcome),
      });
      o.observer?.onHealthRound?.({ purpose, verdict: outcome.verdict });
      return {
        verdict: outcome.verdict,
        roundId,
        reason: outcome.reason,
        message: outcome.message,
        failsOnlyElsewhere: opts.target !== undefined &&
          failsOnlyElsewhere(outcome, opts.target.node),
      };
    },
  };
}
