import { CairnError } from "../../domain/errors.ts";
import type { Reason } from "../../domain/reasons.ts";
import { isInFlight } from "../../domain/operation.ts";
import type { PlanNode, TalosHop } from "../../domain/plan/schema.ts";
import type { CordonFact } from "../cordon_ownership.ts";
import type { BoundPlan, ExecutorDeps, StepState } from "./deps.ts";
import { stepKey } from "./digests.ts";
import { commitStep, dispatchCheckBefore } from "./commit_step.ts";
import { drainPhase } from "./drain_phase.ts";
import { gateBefore } from "./gate_wait.ts";
import { underNoiseLease } from "./step_lease.ts";
import type { Halt, PhaseResult } from "./halt.ts";
import { unresolved } from "./halt.ts";
import { cordonPhase, uncordonPhase } from "./kube_phases.ts";
import { errorText } from "./mutation.ts";
import { type NodeOutcome, notCommitted, outcome, transition } from "./step_outcome.ts";
import { installPhase, pullPhase, rebootPhase } from "./talos_phases.ts";
import { runPostHooks, runPreHooks } from "../operating/hooks.ts";
import { awaitBoot, completionObservation, NODE_READERS, roundsUntilPass } from "./verify_phase.ts";

export type { NodeOutcome } from "./step_outcome.ts";

/**
 * One node of a TalosUpgrade (docs/operation-model.md#the-node-step): gate, commitment, then per
 * hop pull → install → (cordon → drain on the first hop) → reboot → boot observed, then
 * verification rounds → uncordon of an owned cordon → post-gate → completion. Every phase either
 * proceeds or halts; a halt is classified by `finish`, never retried here.
 */
export async function runNodeStep(
  deps: ExecutorDeps,
  bound: BoundPlan,
  node: PlanNode,
): Promise<NodeOutcome> {
  const pre = await preflight(deps, bound, node);
  if (pre) return pre;
  // Last, right before the commitment: the gate may have waited, and authority may have changed.
  const stop = await dispatchCheckBefore(deps, bound, node);
  if (stop) return stop;
  const committed = await commitStep(deps, bound, node, stepKey(node.name));
  if (!committed.ok) return committed.outcome;
  // Expected-noise silences live exactly as long as the step: opened now, renewed whenever the
  // step waits (its clock carries the lease), expired at its end.
  return await underNoiseLease(committed.state, (s) => committedStep(s, bound));
}

/** Everything after the commitment: hooks, phases, classification. */
async function committedStep(s: StepState, bound: BoundPlan): Promise<NodeOutcome> {
  const { deps } = s;
  let result: PhaseResult<TalosHop>;
  // Pre hooks run first, before anything touches the node: a failing one holds it uncordoned.
  const hooks = await runPreHooks(s);
  if (hooks.halt) result = { ok: false, halt: hooks.halt };
  else {
    try {
      result = await phases(s);
    } catch (e) {
      if (deps.signal?.aborted) {
        return outcome(s, "stopped", "Stopped", "the controller was asked to stop");
      }
      result = { ok: false, halt: unresolved("ExecutorError", errorText(e)) };
    }
  }
  // Post hooks run whenever their pre hook was attempted, before the step is classified.
  const post = await runPostHooks(s, hooks.attempted, result.ok);
  if (result.ok && post) result = { ok: false, halt: post };
  if (result.ok) return await complete(s, result.value);
  return await finish(s, result.halt, lastHop(bound));
}

function lastHop(bound: BoundPlan): TalosHop {
  return bound.plan.spec.hops[bound.plan.spec.hops.length - 1]!;
}

/** The fresh gate before any commitment; a refusal here creates no operation. */
async function preflight(
  deps: ExecutorDeps,
  bound: BoundPlan,
  node: PlanNode,
): Promise<NodeOutcome | undefined> {
  const first = bound.plan.spec.hops[0]!;
  const timeoutMs = deps.callTimeoutMs(
    bound.plan.spec.phases.deadlines.verify.transportSeconds * 1000,
  );
  let running: string;
  try {
    running = (await deps.talos.version(node.address, { timeoutMs })).tag;
  } catch (e) {
    return notCommitted(node.name, "NodeUnreadable", errorText(e));
  }
  if (running === lastHop(bound).to) {
    // A target reached out of band cannot complete an unattempted upgrade.
    return notCommitted(
      node.name,
      "TargetReachedOutOfBand",
      `${node.name} already runs ${running}`,
    );
  }
  if (running !== first.from) {
    return notCommitted(
      node.name,
      "NodeVersionUnexpected",
      `${node.name} runs ${running}, plan expects ${first.from}`,
    );
  }
  // The gate holds within the verify window; nothing is committed meanwhile.
  return await gateBefore(
    deps,
    bound,
    node.name,
    bound.plan.spec.phases.deadlines.verify.verificationSeconds * 1000,
  );
}

async function phases(s: StepState): Promise<PhaseResult<TalosHop>> {
  const hops = s.bound.plan.spec.hops;
  let cordon: CordonFact | undefined;
  for (const [i, hop] of hops.entries()) {
    const legacy = hop.rpcPath === "legacy";
    let r: PhaseResult<unknown> = await pullPhase(s, hop);
    if (!r.ok) return r;
    if (legacy && i === 0) {
      // The legacy API installs and reboots in one call: cordon and drain must come first.
      const c = await cordonAndDrain(s);
      if (!c.ok) return c;
      cordon = c.value;
    }
    const bootIdBefore = await readBootId(s);
    if (!bootIdBefore.ok) return bootIdBefore;
    r = await installPhase(s, hop);
    if (!r.ok) return r;
    if (!legacy && i === 0) {
      const c = await cordonAndDrain(s);
      if (!c.ok) return c;
      cordon = c.value;
    }
    if (!legacy) {
      r = await rebootPhase(s, bootIdBefore.value);
      if (!r.ok) return r;
    }
    r = await awaitBoot(s, hop, bootIdBefore.value);
    if (!r.ok) return r;
  }
  const owned = cordon?.cordonedByOperation ?? false;
  const verify = await roundsUntilPass(s, "verify", owned, NODE_READERS);
  if (verify.verdict !== "pass") return verdictHalt("Verification", verify);
  const u = await uncordonPhase(s, cordon!);
  if (!u.ok) return u;
  return { ok: true, value: lastHop(s.bound) };
}

