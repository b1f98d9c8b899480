/**
 * The port's typed reads (nodes, pods, PodDisruptionBudgets) over its unstructured
 * `getObject` / `listObjects`: shared by `ClientNodeKube` and the in-process port
 * (`sim/inproc/kube.ts`), so both page, select and map these objects by the same rules.
 */
import type {
  Kube,
  KubeCallOptions,
  KubeList,
  KubeListOptions,
  KubeNode,
  KubePdb,
  KubePod,
  KubeResourceRef,
  PodRef,
} from "../../ports/kube.ts";
import { toKubeNode, toKubePdb, toKubePod } from "./map.ts";

export const NODES: KubeResourceRef = {
  group: "",
  version: "v1",
  plural: "nodes",
  namespaced: false,
};
export const PODS: KubeResourceRef = { group: "", version: "v1", plural: "pods", namespaced: true };
export const PDBS: KubeResourceRef = {
  group: "policy",
  version: "v1",
  plural: "poddisruptionbudgets",
  namespaced: true,
};

/** What the typed reads need of a client. */
export type ObjectReads = Pick<Kube, "getObject" | "listObjects">;

export async function readNode(
  kube: ObjectReads,
  name: string,
  opts?: KubeCallOptions,
): Promise<KubeNode | undefined> {
  const o = await kube.getObject(NODES, name, undefined, opts);
  return o && toKubeNode(o);
}

export async function readNodeList(
  kube: ObjectReads,
  opts: { readonly labelSelector?: string },
): Promise<KubeList<KubeNode>> {
  const l = await kube.listObjects(NODES, opts);
  return { items: l.items.map(toKubeNode), resourceVersion: l.resourceVersion };
}

/** Pods, on one node when `onNode` is given (added to any field selector the caller has). */
export async function readPodList(
  kube: ObjectReads,
  onNode: string | undefined,
  opts: KubeListOptions,
): Promise<KubeList<KubePod>> {
  const fields = [onNode !== undefined ? `spec.nodeName=${onNode}` : "", opts.fieldSelector ?? ""]
    .filter((s) => s !== "").join(",");
  const l = await kube.listObjects(PODS, {
    ...opts,
    ...(fields !== "" ? { fieldSelector: fields } : {}),
  });
  return { items: l.items.map(toKubePod), resourceVersion: l.resourceVersion };
}

export async function readPod(
  kube: ObjectReads,
  ref: PodRef,
  opts?: KubeCallOptions,
): Promise<KubePod | undefined> {
  const o = await kube.getObject(PODS, ref.name, ref.namespace, opts);
  return o && toKubePod(o);
}

export async function readPdbList(
  kube: ObjectReads,
  opts: KubeListOptions,
): Promise<KubeList<KubePdb>> {
  const l = await kube.listObjects(PDBS, opts);
  return { items: l.items.map(toKubePdb), resourceVersion: l.resourceVersion };
}
