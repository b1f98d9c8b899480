/**
 * `cairn recover OP --uncordon`: lifts an operation-owned cordon the plan authorises recovery to
 * lift, through the one mutation path (engine/executor/mutation.ts) with a recovery-admin's own
 * admission: phase intent, a fresh read of the cordon's ownership evidence, a recovery attempt the
 * journal must commit (actor, decision, evidence, epoch and takeover fence), then the write, whose
 * response is recorded against that attempt whatever it is. Not a command.
 */
import { CairnError } from "../../domain/errors.ts";
import type { Reason } from "../../domain/reasons.ts";
import type { Actor, Journal } from "../../ports/journal.ts";
import type { CordonOutcome } from "../../ports/kube.ts";
import { decideUncordon } from "../cordon_ownership.ts";
import { requestDigest } from "../executor/digests.ts";
import { NODES } from "../executor/kube_phases.ts";
import { type Admission, mutateThrough, type Sent } from "../executor/mutation.ts";
import { cordonFactOf, uncordonRefusal } from "./recovery.ts";
import { gatherEvidence, type RecoveryCluster, takeOverFor } from "./recover_actions.ts";
import type { DecisionResult } from "./recover_decisions.ts";

/** The plan's recovery action this mutation executes. */
const DECISION = "uncordonOwnedCordon";

function refuse(reason: Reason, message: string): never {
  throw new CairnError({ reason, message });
}

/** The cordon-ownership evidence an uncordon is decided and sent on. */
interface CordonEvidence {
  readonly uid: string | undefined;
  readonly resourceVersion: string;
}

/**
 * Lifts an operation-owned cordon the plan authorises recovery to lift, only when a fresh read
 * shows its ownership evidence unchanged; the write carries the read's resourceVersion.
 */
export async function uncordonOwned(
  journal: Journal,
  c: RecoveryCluster,
  o: { readonly operationId: string; readonly actor: string },
): Promise<DecisionResult> {
  const e = await gatherEvidence(journal, {
    operationId: o.operationId,
    settleFloorMs: 30_000,
    nowMs: c.clock.now(),
  });
  const why = uncordonRefusal(e.facts);
  if (why) refuse("RecoveryUncordonRefused", `uncordon of ${e.facts.operation.machine}: ${why}`);
  const machine = e.facts.operation.machine;
  const fact = cordonFactOf(e.facts.phases)!;
  // Decided before the takeover, so a cordon that is not the operation's own is left untouched
  // and the operation keeps its owner; the mutation path reads it again after the intent.
  const first = decideUncordon(fact, await readNode(c, machine));
  if (first.kind === "leave") {
    refuse("RecoveryUncordonRefused", `uncordon of ${machine}: ${first.reason}: ${first.detail}`);
  }
  const actor: Actor = { identity: o.actor, role: "recovery-admin" };
  const { token, state } = await takeOverFor(journal, e.facts.operation, actor, c.clock.now());
  const authorised = { authorisedBy: o.actor, role: actor.role, recovery: DECISION };
  const phase = (kind: "intent" | "fact", detail: Record<string, unknown>) =>
    journal.recordPhase({
      operationId: o.operationId,
      token,
      phase: "uncordon",
      kind,
      detail: { ...detail, ...authorised },
      nowMs: c.clock.now(),
    });
  const request = {
    verb: "patch",
    node: machine,
    unschedulable: null,
    resourceVersion: first.resourceVersion,
  };
  const admission: Admission<CordonEvidence, { id: string }> = {
    recordIntent: () => phase("intent", request),
    freshEvidence: async () => {
      const node = await readNode(c, machine);
      const d = decideUncordon(fact, node);
      if (d.kind === "leave") {
        return { ok: false, reason: "RecoveryUncordonRefused", detail: `${d.reason}: ${d.detail}` };
      }
      if (d.resourceVersion !== first.resourceVersion) {
        // The intent names the node as first read; a write on a newer read is another decision.
        return {
          ok: false,
          reason: "RecoveryUncordonRefused",
          detail: `the node changed since the intent (rv ${first.resourceVersion} → ` +
            `${d.resourceVersion})`,
        };
      }
      return {
        ok: true,
        evidence: { uid: node.metadata?.uid, resourceVersion: d.resourceVersion },
      };
    },
    admit: async (ev) => {
      const begun = await journal.beginRecoveryAttempt({
        operationId: o.operationId,
        token,
        actor,
        decision: DECISION,
        phase: "uncordon",
        requestDigest: await requestDigest(request),
        route: `kube:patch nodes/${machine}`,
        evidence: { node: machine, ...ev, cordonOwnedByOperation: true },
        nowMs: c.clock.now(),
      });
      return begun.ok
        ? { ok: true, attempt: begun.attempt, id: begun.attempt.id }
        : { ok: false, reason: "AttemptRefused", detail: begun.detail, refusal: begun };
    },
    recordResponse: async (attempt, sent) => {
      await journal.recordRecoveryResponse({
        attemptId: attempt.id,
        token,
        responseClass: sent.responseClass,
        detail: sent.detail,
        nowMs: c.clock.now(),
      });
      const out = sent.value as CordonOutcome | undefined;
      await phase(
        "fact",
        out?.kind === "applied"
          ? { decision: "uncordoned", resourceVersion: out.resourceVersion, attempt: attempt.id }
          : {
            // Without the server's answer the write may have landed: unresolved, not refused.
            decision: out ? "not-applied" : "unresolved",
            outcome: out?.kind ?? "send-failed",
            message: sent.detail,
            attempt: attempt.id,
          },
      );
    },
  };
  const r = await mutateThrough(admission, (ev) => sendUncordon(c, machine, ev.resourceVersion));
  if (r.kind === "refused") {
    refuse("RecoveryUncordonRefused", `uncordon of ${machine}: ${r.reason}: ${r.detail}`);
  }
  const out = r.sent.value;
  if (out?.kind !== "applied") {
    refuse("RecoveryUncordonRefused", `uncordon of ${machine} not applied: ${r.sent.detail}`);
  }
  return {
    decision: "uncordon",
    operation: o.operationId,
    state,
    message: `${machine} uncordoned (rv ${first.resourceVersion} → ${out.resourceVersion})`,
  };
}

async function readNode(c: RecoveryCluster, machine: string) {
  return await c.kube.getObject(NODES, machine) ??
    refuse("RecoveryUncordonRefused", `node ${machine} is not in the cluster`);
}

/** The write, with the response class its outcome proves. */
async function sendUncordon(
  c: RecoveryCluster,
  machine: string,
  resourceVersion: string,
): Promise<Sent<CordonOutcome>> {
  const out = await c.kube.uncordon(machine, resourceVersion);
  // A 409 or 404 is the API server's own answer: it accounts for the write and proves no change.
  return out.kind === "applied"
    ? { responseClass: "accepted", detail: `applied rv ${out.resourceVersion}`, value: out }
    : { responseClass: "target-error", detail: `${out.kind}: ${out.message}`, value: out };
}
