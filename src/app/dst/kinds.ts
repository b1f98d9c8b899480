/**
 * The plan kinds a campaign draws (issue 16: "random plans of every executable kind"): a
 * TalosUpgrade (`world.ts`), a KubernetesUpgrade (control-plane components one node at a time,
 * then the kubelets) and a ConfigApply (a time-server change applied at once, or an etcd change
 * staged and activated by a reboot of its own). Each binds and runs through its own executor, and
 * says what a completed operation of its kind claims of the machine (invariant 6).
 */
import { parse } from "yaml";
import { componentImage, type UpgradeComponent } from "../../domain/k8s_upgrade/machine_config.ts";
import { ContentMemo } from "../../domain/content_memo.ts";
import { sha256Hex } from "../../domain/plan/digest.ts";
import { bindConfigApply, executeConfigApply } from "../../engine/config_apply/run_config_apply.ts";
import { bindKubernetesUpgrade, executeKubernetesUpgrade } from "../../engine/k8s_upgrade/run.ts";
import { COMPONENT_UPGRADE } from "./component_kind.ts";
import type { Prng } from "./prng.ts";
import {
  CLUSTER_NAME,
  DST_BINDING,
  FROM,
  K8S,
  memoryFiles,
  nodesBlock,
  type PlanKindDriver,
  policyText,
  TALOS_UPGRADE,
  TO,
} from "./world.ts";

const enc = new TextEncoder();

/** The Kubernetes version a KubernetesUpgrade moves to (the catalogue allows it on FROM). */
export const K8S_TO = "v1.36.0";

/** How a drawn ConfigApply changes the machines. */
export const CONFIG_CHANGES = {
  /** Activates at once, no reboot (any node). */
  ntp: {
    path: "talos/dst/ntp-patch.yaml",
    text: "machine:\n  time:\n    servers:\n      - pool.ntp.org\n",
    mode: "noReboot",
    activation: "immediate",
  },
  /** etcd keeps its arguments until it restarts: staged, then a reboot of its own (v1.14+). */
  etcd: {
    path: "talos/dst/etcd-patch.yaml",
    text: 'cluster:\n  etcd:\n    extraArgs:\n      election-timeout: "10000"\n',
    mode: "staged",
    activation: "explicitActivation",
  },
} as const;

function header(kind: string, name: string, catalogue: string, policy: string): string[] {
  return [
    "apiVersion: cairn.dev/v1alpha1",
    `kind: ${kind}`,
    "metadata:",
    `  name: ${name}`,
    `  cluster: ${CLUSTER_NAME}`,
    "  author: dst@example.com",
    "  expires: 2027-01-30T00:00:00Z",
    "spec:",
    "  catalogue:",
    "    path: catalogue/talos.yaml",
    `    sha256: ${catalogue}`,
    "  healthPolicy:",
    "    path: policies/dst.yaml",
    `    sha256: ${policy}`,
  ];
}

/** At most `n` of `xs` (a canary) when the draw says so, never none. */
function some<T>(prng: Prng, xs: readonly T[], max: number | undefined): T[] {
  let out = [...xs];
  if (out.length > 1 && prng.chance(0.3)) out = out.slice(0, prng.int(1, out.length - 1));
  return max === undefined ? out : out.slice(0, Math.max(1, max));
}

/**
 * KubernetesUpgrade plans: every control plane (their components move one node at a time), then
 * some workers' kubelets. The world models the components (static pods, kubelets, the inventory).
 */
