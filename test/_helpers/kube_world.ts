/**
 * A small cluster for the Kube contract: one control plane and two workers, Deployments whose
 * PDBs allow 0 disruptions, 1 disruption, or overlap (two PDBs on one pod), a pod with a long
 * grace period, a DaemonSet on every node, enough pods for several LIST pages, a ConfigMap and a
 * custom resource.
 */
import type { ClusterDescription } from "../../src/sim/cluster_description.ts";
import { ClusterDescriptionSchema } from "../../src/sim/cluster_description.ts";

const SCHEMATIC = "30684e2ddd0b9d61be817efe9f71ba839dc0e7610d8bc111fe7f70c6b29db08b";
export const NS = "apps";

function node(name: string, role: "controlplane" | "worker", address: string) {
  return {
    name,
    role,
    address,
    talosVersion: "v1.13.9",
    kubeletVersion: "v1.35.2",
    schematic: SCHEMATIC,
  };
}

function deployment(name: string, replicas: number, grace = 30) {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace: NS },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          terminationGracePeriodSeconds: grace,
          containers: [{ name, image: `registry.example/${name}:1` }],
        },
      },
    },
  };
}

function pdb(name: string, app: string, spec: Record<string, unknown>) {
  return {
    apiVersion: "policy/v1",
    kind: "PodDisruptionBudget",
    metadata: { name, namespace: NS },
    spec: { ...spec, selector: { matchLabels: { app } } },
  };
}

/** Number of pods the world starts with (Deployments + one DaemonSet pod per node). */
export const WORLD_PODS = 2 + 2 + 2 + 30 + 3;

export function kubeWorld(): ClusterDescription {
  return ClusterDescriptionSchema.parse({
    apiVersion: "cairn.dev/v1alpha1",
    kind: "ClusterDescription",
    metadata: { name: "contract" },
    spec: {
      kubernetesVersion: "v1.35.2",
      nodes: [
        node("cp-1", "controlplane", "10.5.0.3"),
        node("w-1", "worker", "10.5.0.4"),
        node("w-2", "worker", "10.5.0.5"),
      ],
      objects: [
        deployment("web", 2),
        pdb("web", "web", { minAvailable: 2 }),
        deployment("api", 2),
        pdb("api-a", "api", { maxUnavailable: 1 }),
        pdb("api-b", "api", { minAvailable: 1 }),
        deployment("slow", 2, 60),
        pdb("slow", "slow", { maxUnavailable: 1 }),
        deployment("bulk", 30),
        {
          apiVersion: "apps/v1",
          kind: "DaemonSet",
          metadata: { name: "agent", namespace: "kube-system" },
          spec: {
            selector: { matchLabels: { app: "agent" } },
            template: {
              metadata: { labels: { app: "agent" } },
              spec: { containers: [{ name: "agent", image: "registry.example/agent:1" }] },
            },
          },
        },
        {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "settings", namespace: NS, labels: { tier: "config" } },
          data: { mode: "safe" },
        },
        {
          apiVersion: "ceph.rook.io/v1",
          kind: "CephCluster",
          metadata: { name: "rook-ceph", namespace: "rook-ceph" },
          spec: { cephVersion: { image: "quay.io/ceph/ceph:v19" } },
          status: { ceph: { health: "HEALTH_OK" } },
        },
      ],
    },
  });
}
