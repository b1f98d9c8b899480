/**
 * The hold before each node's commitment (docs/operating.md): a frozen cluster, a breakpoint
 * without its signed continuation, or no maintenance window with room for the whole step keeps the
 * next node uncommitted. The rollout waits — it is not halted, nothing is sent and no operation is
 * created — and resumes when the reason is gone. Each hold and each resume is journaled once (a
 * hold that changes reason, or whose next window moves, is a new hold), so the report shows when
 * and why the rollout stood still.
 *
 * Only commitments are held. A node step already committed is never interrupted by a window
 * closing or a freeze: it finishes, or halts and is classified by the recovery rules.
 */
import type { OperatedPlan, PlanNode } from "../../domain/plan/schema.ts";
import type { Alertmanager } from "../../ports/alertmanager.ts";
import type { Reason } from "../../domain/reasons.ts";
import { admitCommitment, type WindowSpec } from "../../domain/ops/window.ts";
import type { BoundPlan, ExecutorDeps } from "../executor/deps.ts";
import { controllerActor } from "../executor/observe.ts";
import { expectedStepMs } from "../../domain/ops/expected_step.ts";
import { breakpointBefore, type BreakpointGate, signedContinuations } from "./breakpoint.ts";

/** What the operator configured beside the plans (the reconciler's settings). */
export interface OperatingSettings {
  /** The cluster's default windows; a plan that declares its own replaces them. */
  readonly defaultWindows?: readonly WindowSpec[];
  /** Reads and verifies breakpoint continuations; default: signed files through git. */
  readonly continuations?: BreakpointGate;
  /** The cluster's Alertmanager: vetoing alert bindings and expected-noise silences. */
  readonly alertmanager?: Alertmanager;
}

/** Why the next commitment waits. */
export interface Hold {
  readonly reason: Reason;
  readonly detail: string;
  /** When to look again at the latest (a window's opening); absent: poll. */
  readonly untilMs?: number;
  /** Recorded with the hold (the next window, the breakpoint, the freeze's actor). */
  readonly facts: Readonly<Record<string, unknown>>;
}

/** How often a freeze or a breakpoint is re-read while it holds. */
export const HOLD_POLL_MS = 30_000;
/** How long to wait before looking again when no window within a year fits the step. */
const NO_WINDOW_RETRY_MS = 3_600_000;

/** The windows that govern a plan: its own, else the cluster's default, else none. */
export function governingWindows(
  bound: BoundPlan<OperatedPlan>,
  settings: OperatingSettings | undefined,
): readonly WindowSpec[] {
  return bound.plan.spec.windows ?? settings?.defaultWindows ?? [];
}

/**
 * The first reason the commitment of a step on `node` must wait, if any; `previous` is the node of
 * the plan's step before it (undefined for the first step).
 */
export async function holdReason(
  deps: ExecutorDeps,
  bound: BoundPlan<OperatedPlan>,
  previous: string | undefined,
  node: string,
): Promise<Hold | undefined> {
  const cluster = bound.plan.metadata.cluster;
  const freeze = await deps.journal.clusterFreeze(cluster);
  if (freeze?.frozen) {
    return {
      reason: "ClusterFrozen",
      detail: `cluster ${cluster} frozen by ${freeze.actor}: ${freeze.reason}`,
      facts: { frozenBy: freeze.actor, frozenAtMs: freeze.atMs, why: freeze.reason },
    };
  }
  const bp = breakpointBefore(bound.plan, previous, node);
  if (bp) {
    const gate = deps.operating?.continuations ?? signedContinuations(deps.authority.ports);
    const c = await gate.check(bound, bp.name);
    if (!c.ok) {
      return {
        reason: c.reason,
        detail: `breakpoint ${bp.name} after ${bp.after}: ${c.detail}`,
        facts: { breakpoint: bp.name, after: bp.after },
      };
    }
  }
  const now = deps.clock.now();
  const expected = expectedStepMs(bound.plan);
  const d = admitCommitment(governingWindows(bound, deps.operating), now, expected);
  if (d.admit) return undefined;
  const minutes = Math.round(expected / 60_000);
  const next = d.next
    ? `next window ${new Date(d.next.opensAtMs).toISOString()} to ${
      new Date(d.next.closesAtMs).toISOString()
    }`
    : "no window within a year is long enough";
  return {
    reason: d.why === "closed" ? "MaintenanceWindowClosed" : "MaintenanceWindowTooShort",
    detail: d.why === "closed"
      ? `outside every maintenance window; ${next}`
      : `the open window closes at ${
        new Date(d.current!.closesAtMs).toISOString()
      }, before a ${minutes}-minute step would end; ${next}`,
    untilMs: d.next?.opensAtMs ?? now + NO_WINDOW_RETRY_MS,
    facts: {
      expectedStepMinutes: minutes,
      ...(d.next ? { nextOpensAtMs: d.next.opensAtMs, nextClosesAtMs: d.next.closesAtMs } : {}),
    },
  };
}

/**
 * Waits until nothing holds the commitment of a step on `node` (`previous`: the node of the step
 * before). Returns `stopped` when the controller is asked to stop meanwhile (nothing was
 * committed).
 */
export async function waitForCommitment(
  deps: ExecutorDeps,
  bound: BoundPlan<OperatedPlan>,
  node: Pick<PlanNode, "name">,
  previous: string | undefined,
): Promise<"admitted" | "stopped"> {
  let held: { readonly key: string; readonly reason: string } | undefined;
  while (true) {
    if (deps.signal?.aborted) return "stopped";
    const h = await holdReason(deps, bound, previous, node.name);
    if (!h) {
      if (held !== undefined) await record(deps, bound, node, "resume", { after: held.reason });
      return "admitted";
    }
    const key = `${h.reason}|${h.detail}|${h.untilMs ?? ""}`;
    if (key !== held?.key) {
      held = { key, reason: h.reason };
      await record(deps, bound, node, "hold", { reason: h.reason, detail: h.detail, ...h.facts });
      deps.log.warn("next commitment held", { node: node.name, reason: h.reason });
      deps.observer?.onHold?.({ node: node.name, reason: h.reason, detail: h.detail });
    }
    const now = deps.clock.now();
    const wait = h.untilMs !== undefined
      ? Math.max(1, h.untilMs - now)
      : Math.max(deps.pollIntervalMs, HOLD_POLL_MS);
    try {
      await deps.clock.sleep(wait, deps.signal);
    } catch {
      if (deps.signal?.aborted) return "stopped";
      throw new Error("the hold's wait ended without a stop");
    }
  }
}

async function record(
  deps: ExecutorDeps,
  bound: BoundPlan<OperatedPlan>,
  node: Pick<PlanNode, "name">,
  kind: "hold" | "resume",
  detail: Record<string, unknown>,
): Promise<void> {
  await deps.journal.recordRolloutEvent({
    planDigest: bound.digest,
    node: node.name,
    kind,
    detail,
    actor: controllerActor(deps.owner),
    nowMs: deps.clock.now(),
  });
}
