/**
 * A `coordination.k8s.io/v1` Lease between the wire and the `LeaseStore` port: times as the
 * API's MicroTime (RFC 3339 with six fractional digits, UTC) one way, epoch milliseconds the
 * other. Shared by the real adapter and the in-process twin, so both read a Lease alike.
 */
import type { LeaseSpec, ObservedLease } from "../../ports/lease.ts";
import { badResponse } from "./errors.ts";

type R = Record<string, unknown>;
const rec = (v: unknown): R => (v !== null && typeof v === "object" ? v as R : {});

/** The Lease resource, as the API paths name it. */
export const LEASES = {
  group: "coordination.k8s.io",
  version: "v1",
  plural: "leases",
  namespaced: true,
} as const;

/** `2026-12-01T03:30:00.123000Z`: what client-go writes in renewTime and acquireTime. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

/** The Lease object a write sends (the version only on an update). */
export function leaseToWire(
  namespace: string,
  name: string,
  spec: LeaseSpec,
  resourceVersion?: string,
): R {
  return {
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    metadata: {
      name,
      namespace,
      ...(resourceVersion !== undefined ? { resourceVersion } : {}),
    },
    spec: {
      holderIdentity: spec.holderIdentity ?? "",
      leaseDurationSeconds: spec.leaseDurationSeconds,
      ...(spec.acquireTimeMs !== undefined ? { acquireTime: microTime(spec.acquireTimeMs) } : {}),
      ...(spec.renewTimeMs !== undefined ? { renewTime: microTime(spec.renewTimeMs) } : {}),
      leaseTransitions: spec.leaseTransitions,
    },
  };
}

/** Reads a Lease object; a missing version or a malformed time is a bad response. */
export function leaseFromWire(o: unknown, what: string): ObservedLease {
  const meta = rec(rec(o).metadata);
  const spec = rec(rec(o).spec);
  const rv = meta.resourceVersion;
  if (typeof rv !== "string" || rv === "") throw badResponse(what, "Lease has no resourceVersion");
  const time = (field: string): number | undefined => {
    const v = spec[field];
    if (v === undefined || v === null) return undefined;
    const ms = typeof v === "string" ? Date.parse(v) : NaN;
    if (Number.isNaN(ms)) throw badResponse(what, `Lease spec.${field} is not a time`);
    return ms;
  };
  const acquireTimeMs = time("acquireTime");
  const renewTimeMs = time("renewTime");
  const duration = spec.leaseDurationSeconds;
  return {
    resourceVersion: rv,
    spec: {
      ...(typeof spec.holderIdentity === "string" ? { holderIdentity: spec.holderIdentity } : {}),
      // An unset duration is treated as the shortest: a Lease nobody bounded is not a claim.
      leaseDurationSeconds: typeof duration === "number" && duration > 0 ? duration : 1,
      ...(acquireTimeMs !== undefined ? { acquireTimeMs } : {}),
      ...(renewTimeMs !== undefined ? { renewTimeMs } : {}),
      leaseTransitions: typeof spec.leaseTransitions === "number" ? spec.leaseTransitions : 0,
    },
  };
}
