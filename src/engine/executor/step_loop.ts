/**
 * The step loop every executing kind shares: resume is not rerun. At start every live operation of
 * the plan owned by another controller instance is taken over (its in-flight work becomes
 * `unresolved`); then the plan's steps run in order, one at a time, each new commitment waiting
 * first for the operating hold (a freeze, a breakpoint, a maintenance window without room for the
 * step: `engine/operating/hold.ts`). A step whose operation already
 * completed is skipped; one this controller took over in flight is resumed when the kind can
 * resume (`resume`: docs/recovery.md#resume-after-a-takeover); a step with any other operation
 * holds the rollout (it is recovery's, never re-executed from the top); the first step that does not complete stops the rollout, because
 * progression needs every mutation accounted and the post-gate passing. A stop request ends the
 * loop cleanly between steps.
 */
import { CairnError } from "../../domain/errors.ts";
import { isTerminal, type RolloutEnd } from "../../domain/operation.ts";
import type { OperatedPlan } from "../../domain/plan/schema.ts";
import { waitForCommitment } from "../operating/hold.ts";
import type { BoundPlan, ExecutorDeps } from "./deps.ts";
import type { OperationRecord } from "../../ports/journal.ts";
import { controllerActor } from "./observe.ts";
import type { StepTarget } from "./commit_step.ts";
import type { NodeOutcome } from "./step_outcome.ts";
import { releaseOrphanSilences } from "../operating/silences.ts";
import { sendOwedHooks } from "../operating/owed_hooks.ts";

/** One step of a plan: the journal's step key and the node its commitment reaches. */
export interface PlannedStep {
  readonly key: string;
  readonly node: StepTarget;
}

/** How a rollout ended: every step completed, or the first step that did not. */
export interface StepsOutcome<O extends NodeOutcome = NodeOutcome> {
  /** `refused`: a dispatch check found contrary evidence before a commitment; nothing was sent. */
  readonly state: RolloutEnd;
  readonly nodes: readonly O[];
}

/** What a kind gives the loop. */
export interface StepLoop<S extends PlannedStep, O extends NodeOutcome> {
  readonly steps: readonly S[];
  /** Names a step in the detail of an operation found already there (the component). */
  readonly label?: (step: S) => string;
  /** Runs one step from its gate to its classification. */
  readonly run: (step: S, index: number) => Promise<O>;
  /**
   * Continues a step whose operation this controller owns `unresolved` (taken over in flight, now
   * or earlier); it decides from the journal whether it may, and leaves it `unresolved` if not.
   * A kind without it holds the rollout at such a step.
   */
  readonly resume?: (step: S, op: OperationRecord, index: number) => Promise<O>;
}

/** Runs the steps; see the module comment. */
export async function runSteps<S extends PlannedStep, O extends NodeOutcome>(
  deps: ExecutorDeps,
  bound: BoundPlan<OperatedPlan>,
  loop: StepLoop<S, O>,
): Promise<StepsOutcome<O>> {
  await takeOverStale(deps, bound);
  // No step runs yet in this process: a silence an earlier process left open is expired by its
  // journaled id (never created again; a resumed step opens its own); the held node's alerts page.
  await releaseOrphanSilences(deps, bound.digest, deps.operating?.alertmanager);
  const ops = (await deps.journal.listOperations()).filter((o) => o.planDigest === bound.digest);
  const nodes: O[] = [];
  for (const [index, step] of loop.steps.entries()) {
    const node = step.node.name;
    if (deps.signal?.aborted) return { state: "stopped", nodes };
    const existing = ops.find((o) => o.step === step.key);
    const resumable = loop.resume && existing?.state === "unresolved" &&
        existing.owner === deps.owner
      ? existing
      : undefined;
    if (existing && !resumable) {
      const label = loop.label ? ` (${loop.label(step)})` : "";
      const o = asOutcome<O>({
        node,
        operationId: existing.id,
        state: existing.state,
        reason: existing.state === "completed" ? "AlreadyCompleted" : "OperationExists",
        detail: `operation ${existing.id}${label} is ${existing.state}`,
      });
      // A settled step that still owes a post hook sends it now, before anything else on its
      // node (the journal refuses the node's next commitment until it has gone).
      const owed = await sendOwedHooks(deps, existing);
      if (!owed.ok) {
        nodes.push(asOutcome<O>({ ...o, reason: owed.reason, detail: owed.detail }));
        return { state: "halted", nodes };
      }
      nodes.push(o);
      if (existing.state === "completed") continue;
      return { state: "halted", nodes };
    }
    // A closed window, a freeze or a breakpoint holds the commitment; nothing is sent meanwhile.
    const previous = index === 0 ? undefined : loop.steps[index - 1]!.node.name;
    // A resumed step is committed already: what it sends is the attempt transaction's to admit.
    if (!resumable) {
      if (await waitForCommitment(deps, bound, step.node, previous) === "stopped") {
        return { state: "stopped", nodes };
      }
    }
    // The node hosts this replica: hand over before its step (no commitment, no cordon yet).
    const self = await deps.selfHosting?.beforeNode(node);
    if (self && self.kind !== "proceed") {
      nodes.push(asOutcome<O>({
        node,
        operationId: resumable?.id,
        state: self.kind === "handed-over" ? "stopped" : resumable ? "unresolved" : "not-committed",
        reason: self.reason,
        detail: self.detail,
      }));
      return { state: self.kind === "handed-over" ? "stopped" : "halted", nodes };
    }
    const o = resumable && loop.resume
      ? await loop.resume(step, resumable, index)
      : await loop.run(step, index);
    nodes.push(o);
    deps.log.info("node step finished", { node, reason: o.reason, verdict: o.state });
    if (o.state === "stopped") return { state: "stopped", nodes };
    if (o.refused) return { state: "refused", nodes };
    if (o.state !== "completed") return { state: "halted", nodes };
  }
  return { state: "completed", nodes };
}

