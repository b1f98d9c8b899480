import type { Phase, ResponseClass } from "../../domain/operation.ts";
import type { PhaseDeadline } from "../../domain/plan/schema.ts";
import type { Reason } from "../../domain/reasons.ts";
import type { Refused } from "../../ports/journal.ts";
import type { TalosFailure, TalosMutation } from "../../ports/talos.ts";
import { requestDigest } from "./digests.ts";
import { observeEvidence } from "./observe.ts";
import type { StepState } from "./deps.ts";

/** What a send reports back: its response class, a redacted detail and, when answered, a value. */
export interface Sent<T> {
  readonly responseClass: ResponseClass;
  readonly detail: string;
  readonly value?: T;
}

export type MutationResult<T> =
  | { readonly kind: "sent"; readonly sent: Sent<T>; readonly attemptId: string }
  | {
    readonly kind: "refused";
    /** `AttemptRefused` (the journal's attempt transaction) or a `MachineIdentity…` reason. */
    readonly reason: Reason;
    readonly detail: string;
    /** The journal's refusal, when it was the journal that refused. */
    readonly refusal?: Refused;
  };

/**
 * The only path to an external mutation (docs/operation-model.md#the-node-step): a phase
 * intent is recorded, the machine's identity is re-observed on both sides as fresh evidence and
 * must still be the machine the commitment bound, the attempt transaction must commit, and only
 * then is the request sent; its response class is recorded whatever it is. If the journal cannot
 * be written, nothing is sent (the error propagates).
 */
export async function mutate<T>(
  s: StepState,
  m: {
    readonly phase: Phase;
    readonly request: Readonly<Record<string, unknown>>;
    readonly route: string;
    readonly deadline: PhaseDeadline;
    readonly send: (timeoutMs: number) => Promise<Sent<T>>;
  },
): Promise<MutationResult<T>> {
  const { journal, clock } = s.deps;
  await journal.recordPhase({
    operationId: s.operationId,
    token: s.token,
    phase: m.phase,
    kind: "intent",
    detail: m.request,
    nowMs: clock.now(),
  });
  if (!s.committed) {
    return {
      kind: "refused",
      reason: "MachineIdentityUnreadable",
      detail: `no machine identity was bound at the commitment of ${s.node}`,
    };
  }
  const evidence = await observeEvidence(s, m.deadline.transportSeconds * 1000);
  if (!evidence.verdict.ok) {
    // Another machine (or none that can be identified) is at the plan's address: no attempt.
    return { kind: "refused", reason: evidence.verdict.reason, detail: evidence.verdict.detail };
  }
  const now = clock.now();
  const transportMs = m.deadline.transportSeconds * 1000;
  const begun = await journal.beginAttempt({
    operationId: s.operationId,
    token: s.token,
    phase: m.phase,
    requestDigest: await requestDigest(m.request),
    route: m.route,
    evidenceId: evidence.id,
    transportDeadlineMs: now + transportMs,
    verificationDeadlineMs: now + m.deadline.verificationSeconds * 1000,
    nowMs: now,
  });
  if (!begun.ok) {
    return { kind: "refused", reason: "AttemptRefused", detail: begun.detail, refusal: begun };
  }
  let sent: Sent<T>;
  try {
    sent = await m.send(s.deps.callTimeoutMs(transportMs));
  } catch (e) {
    // A send that threw after the attempt committed: the request may have gone out.
    sent = { responseClass: "transport-failure", detail: errorText(e) };
  }
  const after = await journal.recordResponse({
    attemptId: begun.attempt.id,
    token: s.token,
    responseClass: sent.responseClass,
    detail: sent.detail,
    nowMs: clock.now(),
  });
  s.deps.observer?.onAttemptResponse?.({ phase: m.phase, responseClass: sent.responseClass });
  s.deps.observer?.onOperationState?.({
    operationId: s.operationId,
    node: s.node,
    state: after.state,
  });
  s.deps.log.info("attempt response recorded", {
    operationId: s.operationId,
    node: s.node,
    phase: m.phase,
    attempt: begun.attempt.number,
    responseClass: sent.responseClass,
  });
  return { kind: "sent", sent, attemptId: begun.attempt.id };
}

/** Maps a Talos mutation's outcome to ER's response classes. */
export function talosSent<T>(r: TalosMutation<T>): Sent<T> {
  return r.outcome === "ok"
    ? { responseClass: "accepted", detail: "ok", value: r.value }
    : failureSent(r);
}

const GRPC_INVALID_ARGUMENT = 3;

/** Maps a failed Talos mutation to ER's response classes. */
export function failureSent(r: TalosFailure): Sent<never> {
  const detail = `${r.reason}: ${r.message}`;
  switch (r.outcome) {
    case "rejected":
      // Only a validation refusal (InvalidArgument) is of the class ER proves to precede any
      // mutation; any other code the node returned (PermissionDenied included) accounts for the
      // attempt and proves nothing else, so it can never make the operation `rejected`.
      return {
        responseClass: r.grpcCode === GRPC_INVALID_ARGUMENT
          ? "rejected-pre-mutation"
          : "target-error",
        detail,
      };
    case "sent-no-response":
      return { responseClass: "lost", detail };
    case "transport-failure":
    case "not-sent":
      // `not-sent` is never claimed as proof: the attempt stays unaccounted like any transport gap.
      return { responseClass: "transport-failure", detail };
  }
}

export function errorText(e: unknown): string {
  return e instanceof Error
    ? `${(e as { reason?: string }).reason ?? e.name}: ${e.message}`
    : String(e);
}
