/**
 * The commitment preamble every executing kind shares (docs/operation-model.md#the-node-step):
 * the plan's dispatch check again right before the commitment and the machine observed on both
 * sides at the plan's address (side by side: both only read), then the journal's commitment
 * transaction, which waits for both. Whatever stops here creates no operation and sends nothing;
 * a kind's own checks (a KubernetesUpgrade's rows 23–25) run between the dispatch check and the
 * identity observation.
 */
import type { Plan } from "../../domain/plan/schema.ts";
import type { BoundPlan, ExecutorDeps, StepState } from "./deps.ts";
import { checkAndRecord, dispatchStop } from "./dispatch_gate.ts";
import { type Evidence, observeEvidence } from "./observe.ts";
import { type NodeOutcome, notCommitted } from "./step_outcome.ts";

/** The node a commitment reaches, as the plan declares it. */
export interface StepTarget {
  readonly name: string;
  readonly address: string;
}

/**
 * The per-node dispatch check, recorded: undefined when it passed, else the not-committed outcome
 * (`refused` on contrary evidence, held when evidence could not be read).
 */
export async function dispatchCheckBefore(
  deps: ExecutorDeps,
  bound: BoundPlan<Plan>,
  node: StepTarget,
): Promise<NodeOutcome | undefined> {
  // Last before the commitment: a gate may have waited, and authority may have changed.
  const auth = await checkAndRecord(deps.journal, deps.owner, bound.digest, deps.authority, {
    name: node.name,
    perNode: true,
  });
  const stop = dispatchStop(auth);
  if (!stop) return undefined;
  deps.log.warn("dispatch check did not pass", { node: node.name, reason: stop.reason });
  return notCommitted(node.name, stop.reason, stop.detail, stop.verdict === "refused");
}

/**
 * The per-node dispatch check and the identity observation at once, then the commitment of `step`
 * once both passed (issue 18: each read takes tens of ms on the way to the first intent, and
 * neither depends on the other). A check that did not pass stops the step whatever the
 * observation found (it is only evidence, and no operation binds it); the observation stops it
 * next. Neither sends anything to the node.
 */
export async function checkThenCommit<P extends Plan>(
  deps: ExecutorDeps,
  bound: BoundPlan<P>,
  node: StepTarget,
  step: string,
): Promise<{ ok: true; state: StepState<P> } | { ok: false; outcome: NodeOutcome }> {
  const [check, evidence] = await Promise.allSettled([
    dispatchCheckBefore(deps, bound, node),
    observeEvidence({ deps, bound, node: node.name, address: node.address }),
  ]);
  if (check.status === "rejected") throw check.reason;
  if (check.value) return { ok: false, outcome: check.value };
  if (evidence.status === "rejected") throw evidence.reason;
  return await commitObserved(deps, bound, node, step, evidence.value);
}

/**
 * Observes the machine's identity and takes the commitment of `step`. The commitment binds the
 * machine observed on both sides at the plan's address; a machine that cannot be identified, or
 * that the two sides disagree about, gets no operation (another machine refuses, an unreadable
 * identity holds).
 */
export async function commitStep<P extends Plan>(
  deps: ExecutorDeps,
  bound: BoundPlan<P>,
  node: StepTarget,
  step: string,
): Promise<{ ok: true; state: StepState<P> } | { ok: false; outcome: NodeOutcome }> {
  const evidence = await observeEvidence({ deps, bound, node: node.name, address: node.address });
  return await commitObserved(deps, bound, node, step, evidence);
}

/** The commitment of `step` on the machine `evidence` identified, if it did. */
async function commitObserved<P extends Plan>(
  deps: ExecutorDeps,
  bound: BoundPlan<P>,
  node: StepTarget,
  step: string,
  evidence: Evidence,
): Promise<{ ok: true; state: StepState<P> } | { ok: false; outcome: NodeOutcome }> {
  if (!evidence.verdict.ok) {
    return {
      ok: false,
      outcome: notCommitted(
        node.name,
        evidence.verdict.reason,
        evidence.verdict.detail,
        evidence.verdict.reason === "MachineIdentityMismatch",
      ),
    };
  }
  // The epoch this controller started in, never a fresh read: after a recovery entry or a journal
  // restore the journal refuses it (epoch-superseded) and nothing is sent.
  const committed = await deps.journal.commit({
    planDigest: bound.digest,
    step,
    evidenceId: evidence.id,
    owner: deps.owner,
    epoch: deps.epoch,
    nowMs: deps.clock.now(),
  });
  if (!committed.ok) {
    // A superseded epoch is its own reason: this process outlived a recovery entry or a journal
    // restore and must restart to act again (a new process reads the new epoch).
    const superseded = committed.cause === "epoch-superseded";
    return {
      ok: false,
      outcome: notCommitted(
        node.name,
        superseded ? "EpochSuperseded" : "CommitmentRefused",
        superseded
          ? `${committed.detail}: this controller started in epoch ${deps.epoch}; restart it`
          : `${committed.cause}: ${committed.detail}`,
      ),
    };
  }
  const op = committed.operation;
  deps.observer?.onOperationState?.({ operationId: op.id, node: node.name, state: op.state });
  deps.log.info("operation committed", {
    operationId: op.id,
    node: node.name,
    planDigest: bound.digest,
  });
  return {
    ok: true,
    state: {
      deps,
      bound,
      node: node.name,
      address: node.address,
      committed: evidence.verdict.identity,
      step: op.step,
      operationId: op.id,
      token: { owner: op.owner, gen: op.ownerGen, epoch: op.ownerEpoch },
    },
  };
}