async function cordonAndDrain(s: StepState): Promise<PhaseResult<CordonFact>> {
  const c = await cordonPhase(s);
  if (!c.ok) return c;
  const d = await drainPhase(s);
  return d.ok ? c : d;
}

async function readBootId(s: StepState): Promise<PhaseResult<string>> {
  const timeoutMs = s.deps.callTimeoutMs(
    s.bound.plan.spec.phases.deadlines.reboot.transportSeconds * 1000,
  );
  try {
    return { ok: true, value: await s.deps.talos.bootId(s.address, { timeoutMs }) };
  } catch (e) {
    return { ok: false, halt: unresolved("BootIdUnreadable", errorText(e)) };
  }
}

function verdictHalt(
  what: "Verification",
  r: { verdict: string; reason: Reason; message: string },
): PhaseResult<never> {
  const h: Halt = r.verdict === "fail"
    ? {
      classify: "failed",
      reason: `${what}HealthFailed`,
      detail: `${r.reason}: ${r.message}`,
      health: "fail",
    }
    : unresolved(`${what}HealthUnreadable`, `${r.reason}: ${r.message}`);
  return { ok: false, halt: h };
}

/** Post-gate and completion: `completed` only on a fresh, ordered observation that matches. */
async function complete(s: StepState, hop: TalosHop): Promise<NodeOutcome> {
  const verifying = await s.deps.journal.transition({
    operationId: s.operationId,
    token: s.token,
    to: "verifying",
    reason: "every attempt accepted; verifying postconditions",
    nowMs: s.deps.clock.now(),
  });
  s.deps.observer?.onOperationState?.({
    operationId: s.operationId,
    node: s.node,
    state: verifying.state,
  });
  const post = await roundsUntilPass(s, "post-gate", false);
  const obs = await completionObservation(s, hop, post.verdict);
  if (obs.reading === "established") {
    return await settle(s, "completed", "CompletionObserved", obs.summary, obs.id);
  }
  if (obs.reading === "unreadable") {
    const why = `${obs.summary}; ${post.reason}: ${post.message}`;
    await transition(s, "unresolved", "CompletionUnreadable", why);
    return outcome(s, "unresolved", "CompletionUnreadable", why);
  }
  const why = post.verdict === "pass"
    ? obs.summary
    : `${obs.summary}; ${post.reason}: ${post.message}`;
  return await settle(s, "failed", "PostconditionContradicted", why, obs.id);
}

/**
 * Asks the journal for `completed` or `failed` on a completion observation. The journal holds
 * the last word (every attempt accounted, the read ordered after the last accounting, no later
 * read differing): when it refuses, the operation is recorded `unresolved`, never left mid-way.
 */
async function settle(
  s: StepState,
  to: "completed" | "failed",
  reason: Reason,
  detail: string,
  observationId: string,
): Promise<NodeOutcome> {
  try {
    await transition(s, to, reason, detail, observationId);
    return outcome(s, to, reason, detail);
  } catch (e) {
    if (!(e instanceof CairnError) || e.reason !== "TransitionIllegal") throw e;
    const why = `${detail}; ${to} refused: ${e.message}`;
    await transition(s, "unresolved", "ClassificationRefused", why);
    return outcome(s, "unresolved", "ClassificationRefused", why);
  }
}

/**
 * Classifies a halted step: unresolved holds the scope; failed needs a completion observation
 * whose recorded reading is `contradicted` (a bound value read and different). A read that could
 * not establish anything leaves the operation unresolved, whatever the halt suspected.
 */
async function finish(s: StepState, h: Halt, hop: TalosHop): Promise<NodeOutcome> {
  if (h.classify === "stopped") return outcome(s, "stopped", h.reason, h.detail);
  const op = await s.deps.journal.getOperation(s.operationId);
  if (h.classify === "failed") {
    if (op?.state === "sending") {
      await transition(s, "verifying", h.reason, h.detail);
    }
    const obs = await completionObservation(s, hop, h.health ?? "unreadable");
    if (
      obs.reading === "contradicted" &&
      (op?.state === "sending" || op?.state === "verifying" || op?.state === "unresolved")
    ) {
      try {
        await transition(s, "failed", h.reason, `${h.detail}; ${obs.summary}`, obs.id);
        return outcome(s, "failed", h.reason, `${h.detail}; ${obs.summary}`);
      } catch (e) {
        // The journal refused `failed` (an attempt is unaccounted or the evidence does not allow it).
        h = unresolved(h.reason, `${h.detail}; failed refused: ${errorText(e)}`);
      }
    }
  }
  const now = await s.deps.journal.getOperation(s.operationId);
  if (now && isInFlight(now.state)) {
    await transition(s, "unresolved", h.reason, h.detail);
  }
  s.deps.log.warn("operation unresolved", {
    operationId: s.operationId,
    node: s.node,
    reason: h.reason,
  });
  return outcome(s, "unresolved", h.reason, h.detail);
}
