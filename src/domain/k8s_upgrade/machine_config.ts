/**
 * Where a Talos v1alpha1 machine configuration names each Kubernetes component's image, and the
 * one edit a KubernetesUpgrade makes to it: that image's tag, every other byte's meaning kept
 * (the document is re-serialised; other documents of a multi-document configuration are kept).
 * `talosctl upgrade-k8s` patches the same fields (`pkg/cluster/kubernetes/talos_managed.go`).
 * Pure; the configuration holds secrets, so callers record its digest, never its text.
 */
import { parseAllDocuments } from "yaml";

/**
 * The components a KubernetesUpgrade changes, in rollout order. kube-proxy's image is named by
 * each control plane's configuration (`cluster.proxy.image`, from which Talos renders its
 * DaemonSet manifest); the DaemonSet itself is moved in the cluster (engine/k8s_upgrade/
 * kube_proxy_step.ts).
 */
export type UpgradeComponent =
  | "kube-apiserver"
  | "kube-controller-manager"
  | "kube-scheduler"
  | "kube-proxy"
  | "kubelet";

const PATHS: Readonly<Record<UpgradeComponent, readonly string[]>> = {
  "kube-apiserver": ["cluster", "apiServer", "image"],
  "kube-controller-manager": ["cluster", "controllerManager", "image"],
  "kube-scheduler": ["cluster", "scheduler", "image"],
  "kube-proxy": ["cluster", "proxy", "image"],
  kubelet: ["machine", "kubelet", "image"],
};

/** The configuration path of a component's image, as text (`cluster.apiServer.image`). */
export function imagePath(c: UpgradeComponent): string {
  return PATHS[c].join(".");
}

function v1alpha1(config: string) {
  const docs = parseAllDocuments(config);
  const doc = docs.find((d) =>
    "contents" in d && d.errors.length === 0 && d.get("version") === "v1alpha1"
  );
  return { docs, doc: doc && "contents" in doc ? doc : undefined };
}

/** The image the configuration names for `c`; undefined when it names none. */
export function componentImage(config: string, c: UpgradeComponent): string | undefined {
  const v = v1alpha1(config).doc?.getIn(PATHS[c] as string[]);
  return typeof v === "string" ? v : undefined;
}

/** `repo:tag[@digest]` with the tag replaced by `tag` (and any digest dropped). */
export function retag(image: string, tag: string): string {
  const noDigest = image.split("@")[0]!;
  const slash = noDigest.lastIndexOf("/");
  const colon = noDigest.lastIndexOf(":");
  return `${colon > slash ? noDigest.slice(0, colon) : noDigest}:${tag}`;
}

/** The configuration with `c`'s image set to `image`; undefined when it names no image for `c`. */
export function withComponentImage(
  config: string,
  c: UpgradeComponent,
  image: string,
): string | undefined {
  const { docs, doc } = v1alpha1(config);
  if (!doc || typeof doc.getIn(PATHS[c] as string[]) !== "string") return undefined;
  doc.setIn(PATHS[c] as string[], image);
  return docs.map((d) => d.toString()).join("---\n");
}
