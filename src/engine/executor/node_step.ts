import { CairnError } from "../../domain/errors.ts";
import type { Reason } from "../../domain/reasons.ts";
import { isInFlight, isTerminal } from "../../domain/operation.ts";
import type { PlanNode, TalosHop } from "../../domain/plan/schema.ts";
import type { CordonFact } from "../cordon_ownership.ts";
import type { BoundPlan, ExecutorDeps, RoundVerdict, StepState } from "./deps.ts";
import { haltReason, unestablishedReason, verdictForTarget } from "./health_elsewhere.ts";
import { stepKey } from "./digests.ts";
import { checkThenCommit } from "./commit_step.ts";
import { drainPhase } from "./drain_phase.ts";
import { gateBefore } from "./gate_wait.ts";
import { underNoiseLease } from "./step_lease.ts";
import type { Halt, PhaseResult } from "./halt.ts";
import { unresolved } from "./halt.ts";
import { cordonPhase, uncordonPhase } from "./kube_phases.ts";
import { errorText } from "./mutation.ts";
import {
  type NodeOutcome,
  notCommitted,
  outcome,
  settledAtResponse,
  stoppedMidStep,
  transition,
} from "./step_outcome.ts";
import { installPhase, pullPhase, rebootPhase } from "./talos_phases.ts";
import { runPostHooks, runPreHooks } from "../operating/hooks.ts";
import { awaitBoot, completionObservation, NODE_READERS, roundsUntilPass } from "./verify_phase.ts";
import type { OperationRecord } from "../../ports/journal.ts";
import { parseIdentityRecord } from "../../domain/machine_identity.ts";
import { resumeTakenOver } from "../recovery/resume.ts";
import type { ResumeCursor } from "../recovery/resume_rules.ts";

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
  // Last, right before the commitment (beside the identity observation): the gate may have
  // waited, and authority may have changed.
  const committed = await checkThenCommit(deps, bound, node, stepKey(node.name));
  if (!committed.ok) return committed.outcome;
  // Expected-noise silences live exactly as long as the step: opened now, renewed whenever the
  // step waits (its clock carries the lease), expired at its end.
  return await underNoiseLease(committed.state, (s) => committedStep(s, bound));
}

/**
 * Resume is not rerun (docs/recovery.md#resume-after-a-takeover): an operation this controller took
 * over in flight is continued from where the journal says it stood, once every earlier request
 * the journal has no answer for is classified from a fresh reading. Phases already done are never
 * sent again; what a reading cannot decide leaves the operation `unresolved` with nothing sent.
 */
export async function resumeNodeStep(
  deps: ExecutorDeps,
  bound: BoundPlan,
  node: PlanNode,
  op: OperationRecord,
): Promise<NodeOutcome> {
  const committed = await committedIdentity(deps, op);
  const s: StepState = {
    deps,
    bound,
    node: node.name,
    address: node.address,
    ...(committed ? { committed } : {}),
    step: op.step,
    operationId: op.id,
    token: { owner: op.owner, gen: op.ownerGen, epoch: op.ownerEpoch },
  };
  const resumed = await resumeTakenOver(s);
  if (!resumed.ok) {
    deps.log.warn("operation not resumed", {
      operationId: op.id,
      node: node.name,
      reason: resumed.reason,
    });
    return outcome(s, "unresolved", resumed.reason, resumed.detail);
  }
  deps.log.info("operation resumed", {
    operationId: op.id,
    node: node.name,
    verdict: resumed.readings.map((r) => r.outcome).join(",") || "no request in flight",
  });
  return await underNoiseLease(s, (leased) => committedStep(leased, bound, resumed.cursor));
}

/** The machine identity the commitment bound, from its evidence observation. */
async function committedIdentity(deps: ExecutorDeps, op: OperationRecord) {
  const detail = await deps.journal.showOperation(op.id);
  const commitment = detail?.events.find((e) => e.kind === "commitment");
  const evidenceId = commitment
    ? (JSON.parse(commitment.body) as { evidence?: string }).evidence
    : undefined;
  const obs = (await deps.journal.machineObservations(op.machine)).find((o) => o.id === evidenceId);
  // Without it every attempt is refused (MachineIdentityUnreadable): nothing is sent.
  return obs?.machineIdentity ? parseIdentityRecord(obs.machineIdentity) : undefined;
}

