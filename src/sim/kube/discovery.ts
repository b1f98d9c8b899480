/** Discovery documents: `/version`, `/api`, `/api/v1`, `/apis`, `/apis/<group>[/<version>]`. */
import { groupVersion, type ResourceType, type Store } from "./store.ts";

type R = Record<string, unknown>;

/** The resources the apiserver puts in the `all` category (`kubectl get all`). */
const CATEGORY_ALL = new Set([
  "/pods",
  "/services",
  "/replicationcontrollers",
  "apps/deployments",
  "apps/replicasets",
  "apps/statefulsets",
  "apps/daemonsets",
  "batch/jobs",
  "batch/cronjobs",
  "autoscaling/horizontalpodautoscalers",
]);

const VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];

function resourceList(store: Store, group: string, version: string): R {
  const resources: R[] = [];
  for (const t of store.types.values()) {
    if (t.group !== group || t.version !== version) continue;
    resources.push({
      name: t.plural,
      singularName: t.kind.toLowerCase(),
      namespaced: t.namespaced,
      kind: t.kind,
      verbs: t.verbs ?? VERBS,
      ...(t.shortNames ? { shortNames: t.shortNames } : {}),
      ...(CATEGORY_ALL.has(`${t.group}/${t.plural}`) ? { categories: ["all"] } : {}),
    });
    for (const sub of t.subresources ?? []) {
      resources.push(subresource(t, sub));
    }
  }
  return {
    kind: "APIResourceList",
    apiVersion: "v1",
    groupVersion: groupVersion({ group, version }),
    resources,
  };
}

function subresource(t: ResourceType, sub: string): R {
  if (sub === "eviction") {
    return {
      name: `${t.plural}/eviction`,
      singularName: "",
      namespaced: true,
      group: "policy",
      version: "v1",
      kind: "Eviction",
      verbs: ["create"],
    };
  }
  return {
    name: `${t.plural}/${sub}`,
    singularName: "",
    namespaced: t.namespaced,
    kind: t.kind,
    verbs: ["get", "patch", "update"],
  };
}

function groups(store: Store): R[] {
  const byGroup = new Map<string, Set<string>>();
  for (const t of store.types.values()) {
    if (t.group === "") continue;
    if (!byGroup.has(t.group)) byGroup.set(t.group, new Set());
    byGroup.get(t.group)!.add(t.version);
  }
  return [...byGroup].map(([name, versions]) => {
    const vs = [...versions].map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
    return { name, versions: vs, preferredVersion: vs[0] };
  });
}

/** Answers a discovery path, or undefined when the path is not a discovery document. */
export function discovery(store: Store, path: string, kubernetesVersion: string): R | undefined {
  if (path === "/version") {
    const [major, minor] = kubernetesVersion.slice(1).split(".");
    return {
      major,
      minor,
      gitVersion: kubernetesVersion,
      gitCommit: "0000000000000000000000000000000000000000",
      gitTreeState: "clean",
      buildDate: "2026-01-01T00:00:00Z",
      goVersion: "go1.25.0",
      compiler: "gc",
      platform: "linux/amd64",
    };
  }
  if (path === "/api") {
    return {
      kind: "APIVersions",
      versions: ["v1"],
      serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress: "127.0.0.1:6443" }],
    };
  }
  if (path === "/api/v1") return resourceList(store, "", "v1");
  if (path === "/apis") return { kind: "APIGroupList", apiVersion: "v1", groups: groups(store) };
  const m = /^\/apis\/([^/]+)(?:\/([^/]+))?$/.exec(path);
  if (!m) return undefined;
  const g = groups(store).find((x) => x.name === m[1]);
  if (!g) return undefined;
  if (!m[2]) return { kind: "APIGroup", apiVersion: "v1", ...g };
  return (g.versions as R[]).some((v) => v.version === m[2])
    ? resourceList(store, m[1]!, m[2])
    : undefined;
}
