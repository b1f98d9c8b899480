/**
 * Synthetic cluster descriptions for scale runs (e.g. 1,000 nodes, 30,000 pods, 3,000 PDBs):
 * 3 control planes and the rest workers, one node-agent DaemonSet, Deployments with their
 * replicas spread unevenly over namespaces of 50, and PDBs over the first Deployments — about one
 * in ten allowing no disruption at all. Seeded with our own PRNG, so a seed always gives the
 * same cluster.
 */
import { type ClusterDescription, ClusterDescriptionSchema } from "./cluster_description.ts";
import { seededRandom } from "./seeded_random.ts";
import { exampleNodeAddress, HOME_OPS_SCHEMATIC } from "../domain/plan/example.ts";

export interface GenerateOptions {
  readonly nodes: number;
  /** Total pods, DaemonSet pods (one per node) included. */
  readonly pods: number;
  readonly pdbs: number;
  readonly seed: number;
  readonly name?: string;
  readonly talosVersion?: string;
  readonly kubernetesVersion?: string;
}

const SCHEMATIC = "30684e2ddd0b9d61be817efe9f71ba839dc0e7610d8bc111fe7f70c6b29db08b";
const DEPLOYMENTS_PER_NAMESPACE = 50;
const GRACE_SECONDS = [30, 30, 30, 60, 120] as const;

/** Splits `total` into `parts` positive integers with uneven, seeded sizes. */
export function spread(total: number, parts: number, rand: () => number): number[] {
  if (parts <= 0) return [];
  if (total < parts) throw new RangeError(`cannot spread ${total} over ${parts} parts`);
  const weights = Array.from({ length: parts }, () => 0.25 + rand() * 1.5);
  const sum = weights.reduce((a, b) => a + b, 0);
  const out = weights.map((w) => Math.max(1, Math.floor((total * w) / sum)));
  let diff = total - out.reduce((a, b) => a + b, 0);
  for (let i = 0; diff !== 0; i = (i + 1) % parts) {
    if (diff > 0) (out[i]!++, diff--);
    else if (out[i]! > 1) (out[i]!--, diff++);
  }
  return out;
}

function nodes(count: number, o: GenerateOptions) {
  const cps = count >= 4 ? 3 : 1;
  return Array.from({ length: count }, (_, i) => {
    const cp = i < cps;
    return {
      name: cp ? `cp-${i + 1}` : `worker-${i - cps + 1}`,
      role: cp ? "controlplane" : "worker",
      address: cp
        ? exampleNodeAddress("controlplane", i + 1)
        : exampleNodeAddress("worker", i - cps + 1),
      talosVersion: o.talosVersion ?? "v1.13.9",
      kubeletVersion: o.kubernetesVersion ?? "v1.35.2",
      schematic: SCHEMATIC,
    };
  });
}

function deployment(name: string, ns: string, replicas: number, grace: number) {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace: ns, labels: { app: name } },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          terminationGracePeriodSeconds: grace,
          containers: [{ name: "app", image: `registry.example/${name}:1` }],
        },
      },
    },
  };
}

/** A PDB budget: ~10% allow no disruption, the rest one pod or half of them. */
function budget(replicas: number, rand: () => number): Record<string, number | string> {
  const r = rand();
  if (r < 0.1) return { minAvailable: replicas };
  if (r < 0.6) return { maxUnavailable: 1 };
  return { minAvailable: "50%" };
}

function daemonSet() {
  return {
    apiVersion: "apps/v1",
    kind: "DaemonSet",
    metadata: { name: "node-agent", namespace: "kube-system" },
    spec: {
      selector: { matchLabels: { app: "node-agent" } },
      template: {
        metadata: { labels: { app: "node-agent" } },
        spec: { containers: [{ name: "agent", image: "registry.example/agent:1" }] },
      },
    },
  };
}

/** Builds a synthetic cluster description. */
export function generateCluster(o: GenerateOptions): ClusterDescription {
  const rand = seededRandom(o.seed);
  const workloadPods = o.pods - o.nodes;
  const count = Math.min(workloadPods, Math.max(o.pdbs, Math.ceil(workloadPods / 10)));
  if (count <= 0 || o.pdbs > count) {
    throw new RangeError(`${o.pods} pods on ${o.nodes} nodes cannot carry ${o.pdbs} PDBs`);
  }
  const replicas = spread(workloadPods, count, rand);
  const objects: Record<string, unknown>[] = [daemonSet()];
  replicas.forEach((n, i) => {
    const ns = `team-${String(Math.floor(i / DEPLOYMENTS_PER_NAMESPACE)).padStart(3, "0")}`;
    const name = `app-${String(i).padStart(5, "0")}`;
    const grace = GRACE_SECONDS[Math.floor(rand() * GRACE_SECONDS.length)]!;
    objects.push(deployment(name, ns, n, grace));
    if (i < o.pdbs) {
      objects.push({
        apiVersion: "policy/v1",
        kind: "PodDisruptionBudget",
        metadata: { name, namespace: ns },
        spec: { ...budget(n, rand), selector: { matchLabels: { app: name } } },
      });
    }
  });
  return ClusterDescriptionSchema.parse({
    apiVersion: "cairn.dev/v1alpha1",
    kind: "ClusterDescription",
    metadata: { name: o.name ?? `synthetic-${o.nodes}` },
    spec: {
      kubernetesVersion: o.kubernetesVersion ?? "v1.35.2",
      nodes: nodes(o.nodes, o),
      installerImages: ["v1.13.9", "v1.14.2"].map((tag) =>
        `factory.talos.dev/metal-installer/${HOME_OPS_SCHEMATIC}:${tag}`
      ),
      objects,
    },
  });
}
