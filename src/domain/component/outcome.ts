/**
 * How a ComponentUpgrade run ended and what it observed (the engine's result, the report's input,
 * and what the reconcile loop journals at its end so a restart re-renders the same report rather
 * than observing again). Plain data.
 */
import type { DeliveryCheck, DeliveryReading, DeliveryState } from "./delivery.ts";
import type { RoundOutcome } from "../health/round.ts";
import type { Reason } from "../reasons.ts";

/** The journal's rollout event that holds a ComponentUpgrade's observed end (`detail.outcome`). */
export const COMPONENT_END_EVENT = "component-end";

/** A part's judgement from a moment on (the report's observations). */
export interface DeliveryObservation {
  readonly atMs: number;
  readonly check: DeliveryCheck;
}

export interface DeliveryOutcome {
  readonly state: DeliveryState;
  /** The last pass's judgement of every part. */
  readonly checks: readonly DeliveryCheck[];
  readonly observations: readonly DeliveryObservation[];
  readonly passes: number;
  readonly startedAtMs: number;
  readonly endedAtMs: number;
  /** When every part first passed. */
  readonly landedAtMs?: number;
  readonly last: DeliveryReading;
}

/** How a ComponentUpgrade ended. Only `completed` is success; every other end exits 1. */
export type ComponentEnd =
  /** Delivered, every rendered workload on its image, the after-merge checks passed. */
  | "completed"
  /** Flux delivered the target but an operator-rendered workload still runs another image. */
  | "not-landed"
  /** Flux did not reach the target (source, release) by the deadline. */
  | "not-delivered"
  /** Delivered and landed, but the after-merge checks failed in the last round. */
  | "health-failed"
  /** The evidence could not be read (at the deadline): neither completed nor failed. */
  | "unresolved"
  /** The dispatch check or the pin digests refused (or held): nothing was observed. */
  | "refused";

/** One after-merge round as the report shows it. */
export interface AfterMergeRound {
  readonly roundId: string;
  readonly outcome: RoundOutcome;
}

export interface ComponentOutcome {
  readonly end: ComponentEnd;
  readonly refusal?: { readonly reason: Reason; readonly detail: string };
  readonly delivery?: DeliveryOutcome;
  readonly rounds: readonly AfterMergeRound[];
  /** The pin files, each as read at dispatch against its bound digest. */
  readonly pins: readonly {
    readonly path: string;
    readonly sha256: string;
    readonly ok: boolean;
  }[];
}
