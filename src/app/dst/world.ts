/**
 * What a seed draws before anything runs: the cluster's shape (3–30 nodes, control planes,
 * workloads with their PodDisruptionBudget layout, optionally a CloudNativePG database whose
 * primary's budget allows no disruption) and a plan for it, with the plan's bound files (health
 * policy, catalogue) held in memory. Plan kinds are drawn through `PLAN_KINDS`: a kind adds its
 * own `PlanKindDriver` (what it binds, which nodes it touches) and the campaign runs it unchanged.
 */
import { stringify } from "yaml";
import {
  exampleNodeAddress,
  HOME_OPS_INSTALLER_DIGEST,
  HOME_OPS_SCHEMATIC,
} from "../../domain/plan/example.ts";
import { ContentMemo } from "../../domain/content_memo.ts";
import { sha256Hex } from "../../domain/plan/digest.ts";
import type { ParsedPlan } from "../../domain/plan/parse.ts";
import type { TalosUpgradePlan } from "../../domain/plan/schema.ts";
import type { RolloutOutcome } from "../../engine/executor/rollout.ts";
import { bindPlan, type ExecuteOptions, executePlan } from "../../engine/executor/run_plan.ts";
import type { BoundFileSource } from "../../ports/dispatch.ts";
import type { Journal } from "../../ports/journal.ts";
import type { InprocTwin } from "../../sim/inproc/cluster.ts";
import {
  type ClusterDescription,
  ClusterDescriptionSchema,
} from "../../sim/cluster_description.ts";
import type { ComponentFacts } from "./component_kind.ts";
import type { Prng } from "./prng.ts";
import type { DstEvent } from "./schedule.ts";

/** The cluster a seed runs on, as drawn (before the twin's schema defaults). */
export interface Shape {
  readonly nodes: number;
  readonly workers: readonly string[];
  readonly controlPlanes: readonly string[];
  /** Deployment name → its PDB layout. */
  readonly pdbLayout: Readonly<Record<string, PdbLayout>>;
  /** Worker (or control plane) running the database primary, when there is a database. */
  readonly databasePrimary: string | undefined;
}

export type PdbLayout = "none" | "max-unavailable-1" | "min-available-half" | "zero-disruption";

/** A drawn plan with the files it binds, ready to bind and run. */
export interface DrawnPlan {
  readonly kind: string;
  readonly text: string;
  /** The plan's nodes in plan order (the nodes it may touch). */
  readonly nodes: readonly string[];
  readonly files: BoundFileSource;
  /** What the kind needs the twin to model (Kubernetes components, a Talos version); in place. */
  readonly editDescription?: (d: ClusterDescription) => void;
  /** The nodes the seed's twin faults aim at (default `nodes`; a ComponentUpgrade has none). */
  readonly aim?: readonly string[];
  /**
   * Starts what the world does on its own once the twin runs (a ComponentUpgrade's Flux
   * delivery, with the seed's Flux faults), and returns the facts its invariants read.
   */
  readonly start?: (
    twin: InprocTwin,
    events: readonly DstEvent[],
  ) => { readonly component?: ComponentFacts };
}

/** What a kind's executor is run with (the campaign's ports, journal, clocks and timings). */
export type KindRunOptions = Omit<ExecuteOptions, "bound">;

/** A plan recorded and approved in the journal, ready for its kind's executor. */
export interface BoundRun {
  readonly digest: string;
  /** The rollout's outcome; `reason` says why a run without node steps did not complete. */
  execute(o: KindRunOptions): Promise<RolloutOutcome & { readonly reason?: string }>;
}

