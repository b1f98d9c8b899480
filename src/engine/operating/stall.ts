/**
 * Stall detection (docs/operating.md#stalls): a step that has waited longer than its plan allows
 * is reported while it still waits, naming what it waits for: the PodDisruptionBudget refusing a
 * pod's eviction, the binding that stays unreadable, the node that does not come back. The report
 * is a journaled `stall` rollout event (once per blocker), a log line, and the observer's `onStall`
 * (metrics, notifications); the wait itself goes on to its own bound, a stall changes nothing.
 */
import type { Reason } from "../../domain/reasons.ts";
import type { OperatedPlan } from "../../domain/plan/schema.ts";
import type { StepState } from "../executor/deps.ts";
import { controllerActor } from "../executor/observe.ts";

/** What a waiting step waits for. */
export interface Blocker {
  /** `PodDisruptionBudget rook-ceph/rook-ceph-osd`, `binding drain-feasible`, `node worker-1`. */
  readonly name: string;
  /** What it is holding up (the pods refused, the phase). */
  readonly holding: string;
  readonly detail: string;
}

/** How long a step may wait before it is reported stalled: the plan's, else half the bound. */
export function stallAfterMs(s: StallScope, waitBoundMs: number): number {
  // Every executing kind may declare it (a gate, a ConfigApply's drain); else half the bound.
  const declared = s.bound.plan.spec.stallAfterSeconds;
  return declared !== undefined ? declared * 1000 : Math.floor(waitBoundMs / 2);
}

/** The PDB an eviction refusal names (`The disruption budget NAME needs…`), if any. */
export function pdbOfRefusal(namespace: string, message: string): string | undefined {
  const m = /The disruption budget (\S+) /.exec(message);
  return m ? `PodDisruptionBudget ${namespace}/${m[1]}` : undefined;
}

/** Tracks blockers since when they started blocking; reports each one once past the limit. */
/** What a stall report needs: the plan, the node and the ports (a step's state has them). */
export type StallScope = Pick<StepState<OperatedPlan>, "deps" | "bound" | "node">;

export class StallWatch {
  readonly #since = new Map<string, { readonly at: number; blocker: Blocker }>();
  readonly #reported = new Set<string>();

  constructor(private readonly s: StallScope, private readonly phase: string) {}

  /** `blocker` blocks now (its first sighting starts its clock). */
  blocked(blocker: Blocker, nowMs: number): void {
    const cur = this.#since.get(blocker.name);
    if (cur) cur.blocker = blocker;
    else this.#since.set(blocker.name, { at: nowMs, blocker });
  }

  /** Forgets blockers that no longer block. */
  keepOnly(names: ReadonlySet<string>): void {
    for (const k of [...this.#since.keys()]) if (!names.has(k)) this.#since.delete(k);
  }

  /** Reports every blocker waited on longer than `limitMs` and not reported yet. */
  async check(nowMs: number, limitMs: number): Promise<void> {
    for (const [name, b] of this.#since) {
      if (this.#reported.has(name) || nowMs - b.at < limitMs) continue;
      this.#reported.add(name);
      await reportStall(this.s, this.phase, b.blocker, nowMs - b.at);
    }
  }
}

const STALLED: Reason = "StepStalled";

async function reportStall(
  s: StallScope,
  phase: string,
  b: Blocker,
  waitedMs: number,
): Promise<void> {
  const detail = `${phase} of ${s.node} has waited ${Math.round(waitedMs / 1000)}s on ${b.name} ` +
    `(${b.holding}): ${b.detail}`;
  await s.deps.journal.recordRolloutEvent({
    planDigest: s.bound.digest,
    node: s.node,
    kind: "stall",
    detail: {
      reason: STALLED,
      phase,
      blocker: b.name,
      holding: b.holding,
      waitedSeconds: Math.round(waitedMs / 1000),
      detail,
    },
    actor: controllerActor(s.deps.owner),
    nowMs: s.deps.clock.now(),
  });
  s.deps.log.warn("step stalled", { node: s.node, reason: STALLED, path: b.name });
  s.deps.observer?.onStall?.({ node: s.node, phase, blocker: b.name, detail });
}
