/**
 * gRPC status → reason code and outcome class, at the Talos boundary. The outcome class is what
 * the executor needs for a mutation: only a refusal the server stated before acting is
 * `rejected`; everything else leaves the effect unknown and must never be retried blindly.
 */
import { CairnError } from "../../domain/errors.ts";
import type { Reason } from "../../domain/reasons.ts";
import type { TalosFailure } from "../../ports/talos.ts";

/** gRPC status codes used here. */
export const Code = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  FAILED_PRECONDITION: 9,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

/** Maps a gRPC status to a catalogued reason. */
export function reasonForGrpc(code: number, message: string): Reason {
  switch (code) {
    case Code.UNAVAILABLE:
      return "TalosUnavailable";
    case Code.DEADLINE_EXCEEDED:
      return "TalosDeadlineExceeded";
    case Code.CANCELLED:
      return "TalosCancelled";
    case Code.PERMISSION_DENIED:
    case Code.UNAUTHENTICATED:
      return "TalosPermissionDenied";
    case Code.INVALID_ARGUMENT:
      return "TalosInvalidArgument";
    case Code.FAILED_PRECONDITION:
      return "TalosPreconditionFailed";
    case Code.UNIMPLEMENTED:
      return /only available on control plane/i.test(message)
        ? "TalosNotControlPlane"
        : "TalosUnimplemented";
    case Code.NOT_FOUND:
      return "TalosNotFound";
    default:
      return "TalosInternal";
  }
}

/** Whether the status proves the server refused before acting. */
export function outcomeForGrpc(code: number): TalosFailure["outcome"] {
  switch (code) {
    case Code.INVALID_ARGUMENT:
    case Code.NOT_FOUND:
    case Code.ALREADY_EXISTS:
    case Code.PERMISSION_DENIED:
    case Code.UNAUTHENTICATED:
    case Code.FAILED_PRECONDITION:
    case Code.UNIMPLEMENTED:
      return "rejected";
    case Code.DEADLINE_EXCEEDED:
    case Code.CANCELLED:
      return "sent-no-response";
    default:
      // UNAVAILABLE, INTERNAL (also what a reset HTTP/2 stream becomes), UNKNOWN.
      return "transport-failure";
  }
}

/** A failure record for a mutation. */
export function mutationFailure(
  code: number,
  message: string,
  node: string,
  method: string,
  sawResponse: boolean,
): TalosFailure {
  const base = outcomeForGrpc(code);
  // Once part of a stream arrived the request certainly landed: the outcome is merely unanswered.
  const outcome = sawResponse && base !== "rejected" ? "sent-no-response" : base;
  return { outcome, reason: reasonForGrpc(code, message), grpcCode: code, message, node, method };
}

/** The error a failed read throws. */
export function readError(code: number, message: string, node: string, method: string): CairnError {
  return new CairnError({
    reason: reasonForGrpc(code, message),
    message: `Talos ${method} on ${node} failed: ${message}`,
    details: { grpcCode: code, node, method },
  });
}

/** The shape of `/proc/sys/kernel/random/boot_id`: a UUID, 36 characters. */
const BOOT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The boot id in the bytes a `Read` of the boot-id file returned. A read whose stream ended without
 * its data (or cut inside it) reads back empty or partial: that is an unreadable boot, never a new
 * one, since any text that differs from the boot id before a reboot would count as a reboot.
 */
export function bootIdFrom(text: string, node: string, method: string): string {
  const id = text.trim();
  if (!BOOT_ID.test(id)) {
    const shown = id.length > 40 ? `${id.slice(0, 40)}…` : id;
    throw readError(Code.INTERNAL, `boot id read back as ${JSON.stringify(shown)}`, node, method);
  }
  return id;
}