export const KUBERNETES_UPGRADE: PlanKindDriver = {
  kind: "KubernetesUpgrade",
  async draw(prng, shape, catalogue, { profile, maxNodes }) {
    // The kubelet moves: a policy that pinned it would fail every post-gate after the first.
    const policy = enc.encode(policyText(shape, { kubeletVersion: null }));
    const cps = prng.shuffle(shape.controlPlanes);
    const workers = some(
      prng,
      prng.shuffle(shape.workers),
      profile === "ci" ? Math.max(0, 2 - cps.length) : undefined,
    );
    let order = profile === "ci" && cps.length > 1 ? cps : [...cps, ...workers];
    if (maxNodes !== undefined) order = order.slice(0, maxNodes);
    const cp = prng.pick([300, 600, 900]);
    const text = [
      ...header(
        "KubernetesUpgrade",
        "dst-kubernetes",
        await sha256Hex(catalogue),
        await sha256Hex(policy),
      ),
      "  retry:",
      `    maxAttempts: ${prng.int(1, 3)}`,
      `  talosVersion: ${FROM}`,
      `  from: ${K8S}`,
      `  to: ${K8S_TO}`,
      "  nodes:",
      ...nodesBlock(order),
      "  rollout:",
      "    maxParallel: 1",
      "  phases:",
      "    deadlines:",
      `      controlPlane: { transportSeconds: 120, verificationSeconds: ${cp} }`,
      `      kubelet: { transportSeconds: 120, verificationSeconds: ${prng.pick([300, 600])} }`,
      "  recovery: []",
      "",
    ].join("\n");
    const restartSeconds = prng.int(10, 60);
    return {
      kind: "KubernetesUpgrade",
      text,
      nodes: order,
      files: memoryFiles(
        new Map([["catalogue/talos.yaml", catalogue], ["policies/dst.yaml", policy]]),
      ),
      editDescription: (d) => {
        d.spec.kubernetesComponents = {
          inventory: "present",
          restartSeconds,
          deprecatedApiRequests: [],
        };
      },
    };
  },
  async bind(journal, p) {
    const bound = await bindKubernetesUpgrade(journal, { ...p, ...DST_BINDING });
    return {
      digest: bound.digest,
      execute: (o) => executeKubernetesUpgrade({ ...o, bound }),
    };
  },
  untrue(twin, op) {
    const machine = twin.cluster.nodes.get(op.machine);
    const component = op.step.split("/k8s/")[1];
    if (!machine || !component) return `no component step ${op.step}`;
    if (component === "kube-proxy") {
      // Its operation changes the control plane's configuration (the last one's also rolls the
      // DaemonSet, which the twin's rollout follows): the configuration the machine runs names it.
      const image = componentImage(machine.machineConfig.active, "kube-proxy");
      return image?.endsWith(`:${K8S_TO}`)
        ? undefined
        : `its configuration names kube-proxy ${image ?? "nowhere"}`;
    }
    if (component === "kubelet") {
      return machine.kubeletVersion === K8S_TO
        ? undefined
        : `its kubelet runs ${machine.kubeletVersion}, not ${K8S_TO}`;
    }
    const pod = machine.k8s?.pods.get(component as never);
    if (pod?.version === K8S_TO && pod.ready) return undefined;
    return `${component} is ${pod ? `${pod.version}, ready=${pod.ready}` : "absent"}`;
  },
  taken(twin, op) {
    const machine = twin.cluster.nodes.get(op.machine);
    const component = op.step.split("/k8s/")[1] as UpgradeComponent | undefined;
    if (!machine || !component) return `no component step ${op.step}`;
    const image = storedImage(machine.machineConfig.persistent, component);
    return image?.endsWith(`:${K8S_TO}`)
      ? undefined
      : `${op.machine}'s stored configuration names ${component} ${image ?? "nowhere"}`;
  },
};

/** The image a stored document names for a component, parsed once per document text. */
const storedImages = new ContentMemo<string | undefined>(256);
function storedImage(config: string, component: UpgradeComponent): string | undefined {
  return storedImages.get(
    `${component}\u0000${config}`,
    () => componentImage(config, component),
  );
}

/**
 * ConfigApply plans: a time-server change on some nodes (applied at once), or an etcd change on
 * the control planes (staged, then activated by a reboot of its own; Talos v1.14 worlds).
 */
