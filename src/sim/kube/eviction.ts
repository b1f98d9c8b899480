/**
 * The Eviction subresource with the API server's PDB semantics (protocols B1/B2): terminal,
 * pending or terminating pods are deleted directly; more than one matching PDB is a Failure
 * Status; unready pods follow `unhealthyPodEvictionPolicy`; a stale PDB status or zero
 * disruptions allowed is 429; otherwise the budget is decremented and the pod deleted.
 */
import type { Controllers } from "./controllers.ts";
import { podReady } from "./controllers.ts";
import { matchesSelector } from "./selectors.ts";
import type { Obj } from "./store.ts";
import type { KubeLabelSelector } from "../../ports/kube.ts";

type R = Record<string, unknown>;
const rec = (v: unknown): R => (v && typeof v === "object" ? v as R : {});

export interface EvictionReply {
  readonly httpStatus: number;
  readonly body: R;
  readonly outcome: "accepted" | "blocked" | "failed" | "gone";
  readonly headers?: Readonly<Record<string, string>>;
}

export function statusBody(code: number, reason: string, message: string, details?: R): R {
  return {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: code < 400 ? "Success" : "Failure",
    message,
    reason,
    ...(details ? { details } : {}),
    code,
  };
}

function tooMany(message: string, retryAfter: number, pod: Obj): EvictionReply {
  return {
    httpStatus: 429,
    outcome: "blocked",
    // The API server sets Retry-After only for a stale PDB; client-go retries those by itself.
    headers: retryAfter > 0 ? { "Retry-After": String(retryAfter) } : {},
    body: statusBody(429, "TooManyRequests", message, {
      name: pod.metadata.name,
      kind: "pods",
      causes: [{ reason: "DisruptionBudget", message }],
      ...(retryAfter > 0 ? { retryAfterSeconds: retryAfter } : {}),
    }),
  };
}

function accepted(c: Controllers, pod: Obj, grace: number | undefined): EvictionReply {
  c.deletePod(pod, grace);
  return { httpStatus: 201, outcome: "accepted", body: statusBody(201, "", "", undefined) };
}

/** Handles POST pods/{name}/eviction for an existing pod. */
export function evictPod(c: Controllers, pod: Obj, body: R, dryRun: boolean): EvictionReply {
  const opts = rec(body.deleteOptions);
  const grace = opts.gracePeriodSeconds as number | undefined;
  const phase = rec(pod.status).phase as string | undefined;
  const directly = phase === "Succeeded" || phase === "Failed" || phase === "Pending" ||
    pod.metadata.deletionTimestamp !== undefined;
  if (directly) return dryRun ? ok() : accepted(c, pod, grace);
  const pdbs = c.store.list(c.pdbs, pod.metadata.namespace).filter((p) =>
    matchesSelector(
      rec(p.spec).selector as KubeLabelSelector | undefined,
      pod.metadata.labels ?? {},
    )
  );
  if (pdbs.length > 1) {
    const msg =
      "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.";
    return { httpStatus: 500, outcome: "failed", body: statusBody(500, "InternalError", msg) };
  }
  const pdb = pdbs[0];
  if (!pdb) return dryRun ? ok() : accepted(c, pod, grace);
  const st = rec(pdb.status), spec = rec(pdb.spec);
  if (!podReady(pod)) {
    const policy = spec.unhealthyPodEvictionPolicy as string | undefined;
    if (policy === "AlwaysAllow") return dryRun ? ok() : accepted(c, pod, grace);
    const cur = Number(st.currentHealthy ?? 0), want = Number(st.desiredHealthy ?? 0);
    if ((policy === undefined || policy === "IfHealthyBudget") && cur >= want && want > 0) {
      return dryRun ? ok() : accepted(c, pod, grace);
    }
  }
  if (Number(st.observedGeneration ?? 0) < Number(pdb.metadata.generation ?? 1)) {
    return tooMany(
      "Cannot evict pod as it would violate the pod's disruption budget. The disruption budget " +
        `${pdb.metadata.name} is still being processed by the server.`,
      10,
      pod,
    );
  }
  const allowed = Number(st.disruptionsAllowed ?? 0);
  if (allowed < 0) {
    return {
      httpStatus: 403,
      outcome: "failed",
      body: statusBody(403, "Forbidden", "pdb disruptions allowed is negative"),
    };
  }
  if (allowed === 0) {
    return tooMany(
      "Cannot evict pod as it would violate the pod's disruption budget. The disruption budget " +
        `${pdb.metadata.name} needs ${st.desiredHealthy} healthy pods and has ${st.currentHealthy} currently`,
      0,
      pod,
    );
  }
  if (dryRun) return ok();
  const disrupted = {
    ...rec(st.disruptedPods),
    [pod.metadata.name]: new Date(c.clock.now()).toISOString(),
  };
  c.store.put(c.pdbs, {
    ...pdb,
    status: { ...st, disruptionsAllowed: allowed - 1, disruptedPods: disrupted },
  });
  return accepted(c, pod, grace);
}

function ok(): EvictionReply {
  return { httpStatus: 201, outcome: "accepted", body: statusBody(201, "", "") };
}