/** Everything after the commitment: hooks, phases, classification. */
async function committedStep(
  s: StepState,
  bound: BoundPlan,
  cursor?: ResumeCursor,
): Promise<NodeOutcome> {
  const { deps } = s;
  let result: PhaseResult<TalosHop>;
  // Pre hooks run first, before anything touches the node: a failing one holds it uncordoned.
  // (A resumed step has none: a plan with hooks is not resumed.)
  const hooks = await runPreHooks(s);
  if (hooks.halt) result = { ok: false, halt: hooks.halt };
  else {
    try {
      result = await phases(s, cursor);
    } catch (e) {
      if (deps.signal?.aborted) {
        return await stoppedMidStep(s, deps.signal.reason);
      }
      result = { ok: false, halt: unresolved("ExecutorError", errorText(e)) };
    }
  }
  if (!result.ok) {
    // The journal may have settled the operation as it recorded a response (a pull refused by
    // validation before anything happened is `rejected`): its state is the outcome, and the post
    // hooks go out through the owed-hook claim (nothing more is admitted on a settled operation).
    const now = await deps.journal.getOperation(s.operationId);
    if (now && isTerminal(now.state)) {
      return await settledAtResponse(s, now, result.halt.reason, result.halt.detail);
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
  const read = await runningVersion(deps, node, bound.plan.spec.phases.deadlines.verify);
  if (!read.ok) return notCommitted(node.name, "NodeUnreadable", read.error);
  const running = read.tag;
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

/**
 * The node's running Talos version before anything is committed. A read that fails (apid
 * unavailable for a moment, an answer lost) is taken again every poll while the verify transport
 * window lasts: one transient failure must not stop the rollout. Still unreadable at the end of the
 * window, the node is not committed (`NodeUnreadable`); nothing is sent either way.
 */
async function runningVersion(
  deps: ExecutorDeps,
  node: PlanNode,
  window: { readonly transportSeconds: number },
): Promise<{ ok: true; tag: string } | { ok: false; error: string }> {
  const until = deps.clock.now() + window.transportSeconds * 1000;
  for (;;) {
    try {
      // Each read bounded by what is left of the window, never the whole window again.
      const v = await deps.talos.version(node.address, {
        timeoutMs: deps.callTimeoutMs(Math.max(1, until - deps.clock.now())),
      });
      return { ok: true, tag: v.tag };
    } catch (e) {
      if (deps.clock.now() + deps.pollIntervalMs > until || deps.signal?.aborted) {
        return { ok: false, error: errorText(e) };
      }
    }
    await deps.clock.sleep(deps.pollIntervalMs, deps.signal);
  }
}

/**
 * The step's phases in order. On a resume, `cursor` says which are done (accepted, or read in
 * effect after a takeover): each is skipped, never sent again, and the rest run as usual.
 */
async function phases(s: StepState, cursor?: ResumeCursor): Promise<PhaseResult<TalosHop>> {
  const hops = s.bound.plan.spec.hops;
  const done = (phase: "pull" | "install" | "drain" | "reboot" | "boot-observed") =>
    cursor?.take(phase) ?? false;
  let cordon: CordonFact | undefined;
  for (const [i, hop] of hops.entries()) {
    const legacy = hop.rpcPath === "legacy";
    let r: PhaseResult<unknown> = done("pull") ? proceedUnit : await pullPhase(s, hop);
    if (!r.ok) return r;
    if (legacy && i === 0) {
      // The legacy API installs and reboots in one call: cordon and drain must come first.
      const c = await cordonAndDrain(s, cursor);
      if (!c.ok) return c;
      cordon = c.value;
    }
    const installed = done("install");
    const rebooted = !legacy && done("reboot");
    const booted = done("boot-observed");
    if (booted) continue;
    const bootIdBefore = await bootIdFor(s, cursor, { i, legacy, installed, rebooted });
    if (!bootIdBefore.ok) return bootIdBefore;
    if (!installed) {
      r = await installPhase(s, hop);
      if (!r.ok) return r;
    }
    if (!legacy && i === 0) {
      const c = await cordonAndDrain(s, cursor);
      if (!c.ok) return c;
      cordon = c.value;
    }
    if (!legacy && !rebooted) {
      r = await rebootPhase(s, bootIdBefore.value);
      if (!r.ok) return r;
    }
    r = await awaitBoot(s, hop, bootIdBefore.value);
    if (!r.ok) return r;
  }
  cordon ??= cursor?.cordon;
  const owned = cordon?.cordonedByOperation ?? false;
  const verify = await roundsUntilPass(s, "verify", owned, NODE_READERS);
  if (verify.verdict !== "pass") return verdictHalt("Verification", verify);
  if (cursor?.uncordonDecided) return { ok: true, value: lastHop(s.bound) };
  if (!cordon) {
    return {
      ok: false,
      halt: unresolved("ResumeUndecided", "the cordon's provenance is not recorded"),
    };
  }
  const u = await uncordonPhase(s, cordon);
  if (!u.ok) return u;
  return { ok: true, value: lastHop(s.bound) };
}

const proceedUnit: PhaseResult<unknown> = { ok: true, value: undefined };

/**
 * The boot id the hop's boot is judged against: read now while no reboot was sent (a resumed
 * step's install does not reboot on the lifecycle API), else the one the reboot's intent recorded.
 * A legacy install reboots by itself and records none, so its resume is left for recovery.
 */
async function bootIdFor(
  s: StepState,
  cursor: ResumeCursor | undefined,
  h: { i: number; legacy: boolean; installed: boolean; rebooted: boolean },
): Promise<PhaseResult<string>> {
  if (h.rebooted) {
    const id = cursor?.rebootBootIds[h.i];
    return id
      ? { ok: true, value: id }
      : { ok: false, halt: unresolved("ResumeUndecided", "the reboot's boot id is not recorded") };
  }
  if (h.legacy && h.installed) {
    return {
      ok: false,
      halt: unresolved(
        "ResumeUndecided",
        "a legacy install reboots by itself; its boot is unknown",
      ),
    };
  }
  return await readBootId(s);
}

async function cordonAndDrain(
  s: StepState,
  cursor?: ResumeCursor,
): Promise<PhaseResult<CordonFact>> {
  let c: PhaseResult<CordonFact>;
  if (cursor?.take("cordon")) {
    // Done before the takeover: its provenance as recorded, or (an accepted patch, or one read in
    // effect) the operation's own cordon.
    const fact: CordonFact = cursor.cordon ?? {
      priorUnschedulable: false,
      cordonedByOperation: true,
      resourceVersionAfterCordon: undefined,
    };
    if (!cursor.cordon) await recordCordonFact(s, fact);
    c = { ok: true, value: fact };
  } else c = await cordonPhase(s);
  if (!c.ok) return c;
  if (cursor?.take("drain")) return c;
  const d = await drainPhase(s);
  return d.ok ? c : d;
}

async function recordCordonFact(s: StepState, fact: CordonFact): Promise<void> {
  await s.deps.journal.recordPhase({
    operationId: s.operationId,
    token: s.token,
    phase: "cordon",
    kind: "fact",
    detail: { ...fact, resumed: true },
    nowMs: s.deps.clock.now(),
  });
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
  r: RoundVerdict,
): PhaseResult<never> {
  const reason = haltReason(r, `${what}HealthFailed`, `${what}HealthUnreadable`);
  const h: Halt = verdictForTarget(r) === "fail"
    ? { classify: "failed", reason, detail: `${r.reason}: ${r.message}`, health: "fail" }
    : unresolved(reason, `${r.reason}: ${r.message}`);
  return { ok: false, halt: h };
}

/** Post-gate and completion: `completed` only on a fresh, ordered observation that matches. */
async function complete(s: StepState, hop: TalosHop): Promise<NodeOutcome> {
  // A resumed step whose last mutation came before the takeover is still `unresolved`: ER moves
  // it to `completed` directly on a completion observation (there is no `unresolved → verifying`).
  const current = await s.deps.journal.getOperation(s.operationId);
  if (current?.state !== "unresolved") {
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
  }
  const post = await roundsUntilPass(s, "post-gate", false);
  const obs = await completionObservation(s, hop, verdictForTarget(post));
  if (obs.reading === "established") {
    return await settle(s, "completed", "CompletionObserved", obs.summary, obs.id);
  }
  if (obs.reading === "unreadable") {
    const why = `${obs.summary}; ${post.reason}: ${post.message}`;
    const reason = unestablishedReason(obs.own, post);
    await holdUnresolved(s, reason, why);
    return outcome(s, "unresolved", reason, why);
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
    await holdUnresolved(s, "ClassificationRefused", why);
    return outcome(s, "unresolved", "ClassificationRefused", why);
  }
}

/**
 * Records `unresolved` unless the operation already is: a resumed step whose last mutation came
 * before the takeover stays `unresolved` until its completion observation (ER has no
 * `unresolved → unresolved`).
 */
async function holdUnresolved(s: StepState, reason: Reason, why: string): Promise<void> {
  const now = await s.deps.journal.getOperation(s.operationId);
  if (now && isInFlight(now.state)) await transition(s, "unresolved", reason, why);
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
