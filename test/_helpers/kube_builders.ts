import type { KubePod } from "../../src/ports/kube.ts";

/** A pod as the Kube port returns it, with overridable fields. */
export function pod(name: string, over: Partial<KubePod> = {}): KubePod {
  return {
    namespace: "default",
    name,
    uid: `uid-${name}`,
    resourceVersion: "1",
    nodeName: "worker-1",
    phase: "Running",
    ready: true,
    labels: {},
    annotations: {},
    owner: { apiVersion: "apps/v1", kind: "ReplicaSet", name: `${name}-rs`, uid: `rs-${name}` },
    daemonSet: false,
    mirror: false,
    emptyDir: false,
    terminationGracePeriodSeconds: 30,
    deletionTimestamp: undefined,
    ...over,
  };
}
