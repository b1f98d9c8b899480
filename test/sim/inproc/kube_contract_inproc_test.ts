/**
 * The Kube port contract (`test/contract/kube_contract.ts`) run against the in-process Kube port:
 * the same cases `client-node` passes over HTTPS against the socket simulator, so the executor
 * sees the same cordon, eviction, list and watch behaviour from both.
 */
import { kubeContract, type KubeFactory } from "../../contract/kube_contract.ts";
import { startInprocTwin } from "../../../src/sim/inproc/cluster.ts";
import type { KubeSim, KubeSimStats } from "../../../src/sim/kube/server.ts";

const factory: KubeFactory = (description, opts) => {
  const twin = startInprocTwin({
    description,
    kubePageSize: opts.pageSize,
    ...(opts.historySize !== undefined ? { historySize: opts.historySize } : {}),
  });
  // The simulator side the suite inspects and drives: the same store, controllers and counters.
  const sim: KubeSim = {
    url: "inproc:",
    port: 0,
    stats: twin.kube.stats,
    // The contract suite does not read per-resource access (the RBAC test does, on sockets).
    access: new Map(),
    store: twin.store,
    controllers: twin.controllers,
    setNodeReady: (n, r) => twin.controllers.setNodeReady(n, r),
    setNodeInfo: (n, i) => twin.controllers.setNodeInfo(n, i),
    async waitFor(pred: (s: KubeSimStats) => boolean) {
      while (!pred(twin.kube.stats)) await new Promise((r) => setTimeout(r, 0));
    },
    disconnectWatches: () => twin.kube.disconnectWatches(),
    close: () => Promise.resolve(twin.stop()),
  };
  return Promise.resolve({
    kube: twin.kube,
    sim,
    clock: twin.sim,
    faults: twin.faults,
    dispose: () => sim.close(),
  });
};

kubeContract("in-process", factory);
