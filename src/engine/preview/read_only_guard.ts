/**
 * The preview's read-only guard: the Kubernetes and Talos ports the preview reads with, wrapped so
 * every mutating call is refused before anything is sent (a typed `PreviewWriteRefused` error)
 * and counted. The preview report's read-only row and its write count come from this count, not
 * from a statement about what the preview code intends to call. Every port method is listed
 * explicitly, so a method added to a port must be classified here before this compiles.
 */
import { CairnError } from "../../domain/errors.ts";
import type { Kube } from "../../ports/kube.ts";
import type { Talos } from "../../ports/talos.ts";

/** A mutating call the guard refused. */
export interface RefusedWrite {
  readonly port: "kube" | "talos";
  readonly call: string;
  readonly target: string;
}

/** The guarded ports and what they refused. */
export interface ReadOnlyCluster {
  readonly kube: Kube;
  readonly talos: Talos;
  /** Every mutating call attempted through the guard, in order; none of them was sent. */
  refused(): readonly RefusedWrite[];
}

function nameOf(body: Readonly<Record<string, unknown>>): string {
  const m = body["metadata"];
  return m && typeof m === "object" ? String((m as Record<string, unknown>)["name"] ?? "") : "";
}

/** Wraps `c` so that reads pass through and every mutation is refused and counted. */
export function readOnlyGuard(c: { readonly kube: Kube; readonly talos: Talos }): ReadOnlyCluster {
  const refused: RefusedWrite[] = [];
  // Counted and refused before the wrapped port is touched: nothing reaches the cluster.
  const refuse = (port: RefusedWrite["port"], call: string, target: string): Promise<never> => {
    refused.push({ port, call, target });
    return Promise.reject(
      new CairnError({
        reason: "PreviewWriteRefused",
        message:
          `the preview is read-only: ${port} ${call} on ${target} was refused, nothing was sent`,
      }),
    );
  };
  const { kube: k, talos: t } = c;
  const kube: Kube = {
    serverVersion: () => k.serverVersion(),
    requestedDeprecatedApis: (opts) => k.requestedDeprecatedApis(opts),
    getNode: (name, opts) => k.getNode(name, opts),
    listNodes: (opts) => k.listNodes(opts),
    listPods: (onNode, opts) => k.listPods(onNode, opts),
    getPod: (ref, opts) => k.getPod(ref, opts),
    listPdbs: (opts) => k.listPdbs(opts),
    getObject: (ref, name, namespace, opts) => k.getObject(ref, name, namespace, opts),
    listObjects: (ref, opts) => k.listObjects(ref, opts),
    // A GET through the proxy subresource: the health readers' named read-only routes.
    proxyGet: (target, opts) => k.proxyGet(target, opts),
    watch: (ref, opts, onEvent) => k.watch(ref, opts, onEvent),
    cordon: (node) => refuse("kube", "cordon", node),
    uncordon: (node) => refuse("kube", "uncordon", node),
    evict: (pod) => refuse("kube", "evict", `${pod.namespace}/${pod.name}`),
    setContainerImage: (ref, namespace, name) =>
      refuse("kube", "patch", `${ref.plural} ${namespace}/${name}`),
    createObject: (ref, namespace, body) =>
      refuse("kube", "create", `${ref.plural} ${namespace ?? ""}/${nameOf(body)}`),
  };
  const talos: Talos = {
    version: (node, opts) => t.version(node, opts),
    serviceList: (node, opts) => t.serviceList(node, opts),
    etcdMembers: (node, opts) => t.etcdMembers(node, opts),
    etcdStatus: (node, opts) => t.etcdStatus(node, opts),
    bootId: (node, opts) => t.bootId(node, opts),
    resource: (node, ref, opts) => t.resource(node, ref, opts),
    pull: (node) => refuse("talos", "pull", node),
    upgrade: (node) => refuse("talos", "upgrade", node),
    legacyUpgrade: (node) => refuse("talos", "legacyUpgrade", node),
    reboot: (node) => refuse("talos", "reboot", node),
    applyConfiguration: (node) => refuse("talos", "applyConfiguration", node),
    close: () => t.close(),
  };
  return { kube, talos, refused: () => refused.slice() };
}

/** Whether `e` is the guard's refusal. */
export function isWriteRefusal(e: unknown): e is CairnError {
  return e instanceof CairnError && e.reason === "PreviewWriteRefused";
}
