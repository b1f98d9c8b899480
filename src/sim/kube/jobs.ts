/**
 * The Job controller of the twin, as far as node hooks need it: a created Job becomes active at
 * once and, `JOB_RUN_MS` of virtual time later, complete (`succeeded: 1`, condition `Complete`),
 * unless a fault at `kube.job` scripts it: `job-fails` ends it failed (`failed: backoffLimit + 1`,
 * condition `Failed`, reason `BackoffLimitExceeded`), `job-hangs` leaves it running. The fault's
 * target is the Job's `cairn.dev/hook` label, else its name. No pods are modelled: the hook's
 * outcome is what the Job's status says, which is what cairn reads.
 */
import type { SimClock } from "../clock.ts";
import type { FaultSchedule } from "../faults.ts";
import { clone } from "./patch.ts";
import { isoSeconds, type Obj, type Store } from "./store.ts";

/** Virtual time a Job runs before it finishes. */
export const JOB_RUN_MS = 10_000;

type R = Record<string, unknown>;

/** Starts the Job controller; returns its stop. */
export function startJobController(
  o: { readonly store: Store; readonly clock: SimClock; readonly faults: FaultSchedule },
): () => void {
  const jobs = o.store.findType("batch", "v1", "jobs")!;
  let stopped = false;
  const update = (ns: string | undefined, name: string, status: R) => {
    const cur = o.store.get(jobs, ns, name);
    if (!cur || stopped) return;
    const next = clone(cur) as Obj & { status?: R };
    next.status = { ...(next.status ?? {}), ...status };
    o.store.put(jobs, next);
  };
  const unwatch = o.store.watch(jobs, (e) => {
    if (e.type !== "ADDED") return;
    const job = e.object;
    const ns = job.metadata.namespace, name = job.metadata.name;
    const hook = job.metadata.labels?.["cairn.dev/hook"] ?? name;
    const fault = o.faults.take("kube.job", hook, o.clock.now());
    const startTime = isoSeconds(o.clock.now());
    // Status writes are deferred: the watch callback runs inside the create.
    o.clock.schedule(0, () => update(ns, name, { active: 1, startTime }));
    if (fault?.kind === "job-hangs") return;
    o.clock.schedule(JOB_RUN_MS, () => {
      const at = isoSeconds(o.clock.now());
      if (fault?.kind === "job-fails") {
        const limit = Number((job.spec as R | undefined)?.["backoffLimit"] ?? 6);
        update(ns, name, {
          active: 0,
          failed: limit + 1,
          conditions: [{
            type: "Failed",
            status: "True",
            reason: "BackoffLimitExceeded",
            message: "Job has reached the specified backoff limit",
            lastTransitionTime: at,
          }],
        });
      } else {
        update(ns, name, {
          active: 0,
          succeeded: 1,
          completionTime: at,
          conditions: [{ type: "Complete", status: "True", lastTransitionTime: at }],
        });
      }
    });
  });
  return () => {
    stopped = true;
    unwatch();
  };
}
