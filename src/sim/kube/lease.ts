/**
 * What the API server checks on a `coordination.k8s.io/v1` Lease write, so the twin refuses
 * what a real one refuses: a MicroTime that does not parse is a decode error (400), and the
 * spec validation (`leaseDurationSeconds` and `leaseTransitions`) answers 422 Invalid. Lease
 * semantics beyond that (who may take it, when) are the clients' own, as on a real cluster:
 * the server's part is the resourceVersion precondition, which the store's update enforces.
 */
import type { Obj } from "./store.ts";

type R = Record<string, unknown>;

/** Why a Lease write is refused (HTTP code, Status reason and message), or undefined. */
export function leaseRefusal(
  o: Obj,
): { code: 400 | 422; reason: "BadRequest" | "Invalid"; message: string } | undefined {
  const spec = (o.spec ?? {}) as R;
  for (const f of ["acquireTime", "renewTime"]) {
    const v = spec[f];
    if (v === undefined || v === null) continue;
    if (typeof v !== "string" || !RFC3339.test(v) || Number.isNaN(Date.parse(v))) {
      return {
        code: 400,
        reason: "BadRequest",
        message: `Lease in version "v1" cannot be handled as a Lease: parsing time ${
          JSON.stringify(v)
        } as "2006-01-02T15:04:05.000000Z07:00": cannot parse`,
      };
    }
  }
  const problems: string[] = [];
  const d = spec.leaseDurationSeconds;
  if (d !== undefined && d !== null && !(Number.isInteger(d) && (d as number) > 0)) {
    problems.push("spec.leaseDurationSeconds: Invalid value: must be greater than 0");
  }
  const t = spec.leaseTransitions;
  if (t !== undefined && t !== null && !(Number.isInteger(t) && (t as number) >= 0)) {
    problems.push("spec.leaseTransitions: Invalid value: must be greater than or equal to 0");
  }
  if (problems.length === 0) return undefined;
  return {
    code: 422,
    reason: "Invalid",
    message: `Lease.coordination.k8s.io "${o.metadata.name}" is invalid: ${problems.join(", ")}`,
  };
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

/** True for the Lease type. */
export function isLease(t: { group: string; kind: string }): boolean {
  return t.group === "coordination.k8s.io" && t.kind === "Lease";
}
