/**
 * Wires the Kubernetes API simulator into the twin: its own ECDSA PKI (as Kubernetes clusters
 * commonly use), a kubeconfig in the state directory, and the node facts the Talos side changes
 * (Ready during a reboot, nodeInfo bootID / osImage / kubeletVersion after each boot).
 */
import { join } from "node:path";
import { startKubeSim, writeKubeconfig } from "./kube/server.ts";
import { mintPki } from "./pki.ts";
import { startCnpgOperator } from "./kube/cnpg.ts";
import { nodeInfoFacts } from "./kube/controllers.ts";
import { syncMirrorPods } from "./kube/bootstrap.ts";
import { startWorkloadStatus } from "./kube/workload_status.ts";
import { startScheduler } from "./kube/scheduler.ts";
import { startJobController } from "./kube/jobs.ts";
import { startDeploymentRollouts } from "./kube/rollout.ts";
import { startDaemonSetRollouts } from "./kube/daemonset_rollout.ts";
import { startEventRecorder } from "./kube/events.ts";
import { GitOpsTwin, rookBundledCephcsi } from "./kube/gitops.ts";
import { cachedPki, type KubeStarter, type TwinKube } from "./twin.ts";

/** Starts the Kubernetes simulator for the twin. */
export const startTwinKube: KubeStarter = async (
  { clock, faults, description, stateDir, pkiCacheDir },
) => {
  const mint = (dir: string) =>
    mintPki({
      dir,
      caName: "kubernetes",
      algorithm: "p256",
      serverSans: ["localhost", "127.0.0.1"],
      clients: { admin: ["system:masters"] },
    });
  const pki = pkiCacheDir
    ? cachedPki(join(pkiCacheDir, "kube"), ["admin"], mint)
    : mint(join(stateDir, "kube-pki"));
  const sim = await startKubeSim({
    clock,
    faults,
    description,
    tls: { caPem: pki.ca.certPem, certPem: pki.server.certPem, keyPem: pki.server.keyPem },
  });
  const stopCnpg = startCnpgOperator({ store: sim.store, clock });
  const stopWorkloads = startWorkloadStatus(sim.store);
  const stopScheduler = startScheduler({ store: sim.store, clock, controllers: sim.controllers });
  const stopJobs = startJobController({ store: sim.store, clock, faults });
  const stopEvents = startEventRecorder({ store: sim.store, clock });
  const stopRollouts = startDeploymentRollouts({
    store: sim.store,
    clock,
    controllers: sim.controllers,
  });
  const stopDaemonRollouts = startDaemonSetRollouts({
    store: sim.store,
    clock,
    controllers: sim.controllers,
  });
  // Flux and the operators its charts render: a merge reaches the cluster in visible steps.
  const gitops = new GitOpsTwin({ store: sim.store, clock, bundledCephcsi: rookBundledCephcsi });
  const kubeconfigPath = join(stateDir, "kubeconfig");
  writeKubeconfig(kubeconfigPath, {
    url: sim.url,
    caPem: pki.ca.certPem,
    clientCertPem: pki.clients["admin"]!.certPem,
    clientKeyPem: pki.clients["admin"]!.keyPem,
  });
  const kube: TwinKube = {
    url: sim.url,
    kubeconfigPath,
    stats: () => sim.stats,
    resetStats() {
      sim.stats.total = 0;
      sim.stats.mutating = 0;
      sim.stats.byVerb = {};
      sim.stats.evictions = { accepted: 0, blocked: 0, failed: 0 };
    },
    nodeDown: (name) => sim.setNodeReady(name, false),
    nodeInfo: (name, info) => sim.setNodeInfo(name, nodeInfoFacts(info)),
    nodeUp(name, info) {
      kube.nodeInfo(name, info);
      sim.setNodeReady(name, true);
    },
    staticPods: (_name, pods) => syncMirrorPods(sim.controllers, faults, pods),
    disconnectWatches: () => sim.disconnectWatches(),
    gitopsMerge: (m) => gitops.merge(m),
    stop: () => {
      stopCnpg();
      stopWorkloads();
      stopScheduler();
      stopJobs();
      stopRollouts();
      stopDaemonRollouts();
      stopEvents();
      return sim.close();
    },
  };
  return kube;
};
