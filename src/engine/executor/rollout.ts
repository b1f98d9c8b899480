import { isTerminal, type RolloutEnd } from "../../domain/operation.ts";
import type { BoundPlan, ExecutorDeps } from "./deps.ts";
import { controllerActor } from "./observe.ts";
import { stepKey } from "./digests.ts";
import { type NodeOutcome, runNodeStep } from "./node_step.ts";
import { waitForCommitment } from "../operating/hold.ts";

/** How a rollout ended: every node completed, or the first node that did not. */
export interface RolloutOutcome {
  /** `refused`: a dispatch check found contrary evidence before a commitment; nothing was sent. */
  readonly state: RolloutEnd;
  readonly nodes: readonly NodeOutcome[];
}

/**
 * Runs a TalosUpgrade plan node by node in plan order (workers first, control planes last, one
 * at a time). A node whose operation already completed is skipped; any node that does not
 * complete stops the rollout, because progression needs every mutation accounted and the
 * post-gate passing. Stops cleanly between steps when the signal is aborted.
 */
export async function runRollout(deps: ExecutorDeps, bound: BoundPlan): Promise<RolloutOutcome> {
  await takeOverStale(deps, bound);
  const ops = (await deps.journal.listOperations()).filter((o) => o.planDigest === bound.digest);
  const nodes: NodeOutcome[] = [];
  for (const [index, node] of bound.plan.spec.nodes.entries()) {
    if (deps.signal?.aborted) return { state: "stopped", nodes };
    const existing = ops.find((o) => o.step === stepKey(node.name));
    if (existing) {
      const o: NodeOutcome = {
        node: node.name,
        operationId: existing.id,
        state: existing.state,
        reason: existing.state === "completed" ? "AlreadyCompleted" : "OperationExists",
        detail: `operation ${existing.id} is ${existing.state}`,
      };
      nodes.push(o);
      if (existing.state === "completed") continue;
      return { state: "halted", nodes };
    }
    // A closed window, a freeze or a breakpoint holds the commitment; nothing is sent meanwhile.
    if (await waitForCommitment(deps, bound, node, index) === "stopped") {
      return { state: "stopped", nodes };
    }
    // The node hosts this replica: hand over before its step (no commitment, no cordon yet).
    const self = await deps.selfHosting?.beforeNode(node.name);
    if (self && self.kind !== "proceed") {
      nodes.push({
        node: node.name,
        operationId: undefined,
        state: self.kind === "handed-over" ? "stopped" : "not-committed",
        reason: self.reason,
        detail: self.detail,
      });
      return { state: self.kind === "handed-over" ? "stopped" : "halted", nodes };
    }
    const o = await runNodeStep(deps, bound, node);
    nodes.push(o);
    deps.log.info("node step finished", { node: node.name, reason: o.reason, verdict: o.state });
    if (o.state === "stopped") return { state: "stopped", nodes };
    if (o.refused) return { state: "refused", nodes };
    if (o.state !== "completed") return { state: "halted", nodes };
  }
  return { state: "completed", nodes };
}

/**
 * At start, every live operation of the plan owned by another controller instance (a crashed or
 * replaced one) is taken over: its generation moves on, in-flight work becomes `unresolved`, and
 * the old owner's token can no longer pass an attempt transaction. Resume is not rerun: the
 * taken-over operation is then left for recovery, never re-executed from the top.
 */
export async function takeOverStale(
  deps: ExecutorDeps,
  bound: { readonly digest: string },
): Promise<void> {
  const { epoch } = await deps.journal.installation();
  const live = (await deps.journal.listOperations()).filter((o) =>
    o.planDigest === bound.digest && !isTerminal(o.state) && o.owner !== deps.owner
  );
  for (const op of live) {
    const r = await deps.journal.takeOver({
      operationId: op.id,
      newOwner: deps.owner,
      seenGen: op.ownerGen,
      epoch,
      actor: controllerActor(deps.owner),
      nowMs: deps.clock.now(),
    });
    if (r.ok) {
      deps.observer?.onOperationState?.({
        operationId: op.id,
        node: op.machine,
        state: r.operation.state,
      });
    }
    deps.log.warn(r.ok ? "operation taken over" : "takeover lost to another controller", {
      operationId: op.id,
      node: op.machine,
      ...(r.ok ? { state: r.operation.state } : {}),
    });
  }
}
