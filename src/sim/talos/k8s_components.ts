/**
 * The Kubernetes components a Talos machine runs, as the twin models them (issue 14 part 3): the
 * machine configuration names each component's image (`machine.kubelet.image`,
 * `cluster.apiServer.image`, `cluster.controllerManager.image`, `cluster.scheduler.image`,
 * `cluster.proxy.image`); the kubelet runs the control plane's static pods from it. When the
 * running configuration changes a component's image, the kubelet replaces that static pod (the
 * new pod is first not ready, then ready after `restartSeconds`) or restarts itself at the new
 * version; the node reports each pod as Talos's `StaticPodStatuses.kubernetes.talos.dev`
 * (namespace `k8s`, id `kube-system/<component>-<node>`, the pod status as YAML) and to
 * Kubernetes as a mirror pod (through `NodeStatusSink.staticPods`). The machine configuration
 * itself is served as `MachineConfigs.config.talos.dev` (namespace `config`, id `v1alpha1`), the
 * resource `talosctl upgrade-k8s` reads before patching.
 *
 * Fault `static-pod-not-ready` (point `talos.staticPod`, target a node, `params.component`,
 * default kube-apiserver): the replaced pod starts at the new version and never becomes ready.
 */
import { parseAllDocuments, stringify } from "yaml";
import type { SimClock } from "../clock.ts";
import type { FaultSchedule } from "../faults.ts";

/** The static pods of a control plane, in the order Talos upgrades them. */
export const STATIC_COMPONENTS = [
  "kube-apiserver",
  "kube-controller-manager",
  "kube-scheduler",
] as const;
export type StaticComponent = (typeof STATIC_COMPONENTS)[number];

/** Where each component's image is in a v1alpha1 machine configuration. */
export const IMAGE_PATHS: Readonly<Record<StaticComponent | "kubelet" | "kube-proxy", string[]>> = {
  "kube-apiserver": ["cluster", "apiServer", "image"],
  "kube-controller-manager": ["cluster", "controllerManager", "image"],
  "kube-scheduler": ["cluster", "scheduler", "image"],
  "kube-proxy": ["cluster", "proxy", "image"],
  kubelet: ["machine", "kubelet", "image"],
};

/** Image repositories the twin writes into fresh configurations (Talos's defaults). */
export const IMAGE_REPOSITORIES: Readonly<Record<keyof typeof IMAGE_PATHS, string>> = {
  "kube-apiserver": "registry.k8s.io/kube-apiserver",
  "kube-controller-manager": "registry.k8s.io/kube-controller-manager",
  "kube-scheduler": "registry.k8s.io/kube-scheduler",
  "kube-proxy": "registry.k8s.io/kube-proxy",
  kubelet: "ghcr.io/siderolabs/kubelet",
};

/** One static pod as its node reports it. */
export interface StaticPodReport {
  readonly component: StaticComponent;
  readonly node: string;
  readonly image: string;
  readonly version: string;
  readonly ready: boolean;
  /** Bumped on every replacement (Talos's `talos.dev/config-version` annotation). */
  readonly configVersion: number;
  readonly startedAtMs: number;
}

/** The tag of an image reference (`repo:tag[@digest]`); "" when it has none. */
export function imageTag(image: string): string {
  const noDigest = image.split("@")[0]!;
  const slash = noDigest.lastIndexOf("/");
  const colon = noDigest.lastIndexOf(":");
  return colon > slash ? noDigest.slice(colon + 1) : "";
}

/**
 * The configuration with each component image a node of `role` runs set (the kubelet's on every
 * node, the control plane's and kube-proxy's on control planes); the rest is kept.
 */
export function withComponentImages(config: string, o: {
  readonly role: "controlplane" | "worker";
  readonly kubernetesVersion: string;
  readonly kubeletVersion: string;
}): string {
  const img = (c: keyof typeof IMAGE_PATHS, v: string) => `${IMAGE_REPOSITORIES[c]}:${v}`;
  const docs = parseAllDocuments(config);
  const doc = docs.find((d) => "contents" in d && d.get("version") === "v1alpha1") ?? docs[0];
  if (!doc || !("contents" in doc)) return config;
  doc.setIn(IMAGE_PATHS.kubelet, img("kubelet", o.kubeletVersion));
  if (o.role === "controlplane") {
    for (const c of [...STATIC_COMPONENTS, "kube-proxy"] as const) {
      doc.setIn(IMAGE_PATHS[c], img(c, o.kubernetesVersion));
    }
  }
  return docs.map((d) => d.toString()).join("---\n");
}

/** The image a configuration names for a component; undefined when it names none. */
export function configuredImage(
  config: string,
  component: keyof typeof IMAGE_PATHS,
): string | undefined {
  let images = configuredImages.get(config);
  if (!images) {
    images = imagesOf(config);
    configuredImages.set(config, images);
    if (configuredImages.size > MEMO_MAX) {
      configuredImages.delete(configuredImages.keys().next().value!);
    }
  }
  return images[component];
}