/** One plan kind the campaign can draw and run. */
export interface PlanKindDriver {
  readonly kind: string;
  draw(prng: Prng, shape: Shape, catalogue: Uint8Array, o: DrawOptions): Promise<DrawnPlan>;
  /** Records and approves the plan with the kind's own binding. */
  bind(journal: Journal, plan: BindInput): Promise<BoundRun>;
  /**
   * Invariant 6's ground truth: what a completed operation of this kind claims, checked on the
   * twin when its completion observation is recorded. Undefined when true; otherwise what is not.
   */
  untrue(twin: InprocTwin, op: { readonly machine: string; readonly step: string }):
    | string
    | undefined;
  /**
   * Invariant 16's ground truth, for kinds that change configurations in place: undefined while
   * the change of an accepted configuration attempt of `op` is in the machine's stored document.
   */
  taken?(twin: InprocTwin, op: { readonly machine: string; readonly step: string }):
    | string
    | undefined;
}

/** What every kind's binding takes. */
export interface BindInput {
  readonly parsed: ParsedPlan;
  readonly bytes: Uint8Array;
  readonly nowMs: number;
}

/** The binding's fixed inputs in the campaign: no signatures, one approver. */
export const DST_BINDING = {
  signatures: "",
  firstSeenCommit: "dst",
  approver: { identity: "dst-approver", role: "approver" as const },
};

export interface DrawOptions {
  readonly profile: Profile;
  /** At most this many plan nodes (after the draw: the seed's other draws do not move). */
  readonly maxNodes?: number;
}

export const CLUSTER_NAME = "home-ops";
/** The Talos version every drawn world runs, and a TalosUpgrade's target. */
export const FROM = "v1.13.9";
export const TO = "v1.14.2";
/** The Kubernetes version every drawn world runs. */
export const K8S = "v1.35.2";
const CNPG_UID = "6f1d2c55-0000-4000-a000-00000000dst0";

/**
 * How big a seed's world may be: `full` draws 3–30 nodes and plans over all of them (the
 * documented campaign); `ci` draws 3–6 nodes and plans of at most 2 (the fixed budget CI runs,
 * every fault kind and controller event still drawn).
 */
export type Profile = "full" | "ci";

/** Draws the cluster: sizes skewed small (most seeds are 3–9 nodes), up to 30. */
export function drawShape(prng: Prng, profile: Profile = "full"): Shape {
  const r = prng.float();
  const nodes = profile === "ci"
    ? prng.int(3, 6)
    : r < 0.6
    ? prng.int(3, 9)
    : r < 0.9
    ? prng.int(10, 16)
    : prng.int(17, 30);
  // Three control planes (etcd keeps quorum while one is upgraded) when at least two workers
  // remain to take each other's pods during a drain (workloads are not scheduled on control
  // planes: with one worker, every drain deadlocks on its budgets); otherwise, or rarely, one
  // control plane, whose own gate can never pass (a legitimate shape, not a common one).
  const cps = nodes >= 5 && prng.chance(0.92) ? 3 : 1;
  const controlPlanes = Array.from({ length: cps }, (_, i) => `cp-${i + 1}`);
  const workers = Array.from({ length: nodes - cps }, (_, i) => `worker-${i + 1}`);
  const deployments = prng.int(1, Math.min(6, nodes));
  const pdbLayout: Record<string, PdbLayout> = {};
  for (let i = 0; i < deployments; i++) {
    const x = prng.float();
    pdbLayout[`app-${i}`] = x < 0.3
      ? "none"
      : x < 0.65
      ? "max-unavailable-1"
      : x < 0.97
      ? "min-available-half"
      : "zero-disruption";
  }
  const hosts = workers.length >= 3 ? workers : [...workers, ...controlPlanes];
  const databasePrimary = hosts.length >= 3 && prng.chance(0.5) ? prng.pick(hosts) : undefined;
  return { nodes, workers, controlPlanes, pdbLayout, databasePrimary };
}

function deployment(name: string, replicas: number, grace: number) {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace: "apps", labels: { app: name } },
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

function pdb(name: string, ns: string, spec: Record<string, unknown>) {
  return {
    apiVersion: "policy/v1",
    kind: "PodDisruptionBudget",
    metadata: { name, namespace: ns },
    spec,
  };
}