/**
 * A kind's outcome only adds optional fields to `NodeOutcome` (a ConfigApply's activation
 * readings), so an outcome the loop itself decides is one of the kind's, with none of them.
 */
function asOutcome<O extends NodeOutcome>(o: NodeOutcome): O {
  return o as O;
}

/**
 * At start, every live operation of the plan owned by another controller instance (a crashed or
 * replaced one) is taken over: its generation moves on, in-flight work becomes `unresolved`, and
 * the old owner's token can no longer pass an attempt transaction. Resume is not rerun: the
 * taken-over operation is then continued from where the journal says it stood (a kind's `resume`),
 * or left for recovery; it is never re-executed from the top.
 */
export async function takeOverStale(
  deps: ExecutorDeps,
  bound: { readonly digest: string },
): Promise<void> {
  const live = (await deps.journal.listOperations()).filter((o) =>
    o.planDigest === bound.digest && !isTerminal(o.state) && o.owner !== deps.owner
  );
  for (const op of live) {
    const r = await deps.journal.takeOver({
      operationId: op.id,
      newOwner: deps.owner,
      seenGen: op.ownerGen,
      // The epoch this controller started in: a superseded process must not take anything over.
      epoch: deps.epoch,
      actor: controllerActor(deps.owner),
      nowMs: deps.clock.now(),
    });
    if (r.ok) {
      deps.observer?.onOperationState?.({
        operationId: op.id,
        node: op.machine,
        state: r.operation.state,
      });
    } else {
      // The fenced UPDATE matched nothing: another controller won it, or this process's epoch is
      // no longer current. The second is no lost race: the process outlived a recovery entry or
      // a journal restore and must stop acting and restart (docs/operation-model.md#fencing).
      await refuseSupersededEpoch(deps);
    }
    deps.log.warn(r.ok ? "operation taken over" : "takeover lost to another controller", {
      operationId: op.id,
      node: op.machine,
      ...(r.ok ? { state: r.operation.state } : {}),
    });
  }
}

/**
 * Throws `EpochSuperseded`, naming both epochs, when the journal's current epoch is not the one
 * this controller started in (`deps.epoch`); `cairn recover`, which carries none, acts in the
 * current epoch by design.
 */
export async function refuseSupersededEpoch(deps: ExecutorDeps): Promise<void> {
  if (deps.epoch === undefined) return;
  const { epoch } = await deps.journal.installation();
  if (epoch === deps.epoch) return;
  throw new CairnError({
    reason: "EpochSuperseded",
    message: `this controller started in epoch ${deps.epoch}; the journal is now in epoch ` +
      `${epoch} (a recovery entry or a journal restore): it must not act, restart it`,
  });
}
