import type { Phase, ResponseClass } from "../../domain/operation.ts";
import type { PhaseDeadline, Plan } from "../../domain/plan/schema.ts";
import type { Reason } from "../../domain/reasons.ts";
import type { AttemptRecord, Refused } from "../../ports/journal.ts";
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

/** A refusal on the mutation path: nothing was sent. */
export interface MutationRefusal {
  readonly ok: false;
  readonly reason: Reason;
  readonly detail: string;
  /** The journal's refusal, when it was the journal that refused. */
  readonly refusal?: Refused;
}

/**
 * How one kind of actor is admitted to a mutation: the fresh evidence read after the intent, the
 * attempt record that must commit before the send, and the response recorded against it. The
 * executor is admitted by the fenced attempt transaction (`mutate`); a recovery-admin by a
 * recovery attempt (engine/recovery/recover_uncordon.ts).
 */
export interface Admission<E, A> {
  /** Records the phase intent; it precedes every read and write of the mutation. */
  readonly recordIntent: () => Promise<void>;
  /** Re-reads the evidence the mutation depends on; a refusal records no attempt. */
  readonly freshEvidence: () => Promise<
    { readonly ok: true; readonly evidence: E } | MutationRefusal
  >;
  /** The attempt record; the request is sent only once it has committed. */
  readonly admit: (
    evidence: E,
  ) => Promise<{ readonly ok: true; readonly attempt: A; readonly id: string } | MutationRefusal>;
  /** Records the response against the admitted attempt, whatever it is. */
  readonly recordResponse: (attempt: A, sent: Sent<unknown>) => Promise<void>;
}

/**
 * The one mutation path (docs/operation-model.md#the-node-step): intent, fresh evidence, attempt
 * record, send, response recorded. If the journal cannot be written, nothing is sent (the error
 * propagates); a send that throws after admission is a transport failure, recorded as such —
 * unless the run was stopped (`stop` aborted): an operator's stop is not a transport failure, so no
 * response is recorded, the attempt stays unaccounted (the request may still land, evictions
 * already accepted still proceed) and the stop propagates to the step, which records it.
 */
export async function mutateThrough<T, E, A>(
  admission: Admission<E, A>,
  send: (evidence: E, attempt: A) => Promise<Sent<T>>,
  stop?: AbortSignal,
): Promise<MutationResult<T>> {
  await admission.recordIntent();
  const evidence = await admission.freshEvidence();
  if (!evidence.ok) return refusedResult(evidence);
  const begun = await admission.admit(evidence.evidence);
  if (!begun.ok) return refusedResult(begun);
  let sent: Sent<T>;
  try {
    sent = await send(evidence.evidence, begun.attempt);
  } catch (e) {
    if (stop?.aborted) throw e;
    // A send that threw after the attempt committed: the request may have gone out.
    sent = { responseClass: "transport-failure", detail: errorText(e) };
  }
  await admission.recordResponse(begun.attempt, sent);
  return { kind: "sent", sent, attemptId: begun.id };
}

function refusedResult(r: MutationRefusal): MutationResult<never> {
  return {
    kind: "refused",
    reason: r.reason,
    detail: r.detail,
    ...(r.refusal ? { refusal: r.refusal } : {}),
  };
}

/**
 * The executor's mutation: a phase intent is recorded, the machine's identity is re-observed on
 * both sides as fresh evidence and must still be the machine the commitment bound, the fenced
 * attempt transaction must commit, and only then is the request sent; its response class is
 * recorded whatever it is.
 */
export function mutate<T>(
  s: StepState<Plan>,
  m: {
    readonly phase: Phase;
    readonly request: Readonly<Record<string, unknown>>;
    readonly route: string;
    readonly deadline: PhaseDeadline;
    /**
     * Sends the request with `timeoutMs` of wall time for the call, what is left of the attempt's
     * recorded transport deadline; `sendByMs` is that deadline on the step's clock, after which a
     * send that repeats requests (a drain's evictions) must not send another.
     */
    readonly send: (timeoutMs: number, sendByMs: number) => Promise<Sent<T>>;
  },
): Promise<MutationResult<T>> {
  const { journal, clock } = s.deps;
  const transportMs = m.deadline.transportSeconds * 1000;
  const admission: Admission<string, AttemptRecord> = {
    recordIntent: () =>
      journal.recordPhase({
        operationId: s.operationId,
        token: s.token,
        phase: m.phase,
        kind: "intent",
        detail: m.request,
        nowMs: clock.now(),
      }),
    freshEvidence: async () => {
      if (!s.committed) {
        return {
          ok: false,
          reason: "MachineIdentityUnreadable",
          detail: `no machine identity was bound at the commitment of ${s.node}`,
        };
      }
      const evidence = await observeEvidence(s, transportMs);
      // Another machine (or none that can be identified) is at the plan's address: no attempt.
      return evidence.verdict.ok
        ? { ok: true, evidence: evidence.id }
        : { ok: false, reason: evidence.verdict.reason, detail: evidence.verdict.detail };
    },
    admit: async (evidenceId) => {
      const now = clock.now();
      const begun = await journal.beginAttempt({
        operationId: s.operationId,
        token: s.token,
        phase: m.phase,
        requestDigest: await requestDigest(m.request),
        route: m.route,
        evidenceId,
        transportDeadlineMs: now + transportMs,
        verificationDeadlineMs: now + m.deadline.verificationSeconds * 1000,
        nowMs: now,
      });
      return begun.ok
        ? { ok: true, attempt: begun.attempt, id: begun.attempt.id }
        : { ok: false, reason: "AttemptRefused", detail: begun.detail, refusal: begun };
    },
    recordResponse: async (attempt, sent) => {
      const after = await journal.recordResponse({
        attemptId: attempt.id,
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
        attempt: attempt.number,
        responseClass: sent.responseClass,
      });
    },
  };
  // The request leaves only inside the transport deadline its attempt recorded, and its call is
  // bounded by what is left of it: recovery's settle floor counts from that deadline
  // (docs/operation-model.md#accounting-and-the-settle-floor), so a controller paused between the
  // attempt's commit and its send (a stopped process, a long GC, a suspended VM) must not send
  // once it runs again past the deadline, nor send with a whole new deadline of its own.
  const sendWithin = (sendByMs: number): Promise<Sent<T>> => {
    const leftMs = sendByMs - clock.now();
    if (leftMs <= 0) return Promise.resolve(notSentPastDeadline(sendByMs, clock.now()));
    return m.send(s.deps.callTimeoutMs(leftMs), sendByMs);
  };
  return mutateThrough(
    admission,
    (_, attempt) => sendWithin(attempt.transportDeadlineMs),
    s.deps.signal,
  );
}

/**
 * The response recorded for an admitted attempt whose request was never sent because its
 * transport deadline had passed. Conservatively a transport failure: it accounts for nothing (the
 * journal cannot tell a request that was never sent from one whose sender says so), and the step
 * stays `unresolved` until the evidence settles it, as after any transport gap.
 */
function notSentPastDeadline(sendByMs: number, nowMs: number): Sent<never> {
  return {
    responseClass: "transport-failure",
    detail: `TransportDeadlinePassed: not sent; the attempt's transport deadline passed ${
      nowMs - sendByMs
    } ms before the request could be sent`,
  };
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