/** The database operator's objects: a 3-instance CNPG Cluster, its pods and its two budgets. */
function database(shape: Shape, hosts: readonly string[]): Record<string, unknown>[] {
  const primary = shape.databasePrimary!;
  const others = hosts.filter((h) => h !== primary).slice(0, 2);
  const placed = [primary, ...others];
  const owner = {
    apiVersion: "postgresql.cnpg.io/v1",
    kind: "Cluster",
    name: "pg",
    uid: CNPG_UID,
    controller: true,
  };
  const pods = placed.map((node, i) => {
    const role = i === 0 ? "primary" : "replica";
    return {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name: `pg-${i + 1}`,
        namespace: "database",
        labels: {
          "cnpg.io/cluster": "pg",
          "cnpg.io/instanceName": `pg-${i + 1}`,
          "cnpg.io/instanceRole": role,
          role,
        },
        ownerReferences: [owner],
      },
      spec: {
        nodeName: node,
        terminationGracePeriodSeconds: 120,
        containers: [{ name: "postgres", image: "ghcr.io/cloudnative-pg/postgresql:18.1" }],
      },
    };
  });
  return [
    {
      apiVersion: "postgresql.cnpg.io/v1",
      kind: "Cluster",
      metadata: { name: "pg", namespace: "database", uid: CNPG_UID },
      spec: { instances: 3 },
      status: {
        phase: "Cluster in healthy state",
        readyInstances: 3,
        instances: 3,
        currentPrimary: "pg-1",
      },
    },
    ...pods,
    pdb("pg-primary", "database", {
      minAvailable: 1,
      selector: { matchLabels: { "cnpg.io/cluster": "pg", "cnpg.io/instanceRole": "primary" } },
    }),
    pdb("pg", "database", {
      maxUnavailable: 1,
      selector: { matchLabels: { "cnpg.io/cluster": "pg", "cnpg.io/instanceRole": "replica" } },
    }),
  ];
}

/** The twin's cluster description for a shape; the PRNG draws timings and replica counts. */
export function describeShape(shape: Shape, prng: Prng): ClusterDescription {
  const node = (name: string, role: "controlplane" | "worker", i: number) => ({
    name,
    role,
    address: exampleNodeAddress(role, i),
    talosVersion: FROM,
    kubeletVersion: K8S,
    schematic: HOME_OPS_SCHEMATIC,
    rebootSeconds: prng.int(30, 150),
    installSeconds: prng.int(10, 60),
    pullSeconds: prng.int(5, 20),
  });
  const objects: Record<string, unknown>[] = [{
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
  }];
  for (const [name, layout] of Object.entries(shape.pdbLayout)) {
    // A budget of half the replicas over a single replica allows no disruption at all: that is
    // the `zero-disruption` layout, drawn on its own and rarely.
    const replicas = layout === "min-available-half" ? prng.int(2, 4) : prng.int(1, 4);
    objects.push(deployment(name, replicas, prng.pick([5, 30, 60])));
    const selector = { matchLabels: { app: name } };
    if (layout === "max-unavailable-1") {
      objects.push(pdb(name, "apps", { maxUnavailable: 1, selector }));
    }
    if (layout === "min-available-half") {
      objects.push(pdb(name, "apps", { minAvailable: "50%", selector }));
    }
    if (layout === "zero-disruption") {
      objects.push(pdb(name, "apps", { minAvailable: replicas, selector }));
    }
  }
  const hosts = shape.workers.length >= 3
    ? shape.workers
    : [...shape.workers, ...shape.controlPlanes];
  if (shape.databasePrimary) objects.push(...database(shape, hosts));
  return ClusterDescriptionSchema.parse({
    apiVersion: "cairn.dev/v1alpha1",
    kind: "ClusterDescription",
    metadata: { name: CLUSTER_NAME },
    spec: {
      kubernetesVersion: K8S,
      nodes: [
        ...shape.controlPlanes.map((n, i) => node(n, "controlplane", i + 1)),
        ...shape.workers.map((n, i) => node(n, "worker", i + 1)),
      ],
      installerImages: [FROM, TO].map((t) =>
        `factory.talos.dev/metal-installer/${HOME_OPS_SCHEMATIC}:${t}`
      ),
      objects,
    },
  });
}

