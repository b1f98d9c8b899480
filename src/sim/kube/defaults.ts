/**
 * The defaults the apiserver fills into workloads it stores (what `kubectl get -o yaml` shows on
 * a real cluster and what `kubectl rollout status` needs: it refuses a DaemonSet or StatefulSet
 * without a RollingUpdate strategy). Fills only what the object leaves out.
 */
import type { Obj } from "./store.ts";

type R = Record<string, unknown>;

/** Fills the apps/v1 defaults of a Deployment, DaemonSet or StatefulSet in place. */
export function defaultWorkload(o: Obj): void {
  const kind = o["kind"];
  if (kind !== "Deployment" && kind !== "DaemonSet" && kind !== "StatefulSet") return;
  const spec = (o["spec"] ??= {}) as R;
  spec["revisionHistoryLimit"] ??= 10;
  if (kind === "Deployment") {
    spec["replicas"] ??= 1;
    spec["progressDeadlineSeconds"] ??= 600;
    spec["strategy"] ??= {
      type: "RollingUpdate",
      rollingUpdate: { maxUnavailable: "25%", maxSurge: "25%" },
    };
  } else if (kind === "DaemonSet") {
    spec["updateStrategy"] ??= {
      type: "RollingUpdate",
      rollingUpdate: { maxUnavailable: 1, maxSurge: 0 },
    };
  } else {
    spec["replicas"] ??= 1;
    spec["podManagementPolicy"] ??= "OrderedReady";
    spec["updateStrategy"] ??= { type: "RollingUpdate", rollingUpdate: { partition: 0 } };
  }
}
