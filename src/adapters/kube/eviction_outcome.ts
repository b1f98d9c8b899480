/**
 * An eviction answer → `EvictionOutcome` (protocols B1). Accepted only when the HTTP status is
 * 2xx and the body is not a Failure Status: the upstream create handler may wrap the
 * multiple-PDB refusal in a 201.
 */
import type { EvictionOutcome } from "../../ports/kube.ts";
import { httpError, parseStatus } from "./errors.ts";

const MULTIPLE_PDBS = /more than one PodDisruptionBudget/i;

function retryAfter(headers: Readonly<Record<string, string>>, fromBody: number | undefined) {
  const h = headers["retry-after"] ?? headers["Retry-After"];
  const n = h !== undefined ? Number(h) : NaN;
  return Number.isFinite(n) ? n : fromBody;
}

/** Classifies the answer to one eviction request; throws for server/transport-class failures. */
export function classifyEviction(
  httpStatus: number,
  body: unknown,
  headers: Readonly<Record<string, string>>,
  what = "evict",
): EvictionOutcome {
  const status = parseStatus(body);
  const ok = httpStatus >= 200 && httpStatus <= 299;
  if (ok && (status === undefined || status.status !== "Failure")) return { kind: "accepted" };
  // A Failure Status inside a 2xx: its own code says what happened.
  const code = ok ? status?.code ?? 500 : httpStatus;
  const message = status?.message ?? `HTTP ${code}`;
  if (code === 404) return { kind: "gone" };
  if (code === 429) {
    return {
      kind: "blocked",
      httpStatus: code,
      message,
      retryAfterSeconds: retryAfter(headers, status?.retryAfterSeconds),
      causes: status?.causes ?? [],
    };
  }
  if (MULTIPLE_PDBS.test(message)) {
    return { kind: "failed", reason: "EvictionMultiplePdbs", httpStatus: code, message };
  }
  if (code === 403 || code === 400 || code === 422) {
    return { kind: "failed", reason: "EvictionRefused", httpStatus: code, message };
  }
  throw httpError(code, body, what);
}