/**
 * The health policy the plan binds: every node, workloads, budgets, etcd, Talos services. A plan
 * that moves the kubelet binds one that pins no kubelet version (`kubeletVersion: null`); one
 * that disrupts no node may leave etcd out (`etcd: false`: its reader judges what a disruption
 * would leave, which a single control plane never passes).
 */
export function policyText(
  shape: Shape,
  o: { kubeletVersion?: string | null; etcd?: boolean } = {},
): string {
  // Everything the text depends on: seeds of one size draw the same few texts, and writing the
  // YAML again per seed was about 0.4 % of a seed's CPU (issue 16).
  const key = JSON.stringify([
    shape.nodes,
    shape.controlPlanes,
    Boolean(shape.databasePrimary),
    // The default version, none pinned, or this one (a number never equals a version string).
    o.kubeletVersion === undefined ? 0 : o.kubeletVersion === null ? 1 : o.kubeletVersion,
    o.etcd === false,
  ]);
  return policyTexts.get(key, () => writePolicyText(shape, o));
}

const policyTexts = new ContentMemo<string>(64);

function writePolicyText(
  shape: Shape,
  o: { kubeletVersion?: string | null; etcd?: boolean },
): string {
  const all = shape.nodes;
  const bindings: Record<string, unknown>[] = [
    {
      name: "nodes-ready",
      reader: "nodes",
      requiredCoverage: all,
      freshnessSeconds: 60,
      timeoutSeconds: 20,
    },
    {
      name: "node-versions",
      reader: "node-versions",
      requiredCoverage: all,
      predicate: o.kubeletVersion === null
        ? { schematic: HOME_OPS_SCHEMATIC }
        : { schematic: HOME_OPS_SCHEMATIC, kubeletVersion: o.kubeletVersion ?? K8S },
    },
    { name: "workloads-ready", reader: "workloads", requiredCoverage: 1 },
    {
      name: "drain-feasible",
      reader: "pdb-feasibility",
      selection: { nodes: "all" },
      requiredCoverage: all,
      ...(shape.databasePrimary
        ? {
          operatorHandled: [{
            namespace: "database",
            name: "pg-primary",
            reason: "CNPG switches the primary over when its node is cordoned",
          }],
        }
        : {}),
    },
    ...(o.etcd === false ? [] : [{
      name: "etcd-healthy",
      reader: "talos-etcd",
      selection: { names: [...shape.controlPlanes] },
      requiredCoverage: shape.controlPlanes.length,
    }]),
    {
      name: "talos-services",
      reader: "talos-services",
      requiredCoverage: all,
      predicate: { services: ["apid", "kubelet", "containerd"] },
    },
  ];
  if (shape.databasePrimary) {
    bindings.push({
      name: "cnpg-instances-ready",
      reader: "kube-object",
      selection: { apiVersion: "postgresql.cnpg.io/v1", kind: "Cluster" },
      predicate: {
        cel: "has(status.readyInstances) && status.readyInstances == object.spec.instances",
      },
    });
  }
  return stringify({
    apiVersion: "cairn.dev/v1alpha1",
    kind: "HealthPolicy",
    metadata: { name: CLUSTER_NAME, cluster: CLUSTER_NAME },
    spec: { bindings },
  });
}

/** Bound files served from memory: the repository as the plan binds it, read at every check. */
export function memoryFiles(files: ReadonlyMap<string, Uint8Array>): BoundFileSource {
  return {
    describe: () => "dst memory repository",
    read: (path) =>
      Promise.resolve(
        files.has(path)
          ? { status: "read", bytes: files.get(path)! }
          : { status: "missing", detail: `${path} is not in the simulated repository` },
      ),
  };
}

const enc = new TextEncoder();

/** The address the drawn world gives a node (`cp-N`, `worker-N`). */
export function nodeAddress(n: string): string {
  return n.startsWith("cp-")
    ? exampleNodeAddress("controlplane", Number(n.slice(3)))
    : exampleNodeAddress("worker", Number(n.slice(7)));
}

