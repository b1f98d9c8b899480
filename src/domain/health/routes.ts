/**
 * Which routes a row-17 binding reads. The engine reads exactly these (`engine/health/
 * route_evidence.ts`) and the readers judge exactly these, so a server the selection names but
 * the round did not read is unreadable, never skipped.
 */
import type { Binding } from "./policy_schema.ts";
import { selectorMatches } from "./selector.ts";
import type { KubeObjectLike, RouteTarget } from "./types.ts";

type ObjectStoreBinding = Extract<Binding, { reader: "object-store-endpoint" }>;
type BrokerBinding = Extract<Binding, { reader: "broker-streams" }>;

/** The product's fixed health paths: a binding names a route, never a URL. */
const PRODUCT_PATH = { "ceph-rgw": "/", "nats-jetstream": "/healthz" } as const;

export function routeKey(t: RouteTarget): string {
  return `${t.kind}/${t.namespace}/${t.name}:${t.port}${t.path}`;
}

export function objectStoreTarget(b: ObjectStoreBinding): RouteTarget {
  return {
    namespace: b.route.namespace,
    kind: "service",
    name: b.route.service,
    port: b.route.port,
    path: PRODUCT_PATH[b.product],
  };
}

/** The broker's server pods as the Pod cache holds them, in name order. */
export function brokerPods(b: BrokerBinding, pods: readonly KubeObjectLike[]): KubeObjectLike[] {
  return pods.filter((p) =>
    p.metadata?.namespace === b.selection.namespace &&
    selectorMatches(b.selection.labelSelector, p.metadata?.labels)
  ).sort((x, y) => (x.metadata?.name ?? "").localeCompare(y.metadata?.name ?? ""));
}

export function brokerTarget(b: BrokerBinding, pod: KubeObjectLike): RouteTarget {
  return {
    namespace: b.selection.namespace,
    kind: "pod",
    name: pod.metadata?.name ?? "",
    port: b.selection.port,
    path: PRODUCT_PATH[b.product],
  };
}

/**
 * True when an answer is the API server's own (a `kind: Status` object: the proxy could not
 * reach the server, or access was refused), not the product's: that is no evidence of the
 * product's health either way.
 */
export function isProxyStatus(body: string): boolean {
  try {
    const o = JSON.parse(body) as { kind?: unknown; apiVersion?: unknown };
    return o.kind === "Status" && o.apiVersion === "v1";
  } catch {
    return false;
  }
}

/** Text safe to put in a report: printable ASCII, cut short (never a whole answer body). */
export function excerpt(s: string, max = 160): string {
  const clean = s.replace(/[^\x20-\x7e]/g, " ").trim();
  return clean.length > max ? clean.slice(0, max) + "…" : clean;
}
