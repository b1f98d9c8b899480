/**
 * What the twin's servers answer on the API server's proxy subresource
 * (`/api/v1/namespaces/NS/{pods|services}/NAME:PORT/proxy/PATH`). A product's health endpoint is
 * not a Kubernetes object, so the twin keeps its answers here: seeded from the cluster
 * description's `routes`, changed by tests (`set`) to make an object store or a broker server
 * unhealthy. A pod route answers only while its pod exists and runs, as the real proxy reaches
 * the pod's IP; a stopped pod or an unserved port is the proxy's own 503, a service without an
 * answer has no endpoints.
 */
import type { Obj, ResourceType, Store } from "./store.ts";

/** One route of the description (`spec.routes[]`). */
export interface RouteEntry {
  readonly namespace: string;
  readonly pod?: string | undefined;
  readonly service?: string | undefined;
  readonly port: string;
  readonly path: string;
  readonly status: number;
  readonly body: string;
}

/** The proxy target the API server was asked for. */
export interface RouteTarget {
  readonly namespace: string;
  readonly kind: "pod" | "service";
  readonly name: string;
  readonly port: string;
  readonly path: string;
}

export interface RouteAnswer {
  readonly status: number;
  readonly body: string;
  readonly contentType: string;
}

function keyOf(t: RouteTarget): string {
  return [t.namespace, t.kind, t.name, t.port, "/" + t.path.replace(/^\/+/, "")].join("\u0000");
}

function proxyFailure(message: string): RouteAnswer {
  const body = JSON.stringify({
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message,
    reason: "ServiceUnavailable",
    code: 503,
  });
  return { status: 503, body, contentType: "application/json" };
}

export class ProxyRoutes {
  readonly #answers = new Map<string, { status: number; body: string }>();
  /** Proxy GETs answered (the read-only routes are reads; nothing here mutates). */
  requests = 0;

  load(entries: readonly RouteEntry[]): void {
    for (const e of entries) {
      const kind = e.pod !== undefined ? "pod" : "service";
      const name = e.pod ?? e.service ?? "";
      this.set({ namespace: e.namespace, kind, name, port: e.port, path: e.path }, e);
    }
  }

  /** What the route answers from now on. */
  set(t: RouteTarget, answer: { status: number; body: string }): void {
    this.#answers.set(keyOf(t), { status: answer.status, body: answer.body });
  }

  /** The answer to one proxy GET, judged against the pods in `store` as they are now. */
  answer(store: Store, pods: ResourceType, t: RouteTarget): RouteAnswer {
    this.requests++;
    const held = this.#answers.get(keyOf(t));
    if (t.kind === "pod") {
      const pod = store.get(pods, t.namespace, t.name) as Obj | undefined;
      if (!pod) return { ...notFound(t), contentType: "application/json" };
      const phase = (pod.status as { phase?: string } | undefined)?.phase;
      if (phase !== "Running" || pod.metadata.deletionTimestamp !== undefined) {
        return proxyFailure(`error trying to reach service: pod ${t.name} is not running`);
      }
      if (!held) {
        return proxyFailure(`error trying to reach service: dial tcp: connection refused`);
      }
    } else if (!held) {
      return proxyFailure(`no endpoints available for service "${t.name}"`);
    }
    const json = held!.body.trimStart().startsWith("{");
    return { ...held!, contentType: json ? "application/json" : "application/xml" };
  }
}

function notFound(t: RouteTarget): { status: number; body: string } {
  return {
    status: 404,
    body: JSON.stringify({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: `pods "${t.name}" not found`,
      reason: "NotFound",
      code: 404,
    }),
  };
}

/** The proxy target of a request path, or undefined when the path is not a proxy route. */
export function parseProxyPath(pathname: string): RouteTarget | undefined {
  const m = /^\/api\/v1\/namespaces\/([^/]+)\/(pods|services)\/([^/]+)\/proxy(\/.*)?$/.exec(
    pathname,
  );
  if (!m) return undefined;
  const target = decodeURIComponent(m[3]!);
  // `name:port`, or `scheme:name:port` for services; the scheme is not modelled.
  const parts = target.split(":");
  const name = parts.length === 3 ? parts[1]! : parts[0]!;
  const port = parts.length >= 2 ? parts.at(-1)! : "";
  const path = (m[4] ?? "/").split("/").map(decodeURIComponent).join("/");
  return {
    namespace: decodeURIComponent(m[1]!),
    kind: m[2] === "pods" ? "pod" : "service",
    name,
    port,
    path,
  };
}