/**
 * Every component's image of a configuration, by its text: a node asks for each component at
 * every configuration change, and the campaign's nodes share a handful of texts, so each text is
 * parsed once (a YAML parse was most of a twin apply's CPU, issue 16). A string holds no state to
 * corrupt; bounded, the oldest text goes first.
 */
const configuredImages = new Map<string, Readonly<Record<string, string | undefined>>>();
const MEMO_MAX = 64;

function imagesOf(config: string): Readonly<Record<string, string | undefined>> {
  const docs = parseAllDocuments(config);
  const out: Record<string, string | undefined> = {};
  for (const [component, path] of Object.entries(IMAGE_PATHS)) {
    for (const doc of docs) {
      if (!("contents" in doc) || doc.errors.length > 0) continue;
      const v = doc.getIn(path);
      if (typeof v === "string") {
        out[component] = v;
        break;
      }
    }
  }
  return out;
}

/** Receives what the node's kubelet reports (mirror pods, its own version). */
export interface ComponentSink {
  staticPods(node: string, pods: readonly StaticPodReport[]): void;
  kubeletRestarted(node: string, version: string): void;
}

/** The components of one machine. */
export class NodeComponents {
  readonly pods = new Map<StaticComponent, StaticPodReport>();
  #generation = 0;

  constructor(
    readonly node: string,
    readonly role: "controlplane" | "worker",
    private readonly ctx: {
      readonly clock: SimClock;
      readonly faults: FaultSchedule;
      readonly sink: ComponentSink;
      /** Virtual seconds a replaced static pod or the kubelet takes to be ready. */
      readonly restartSeconds: number;
    },
    config: string,
  ) {
    if (role !== "controlplane") return;
    for (const c of STATIC_COMPONENTS) {
      const image = configuredImage(config, c);
      if (!image) continue;
      this.pods.set(c, {
        component: c,
        node,
        image,
        version: imageTag(image),
        ready: true,
        configVersion: 1,
        startedAtMs: ctx.clock.now(),
      });
    }
  }

  /** Reports every pod (start-up sync). */
  report(): void {
    if (this.pods.size > 0) this.ctx.sink.staticPods(this.node, [...this.pods.values()]);
  }

  /**
   * The running configuration changed: each static pod whose image moved is replaced (not ready
   * at once, ready after `restartSeconds` unless a fault keeps it down); a new kubelet image
   * restarts the kubelet, which then reports its new version.
   */
  configChanged(config: string, kubeletVersion: string): void {
    const gen = ++this.#generation;
    const { clock, faults, sink, restartSeconds } = this.ctx;
    for (const [c, pod] of this.pods) {
      const image = configuredImage(config, c);
      if (!image || image === pod.image) continue;
      const stuck = faults.peek("talos.staticPod", this.node);
      const keepsDown = stuck?.kind === "static-pod-not-ready" &&
        String(stuck.params?.["component"] ?? "kube-apiserver") === c;
      if (keepsDown) faults.take("talos.staticPod", this.node, clock.now());
      const replaced: StaticPodReport = {
        ...pod,
        image,
        version: imageTag(image),
        ready: false,
        configVersion: pod.configVersion + 1,
        startedAtMs: clock.now(),
      };
      this.pods.set(c, replaced);
      sink.staticPods(this.node, [replaced]);
      if (keepsDown) continue;
      clock.schedule(restartSeconds * 1000, () => {
        const now = this.pods.get(c);
        if (now?.configVersion !== replaced.configVersion) return;
        const ready = { ...now, ready: true };
        this.pods.set(c, ready);
        sink.staticPods(this.node, [ready]);
      });
    }
    const kubelet = configuredImage(config, "kubelet");
    if (kubelet && imageTag(kubelet) && imageTag(kubelet) !== kubeletVersion) {
      const version = imageTag(kubelet);
      clock.schedule(restartSeconds * 1000, () => {
        if (gen === this.#generation) sink.kubeletRestarted(this.node, version);
      });
    }
  }

  /** `StaticPodStatuses.kubernetes.talos.dev` of this node, by id; undefined when none. */
  staticPodStatus(id: string): { version: string; yaml: string } | undefined {
    const pod = [...this.pods.values()].find((p) => id === `kube-system/${p.component}-${p.node}`);
    if (!pod) return undefined;
    return { version: String(pod.configVersion), yaml: statusYaml(pod) };
  }
}

/**
 * A pod's status as Talos serves it, written once per report: a report is never changed in place
 * (a change is a new report), and the executor reads the status of every control plane's pods at
 * each poll.
 */
const statusTexts = new WeakMap<StaticPodReport, string>();

function statusYaml(pod: StaticPodReport): string {
  let yaml = statusTexts.get(pod);
  if (yaml === undefined) {
    yaml = stringify({
      phase: "Running",
      conditions: [{ type: "Ready", status: pod.ready ? "True" : "False" }],
      containerStatuses: [{
        name: pod.component,
        image: pod.image,
        ready: pod.ready,
        started: true,
        state: { running: { startedAt: new Date(pod.startedAtMs).toISOString() } },
      }],
    });
    statusTexts.set(pod, yaml);
  }
  return yaml;
}