/** A plan's `nodes:` block for `order`. */
export function nodesBlock(order: readonly string[]): string[] {
  return order.flatMap((n) => [
    `    - name: ${n}`,
    `      role: ${n.startsWith("cp-") ? "controlplane" : "worker"}`,
    `      address: ${nodeAddress(n)}`,
  ]);
}

/** TalosUpgrade plans: workers first in a drawn order, control planes last, sometimes a subset. */
export const TALOS_UPGRADE: PlanKindDriver = {
  kind: "TalosUpgrade",
  async draw(prng, shape, catalogue, { profile, maxNodes }) {
    const policy = enc.encode(policyText(shape));
    const workers = prng.shuffle(shape.workers);
    const cps = prng.shuffle(shape.controlPlanes);
    let order = [...workers, ...cps];
    // Some plans cover only part of the cluster (a canary), never an empty plan.
    if (order.length > 2 && prng.chance(0.2)) order = order.slice(0, prng.int(1, order.length - 1));
    if (profile === "ci") order = order.slice(0, 2);
    if (maxNodes !== undefined) order = order.slice(0, maxNodes);
    const verifySeconds = prng.pick([300, 600, 1200]);
    const deadlines: Record<string, [number, number]> = {
      pull: [300, 600],
      install: [600, 900],
      cordon: [30, 60],
      drain: [600, 900],
      reboot: [60, 900],
      verify: [60, verifySeconds],
      uncordon: [30, 60],
    };
    const image = `factory.talos.dev/metal-installer/${HOME_OPS_SCHEMATIC}:${TO}` +
      `@sha256:${HOME_OPS_INSTALLER_DIGEST}`;
    const text = [
      "apiVersion: cairn.dev/v1alpha1",
      "kind: TalosUpgrade",
      "metadata:",
      "  name: dst-talos",
      `  cluster: ${CLUSTER_NAME}`,
      "  author: dst@example.com",
      "  expires: 2027-01-30T00:00:00Z",
      "spec:",
      "  catalogue:",
      "    path: catalogue/talos.yaml",
      `    sha256: ${await sha256Hex(catalogue)}`,
      "  healthPolicy:",
      "    path: policies/dst.yaml",
      `    sha256: ${await sha256Hex(policy)}`,
      "  retry:",
      `    maxAttempts: ${prng.int(1, 3)}`,
      "  platform: metal",
      "  arch: amd64",
      "  kubernetes:",
      `    version: ${K8S}`,
      `    kubelet: ${K8S}`,
      "  hops:",
      `    - from: ${FROM}`,
      `      to: ${TO}`,
      "      rpcPath: lifecycle",
      "      installer:",
      `        image: ${image}`,
      `        schematic: ${HOME_OPS_SCHEMATIC}`,
      "  nodes:",
      ...nodesBlock(order),
      "  rollout:",
      "    maxParallel: 1",
      "  phases:",
      "    drainTimeoutSeconds: 600",
      "    rebootMode: default",
      "    deadlines:",
      ...Object.entries(deadlines).map(([p, [t, v]]) =>
        `      ${p}: { transportSeconds: ${t}, verificationSeconds: ${v} }`
      ),
      "  recovery:",
      "    - action: uncordonOwnedCordon",
      "",
    ].join("\n");
    return {
      kind: "TalosUpgrade",
      text,
      nodes: order,
      files: memoryFiles(
        new Map([["catalogue/talos.yaml", catalogue], ["policies/dst.yaml", policy]]),
      ),
    };
  },
  async bind(journal, p) {
    const bound = await bindPlan(journal, { ...p, ...DST_BINDING });
    return {
      digest: bound.digest,
      execute: (o) =>
        executePlan({ ...o, bound: bound as { plan: TalosUpgradePlan; digest: string } }),
    };
  },
  untrue(twin, op) {
    const running = twin.cluster.nodes.get(op.machine)?.runningVersion;
    return running === TO ? undefined : `the machine runs ${running}, not ${TO}`;
  },
};
