/**
 * HTTP status and transport failures → `CairnError` with a `kube` reason, at the boundary. The
 * library's `ApiException` and the watch's error are recognised by shape (`code`/`statusCode`
 * and `body`), so this module needs no import of the library.
 */
import { CairnError } from "../../domain/errors.ts";
import type { Reason } from "../../domain/reasons.ts";

type R = Record<string, unknown>;
const rec = (v: unknown): R => (v !== null && typeof v === "object" ? v as R : {});

/** The `metav1.Status` fields cairn reads. */
export interface KubeStatus {
  readonly status: string | undefined;
  readonly code: number | undefined;
  readonly reason: string | undefined;
  readonly message: string;
  readonly causes: readonly string[];
  readonly retryAfterSeconds: number | undefined;
}

/** Parses a body (text or object) as a Status; undefined when it is not one. */
export function parseStatus(body: unknown): KubeStatus | undefined {
  let v: unknown = body;
  if (typeof body === "string") {
    try {
      v = JSON.parse(body);
    } catch {
      return undefined;
    }
  }
  const s = rec(v);
  if (s.kind !== "Status") return undefined;
  const details = rec(s.details);
  const causes = Array.isArray(details.causes) ? details.causes.map(rec) : [];
  return {
    status: typeof s.status === "string" ? s.status : undefined,
    code: typeof s.code === "number" ? s.code : undefined,
    reason: typeof s.reason === "string" && s.reason !== "" ? s.reason : undefined,
    message: typeof s.message === "string" ? s.message : "",
    // StatusCause serialises its type under the JSON key "reason".
    causes: causes.map((c) => String(c.reason ?? c.type ?? "")).filter((c) => c !== ""),
    retryAfterSeconds: typeof details.retryAfterSeconds === "number"
      ? details.retryAfterSeconds
      : undefined,
  };
}

/** The catalogued reason for an HTTP error status. */
export function reasonForHttpStatus(code: number): Reason {
  if (code === 401) return "KubeUnauthorized";
  if (code === 403) return "KubeForbidden";
  if (code === 404) return "KubeNotFound";
  if (code === 409) return "KubeConflict";
  if (code === 410) return "KubeWatchExpired";
  if (code === 429) return "KubeRateLimited";
  if (code >= 500) return "KubeServerError";
  if (code >= 400) return "KubeInvalidRequest";
  return "KubeBadResponse";
}

/** The error for a non-2xx answer to `what` (e.g. `GET /api/v1/nodes`). */
export function httpError(code: number, body: unknown, what: string): CairnError {
  const status = parseStatus(body);
  const detail = status?.message || (code === 401 ? "Unauthorized" : `HTTP ${code}`);
  return new CairnError({
    reason: reasonForHttpStatus(code),
    message: `Kubernetes ${what} failed: ${detail}`,
    details: { httpStatus: code, what, ...(status?.reason ? { statusReason: status.reason } : {}) },
  });
}

/** Network, TLS or socket failure before any HTTP answer. */
export function transportError(e: unknown, what: string): CairnError {
  const err = rec(e);
  const code = typeof err.code === "string" ? err.code : undefined;
  const message = e instanceof Error ? e.message : String(e);
  return new CairnError({
    reason: "KubeUnreachable",
    message: `Kubernetes ${what} failed: ${message}`,
    details: { what, ...(code ? { errorCode: code } : {}) },
  }, { cause: e });
}

/** A body that could not be interpreted. */
export function badResponse(what: string, detail: string): CairnError {
  return new CairnError({
    reason: "KubeBadResponse",
    message: `Kubernetes ${what}: ${detail}`,
    details: { what },
  });
}

/** The HTTP status an exception from the library carries, if any. */
export function httpStatusOf(e: unknown): number | undefined {
  const err = rec(e);
  if (typeof err.code === "number" && "body" in err) return err.code;
  if (typeof err.statusCode === "number") return err.statusCode;
  return undefined;
}

/** Any failure of a library call → CairnError (CairnErrors pass through). */
export function toKubeError(e: unknown, what: string): CairnError {
  if (e instanceof CairnError) return e;
  const code = httpStatusOf(e);
  if (code !== undefined) return httpError(code, rec(e).body, what);
  return transportError(e, what);
}

/** A call that got no complete answer within its deadline (`timeoutMs`) and was abandoned. */
export function timeoutError(what: string, timeoutMs: number): CairnError {
  return new CairnError({
    reason: "KubeTimeout",
    message: `Kubernetes ${what} gave no answer within ${timeoutMs} ms; abandoned`,
    details: { what, timeoutMs },
  });
}
