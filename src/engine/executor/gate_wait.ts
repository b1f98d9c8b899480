/**
 * The gate before a commitment, for every executing kind: it holds, it does not fail the rollout.
 * Fresh rounds are taken until one passes or the step's window ends, so a transient unreadable read
 * (an apid reconnect, a slow watch) delays the step instead of stopping the rollout; every round is
 * recorded and nothing is committed meanwhile. A gate held by a failing or unreadable binding is
 * reported stalled while it waits, naming the binding (docs/operating.md#stalls).
 */
import type { OperatedPlan } from "../../domain/plan/schema.ts";
import { stallAfterMs, StallWatch } from "../operating/stall.ts";
import type { BoundPlan, ExecutorDeps, RoundVerdict } from "./deps.ts";
import { type NodeOutcome, notCommitted } from "./step_outcome.ts";

/** A held gate is re-read every 30 s at most often: it waits for the cluster, not for a step. */
const GATE_RETRY_MS = 30_000;

/** Rounds until one passes or `windowMs` passes; the last round's verdict. */
export async function gateUntilPass(
  deps: ExecutorDeps,
  bound: BoundPlan<OperatedPlan>,
  node: string,
  windowMs: number,
): Promise<RoundVerdict> {
  const deadline = deps.clock.now() + windowMs;
  const stall = new StallWatch({ deps, bound, node }, "gate");
  const stallMs = stallAfterMs({ deps, bound, node }, windowMs);
  while (true) {
    const r = await deps.health.round("gate", { target: { node, operationOwnedCordon: false } });
    if (r.verdict === "pass" || deps.clock.now() >= deadline || deps.signal?.aborted) return r;
    const blocker = `binding ${r.message.split(":")[0]}`;
    stall.blocked({
      name: blocker,
      holding: `commitment of ${node}`,
      detail: `${r.reason}: ${r.message}`,
    }, deps.clock.now());
    stall.keepOnly(new Set([blocker]));
    await stall.check(deps.clock.now(), stallMs);
    const wait = Math.min(
      Math.max(deps.pollIntervalMs, GATE_RETRY_MS),
      Math.max(1, deadline - deps.clock.now()),
    );
    await deps.clock.sleep(wait, deps.signal);
  }
}

/** The gate before the commitment of a step on `node`: undefined once it passed, else why not. */
export async function gateBefore(
  deps: ExecutorDeps,
  bound: BoundPlan<OperatedPlan>,
  node: string,
  windowMs: number,
): Promise<NodeOutcome | undefined> {
  const gate = await gateUntilPass(deps, bound, node, windowMs);
  if (gate.verdict === "pass") return undefined;
  return notCommitted(
    node,
    gate.verdict === "fail" ? "GateFailed" : "GateUnreadable",
    `${gate.reason}: ${gate.message}`,
  );
}