export const CONFIG_APPLY: PlanKindDriver = {
  kind: "ConfigApply",
  async draw(prng, shape, catalogue, { profile, maxNodes }) {
    const policy = enc.encode(policyText(shape));
    const change = shape.controlPlanes.length > 1 && prng.chance(0.4)
      ? CONFIG_CHANGES.etcd
      : CONFIG_CHANGES.ntp;
    const staged = change === CONFIG_CHANGES.etcd;
    const candidates = staged
      ? prng.shuffle(shape.controlPlanes)
      : [...prng.shuffle(shape.workers), ...prng.shuffle(shape.controlPlanes)];
    let order = some(prng, candidates, profile === "ci" ? 2 : undefined);
    if (maxNodes !== undefined) order = order.slice(0, maxNodes);
    const patch = enc.encode(change.text);
    const talos = staged ? TO : FROM;
    const text = [
      ...header("ConfigApply", "dst-config", await sha256Hex(catalogue), await sha256Hex(policy)),
      "  retry:",
      `    maxAttempts: ${prng.int(1, 3)}`,
      `  talosVersion: ${talos}`,
      `  mode: ${change.mode}`,
      `  activation: ${change.activation}`,
      "  config:",
      `    path: ${change.path}`,
      `    sha256: ${await sha256Hex(patch)}`,
      "  nodes:",
      ...nodesBlock(order),
      "  rollout:",
      "    maxParallel: 1",
      "  phases:",
      "    deadlines:",
      `      apply: { transportSeconds: 60, verificationSeconds: ${prng.pick([300, 600])} }`,
      "  recovery: []",
      "",
    ].join("\n");
    return {
      kind: "ConfigApply",
      text,
      nodes: order,
      files: memoryFiles(
        new Map([
          ["catalogue/talos.yaml", catalogue],
          ["policies/dst.yaml", policy],
          [change.path, patch],
        ]),
      ),
      // A staged change needs a Talos that stages (v1.14): the whole world runs it.
      ...(staged
        ? {
          editDescription: (d) => {
            for (const n of d.spec.nodes) n.talosVersion = TO;
          },
        }
        : {}),
    };
  },
  async bind(journal, p) {
    const bound = await bindConfigApply(journal, { ...p, ...DST_BINDING });
    return {
      digest: bound.digest,
      execute: (o) => executeConfigApply({ ...o, bound }),
    };
  },
  untrue(twin, op) {
    const mc = twin.cluster.nodes.get(op.machine)?.machineConfig;
    if (!mc) return "no machine";
    const etcd =
      (parse(mc.active) as { cluster?: { etcd?: { extraArgs?: Record<string, unknown> } } })
        ?.cluster?.etcd?.extraArgs?.["election-timeout"];
    // Which change the plan made is on the machine: a changed time server runs, or etcd's
    // argument is in the document the machine booted.
    if (mc.runningTimeServers.join(",") === "pool.ntp.org" || etcd === "10000") return undefined;
    return `time servers ${mc.runningTimeServers.join(",")}, etcd election-timeout ${etcd}`;
  },
};

/**
 * The kinds a seed draws from, each with its share: nearly half TalosUpgrade (the kind with the
 * most phases and faults), a fifth each KubernetesUpgrade and ConfigApply, the rest a
 * ComponentUpgrade (`component_kind.ts`; it sends nothing, so fewer seeds cover it).
 */
export const PLAN_KINDS: ReadonlyArray<{ driver: PlanKindDriver; share: number }> = [
  { driver: TALOS_UPGRADE, share: 0.45 },
  { driver: KUBERNETES_UPGRADE, share: 0.2 },
  { driver: CONFIG_APPLY, share: 0.2 },
  { driver: COMPONENT_UPGRADE, share: 0.15 },
];

/** The kind a draw `x` in [0, 1) lands on. */
export function kindAt(x: number): PlanKindDriver {
  let acc = 0;
  for (const k of PLAN_KINDS) {
    acc += k.share;
    if (x < acc) return k.driver;
  }
  return PLAN_KINDS.at(-1)!.driver;
}

/** A kind by name (scenarios and the crash sweep pin one). */
export function kindNamed(name: string): PlanKindDriver {
  const k = PLAN_KINDS.find((k) => k.driver.kind === name);
  if (!k) throw new RangeError(`no plan kind ${name}`);
  return k.driver;
}
