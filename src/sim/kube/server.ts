/**
 * The Kubernetes API server simulator: real HTTPS on loopback (node:https only, so the twin can
 * run it under Node as well as Deno), client certificates issued by the twin's CA or a bearer
 * token, discovery, CRUD + watch over the store, patches, server-side apply and eviction.
 */
import { createServer, type Server } from "node:https";
import { keepIdleConnections } from "../idle_connections.ts";
import type { IncomingMessage, ServerResponse } from "node:http";
import { writeFileSync } from "node:fs";
import { Buffer } from "node:buffer";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import type { SimClock } from "../clock.ts";
import type { FaultSchedule } from "../faults.ts";
import type { ClusterDescription } from "../cluster_description.ts";
import { Controllers, type NodeInfoFacts } from "./controllers.ts";
import { discovery } from "./discovery.ts";
import { evictPod, statusBody } from "./eviction.ts";
import { loadDescription } from "./load.ts";
import { deprecatedApiMetrics, servedVersion } from "./bootstrap.ts";
import { parseProxyPath, type RouteTarget } from "./proxy_routes.ts";
import { applyManaged, recordUpdate, SsaConflict } from "./ssa.ts";
import { isLease, leaseRefusal } from "./lease.ts";
import { jsonPatch, mergePatch, PatchError, strategicMerge } from "./patch.ts";
import { parseFieldSelector, parseLabelSelector, SelectorError } from "./selectors.ts";
import { defaultWorkload } from "./defaults.ts";
import { includeObjectOf, toTable, wantsTable } from "./table.ts";
import { GoneError, type Obj, type ResourceType, Store, type StoredEvent } from "./store.ts";

type R = Record<string, unknown>;

export interface KubeSimTls {
  readonly caPem: string;
  readonly certPem: string;
  readonly keyPem: string;
}

export interface KubeSimOptions {
  readonly clock: SimClock;
  readonly faults: FaultSchedule;
  readonly description: ClusterDescription;
  readonly tls: KubeSimTls;
  readonly port?: number;
  readonly host?: string;
  /** Accepted in `Authorization: Bearer` besides client certificates issued by the CA. */
  readonly token?: string;
  /** Virtual milliseconds the clock advances at each request (lets real clients drive time). */
  readonly advanceOnRequestMs?: number;
  /** Watch history: at least this many events are kept (trimmed in batches); older versions get 410. */
  readonly historySize?: number;
}

/** Request counters; `mutating` counts every write (create/update/patch/delete/evict). */
export interface KubeSimStats {
  total: number;
  mutating: number;
  byVerb: Record<string, number>;
  evictions: { accepted: number; blocked: number; failed: number };
}

export interface KubeSim {
  readonly url: string;
  readonly port: number;
  readonly stats: KubeSimStats;
  /**
   * Requests by verb and resource, `<verb> <group>/<resource>[/<subresource>]` (verbs as
   * `KubeSimStats.byVerb` names them; `get nonResource:/metrics` for the metrics path): what a
   * client's RBAC must grant.
   */
  readonly access: Map<string, number>;
  readonly store: Store;
  readonly controllers: Controllers;
  /** Talos side: node went down (reboot) or came back. */
  setNodeReady(name: string, ready: boolean): void;
  /** Talos side: what the kubelet reports after a boot. */
  setNodeInfo(
    name: string,
    info: NodeInfoFacts,
  ): void;
  /** Resolves once `pred(stats)` holds (checked after every request). */
  waitFor(pred: (s: KubeSimStats) => boolean): Promise<void>;
  /** Cuts every open watch stream. */
  disconnectWatches(): void;
  close(): Promise<void>;
}

const MUTATING = new Set([
  "create",
  "update",
  "patch",
  "delete",
  "deletecollection",
  "evict",
  "apply",
]);

class HttpError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: R,
  ) {
    super(message);
  }
}

interface Route {
  readonly type: ResourceType;
  readonly ns: string | undefined;
  readonly name: string | undefined;
  readonly sub: string | undefined;
}

function route(store: Store, path: string): Route | undefined {
  const m = /^\/api\/v1\/(.+)$/.exec(path) ?? /^\/apis\/([^/]+)\/([^/]+)\/(.+)$/.exec(path);
  if (!m) return undefined;
  const [group, version, rest] = m.length === 2 ? ["", "v1", m[1]!] : [m[1]!, m[2]!, m[3]!];
  const seg = rest.split("/").map(decodeURIComponent);
  let ns: string | undefined, plural: string, name: string | undefined, sub: string | undefined;
  if (seg[0] === "namespaces" && seg.length >= 3) {
    [, ns, plural, name, sub] = seg as [string, string, string, string?, string?];
  } else [plural, name, sub] = seg as [string, string?, string?];
  const type = store.findType(group, version, plural);
  return type ? { type, ns, name, sub } : undefined;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Uint8Array[] = [];
  for await (const c of req) chunks.push(c as Uint8Array);
  return new TextDecoder().decode(Buffer.concat(chunks));
}

function send(
  res: ServerResponse,
  code: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(code, {
    "Content-Type": "application/json",
    "Cache-Control": "no-cache, private",
    ...headers,
  });
  res.end(text);
}

function verbOf(
  method: string,
  r: Route | undefined,
  q: URLSearchParams,
  contentType: string,
): string {
  if (!r) return "discovery";
  if (method === "GET") {
    return r.name ? "get" : q.get("watch") === "true" || q.get("watch") === "1" ? "watch" : "list";
  }
  if (method === "POST") return r.sub === "eviction" ? "evict" : "create";
  if (method === "PUT") return "update";
  if (method === "PATCH") {
    return contentType.startsWith("application/apply-patch") ? "apply" : "patch";
  }
  if (method === "DELETE") return r.name ? "delete" : "deletecollection";
  return method.toLowerCase();
}

/** Starts the simulator on 127.0.0.1 (an ephemeral port unless one is given). */
export async function startKubeSim(opts: KubeSimOptions): Promise<KubeSim> {
  const { clock, faults, description } = opts;
  const store = new Store({ now: () => clock.now(), historySize: opts.historySize ?? 10_000 });
  const controllers = new Controllers(store, clock, faults);
  loadDescription(controllers, description);
  const stats: KubeSimStats = {
    total: 0,
    mutating: 0,
    byVerb: {},
    evictions: { accepted: 0, blocked: 0, failed: 0 },
  };
  const waiters = new Set<{ pred: (s: KubeSimStats) => boolean; resolve: () => void }>();
  const openWatches = new Set<() => void>();
  let clockChain: Promise<void> = Promise.resolve();
  const access = new Map<string, number>();
  const ctx: Ctx = { store, controllers, opts, stats, openWatches, access };

  const checkWaiters = () => {
    for (const w of [...waiters]) if (w.pred(stats)) (waiters.delete(w), w.resolve());
  };
  const server: Server = keepIdleConnections(createServer({
    key: opts.tls.keyPem,
    cert: opts.tls.certPem,
    ca: opts.tls.caPem,
    requestCert: true,
    rejectUnauthorized: false,
  }, (req, res) => {
    if (opts.advanceOnRequestMs) {
      clockChain = clockChain.then(() => clock.advance(opts.advanceOnRequestMs!));
    }
    clockChain.then(() => handle(ctx, req, res)).catch((e) => {
      if (!res.headersSent) send(res, 500, statusBody(500, "InternalError", String(e)));
    }).finally(checkWaiters);
  }));
  await new Promise<void>((resolve) =>
    server.listen(opts.port ?? 0, opts.host ?? "127.0.0.1", resolve)
  );
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : 0;
  return {
    url: `https://127.0.0.1:${port}`,
    port,
    stats,
    access,
    store,
    controllers,
    setNodeReady: (n, r) => controllers.setNodeReady(n, r),
    setNodeInfo: (n, i) => controllers.setNodeInfo(n, i),
    waitFor: (pred) =>
      pred(stats)
        ? Promise.resolve()
        : new Promise<void>((resolve) => waiters.add({ pred, resolve })),
    disconnectWatches: () => [...openWatches].forEach((f) => f()),
    close: () =>
      new Promise<void>((resolve) => {
        [...openWatches].forEach((f) => f());
        server.close(() => resolve());
        server.closeAllConnections?.();
      }),
  };
}

interface Ctx {
  readonly store: Store;
  readonly controllers: Controllers;
  readonly opts: KubeSimOptions;
  readonly stats: KubeSimStats;
  readonly openWatches: Set<() => void>;
  readonly access: Map<string, number>;
}

function authorized(ctx: Ctx, req: IncomingMessage): boolean {
  const sock = req.socket as unknown as { authorized?: boolean };
  if (sock.authorized) return true;
  const auth = req.headers.authorization;
  return ctx.opts.token !== undefined && auth === `Bearer ${ctx.opts.token}`;
}

async function handle(ctx: Ctx, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? "/", "https://sim");
  const q = url.searchParams, method = req.method ?? "GET";
  const proxied = parseProxyPath(url.pathname);
  if (proxied && method === "GET") return proxyGet(ctx, req, res, proxied);
  const r = route(ctx.store, url.pathname);
  const verb = verbOf(method, r, q, String(req.headers["content-type"] ?? ""));
  const { stats, opts } = ctx;
  stats.total++;
  stats.byVerb[verb] = (stats.byVerb[verb] ?? 0) + 1;
  if (MUTATING.has(verb)) stats.mutating++;
  if (r) count(ctx, `${verb} ${r.type.group}/${r.type.plural}${r.sub ? `/${r.sub}` : ""}`);
  else if (url.pathname === "/metrics") count(ctx, `get nonResource:/metrics`);
  if (!authorized(ctx, req)) return send(res, 401, statusBody(401, "Unauthorized", "Unauthorized"));
  const now = opts.clock.now();
  const storm = opts.faults.take("kube.request", r?.name, now);
  if (storm?.kind === "http-storm" || storm?.kind === "unavailable") {
    const code = storm.kind === "unavailable" ? 503 : Number(storm.params?.status ?? 429);
    return send(
      res,
      code,
      statusBody(code, code === 429 ? "TooManyRequests" : "ServiceUnavailable", "simulated fault"),
      { "Retry-After": "1" },
    );
  }
  try {
    if (!r && url.pathname === "/metrics") {
      res.writeHead(200, { "Content-Type": "text/plain; version=0.0.4" });
      res.end(deprecatedApiMetrics(opts.description));
      return;
    }
    if (!r) {
      const doc = discovery(
        ctx.store,
        url.pathname,
        servedVersion(ctx.store, opts.description.spec.kubernetesVersion),
      );
      if (!doc) {
        throw new HttpError(404, "NotFound", `the server could not find the requested resource`);
      }
      return send(res, 200, doc);
    }
    const body = ["POST", "PUT", "PATCH"].includes(method) ? await readBody(req) : "";
    await dispatch(ctx, r, verb, q, req, res, body);
  } catch (e) {
    if (e instanceof HttpError) {
      return send(res, e.code, statusBody(e.code, e.reason, e.message, e.details));
    }
    if (e instanceof SelectorError || e instanceof PatchError) {
      return send(res, 400, statusBody(400, "BadRequest", e.message));
    }
    if (e instanceof SsaConflict) {
      return send(res, 409, statusBody(409, "Conflict", e.message, { causes: e.causes }));
    }
    throw e;
  }
}

/** Records one request under its access key (see `KubeSim.access`). */
function count(ctx: Ctx, key: string): void {
  ctx.access.set(key, (ctx.access.get(key) ?? 0) + 1);
}

/** A GET through the proxy subresource: counted as a read, answered from the route model. */
function proxyGet(ctx: Ctx, req: IncomingMessage, res: ServerResponse, t: RouteTarget): void {
  const { stats } = ctx;
  stats.total++;
  stats.byVerb["proxy"] = (stats.byVerb["proxy"] ?? 0) + 1;
  count(ctx, `get /${t.kind === "pod" ? "pods" : "services"}/proxy`);
  if (!authorized(ctx, req)) return send(res, 401, statusBody(401, "Unauthorized", "Unauthorized"));
  const a = ctx.controllers.routes.answer(ctx.store, ctx.controllers.pods, t);
  res.writeHead(a.status, { "Content-Type": a.contentType, "Cache-Control": "no-cache, private" });
  res.end(a.body);
}

function notFound(r: Route): HttpError {
  return new HttpError(404, "NotFound", `${r.type.plural} "${r.name}" not found`, {
    name: r.name,
    kind: r.type.plural,
  });
}

function mustGet(ctx: Ctx, r: Route): Obj {
  const o = ctx.store.get(r.type, r.ns, r.name!);
  if (!o) throw notFound(r);
  return o;
}

function parseJson(body: string): R {
  try {
    return JSON.parse(body) as R;
  } catch {
    throw new HttpError(400, "BadRequest", "request body is not valid JSON");
  }
}

function managerOf(q: URLSearchParams, req: IncomingMessage): string {
  return q.get("fieldManager") ??
    String(req.headers["user-agent"] ?? "unknown").split("/")[0]!.slice(0, 128);
}

function dispatch(
  ctx: Ctx,
  r: Route,
  verb: string,
  q: URLSearchParams,
  req: IncomingMessage,
  res: ServerResponse,
  body: string,
): void {
  const { store } = ctx;
  const dryRun = q.get("dryRun") === "All";
  switch (verb) {
    case "get": {
      const o = mustGet(ctx, r);
      if (!wantsTable(req.headers.accept)) return send(res, 200, o);
      const meta = { resourceVersion: o.metadata.resourceVersion };
      return send(res, 200, asTable(ctx, r, q, [o], meta));
    }
    case "list": {
      const l = list(ctx, r, q);
      if (!wantsTable(req.headers.accept)) return send(res, 200, l);
      return send(res, 200, asTable(ctx, r, q, l.items as Obj[], l.metadata as R));
    }
    case "watch":
      return watch(ctx, r, q, res, wantsTable(req.headers.accept));
    case "create": {
      const o = parseJson(body) as Obj;
      o.metadata ??= { name: "" };
      if (!o.metadata.name && o.metadata.generateName) {
        o.metadata.name = `${o.metadata.generateName}${store.resourceVersion.toString(36)}`;
      }
      if (r.ns) o.metadata.namespace = r.ns;
      checkValid(r, o);
      if (dryRun) return send(res, 201, o);
      recordUpdate(o, undefined, o, managerOf(q, req), r.type, ctx.opts.clock.now());
      if (r.type.group === "apps") defaultWorkload(o);
      const created = store.create(r.type, o);
      if (!created) {
        throw new HttpError(
          409,
          "AlreadyExists",
          `${r.type.plural} "${o.metadata.name}" already exists`,
        );
      }
      return send(res, 201, created);
    }
    case "evict":
      return evict(ctx, r, parseJson(body), dryRun, res);
    case "update": {
      const cur = mustGet(ctx, r);
      const o = parseJson(body) as Obj;
      checkPrecondition(cur, o.metadata?.resourceVersion);
      const next = r.sub === "status" ? { ...cur, status: o.status } : o;
      checkValid(r, next);
      if (dryRun) return send(res, 200, next);
      recordUpdate(next, cur, o, managerOf(q, req), r.type, ctx.opts.clock.now(), r.sub);
      return send(res, 200, store.put(r.type, next));
    }
    case "patch":
    case "apply":
      return patch(ctx, r, verb, q, req, res, body, dryRun);
    case "delete": {
      const cur = mustGet(ctx, r);
      if (dryRun) return send(res, 200, cur);
      const b = body ? parseJson(body) : {};
      const graceQ = q.get("gracePeriodSeconds");
      const grace = graceQ !== null ? Number(graceQ) : (b.gracePeriodSeconds as number | undefined);
      const out = r.type.kind === "Pod"
        ? ctx.controllers.deletePod(cur, grace)
        : store.remove(r.type, r.ns, r.name!);
      return send(res, 200, out ?? cur);
    }
    default:
      throw new HttpError(405, "MethodNotAllowed", `${verb} is not supported`);
  }
}

/** The type's own validation (Leases: their times and counts), as the API server runs it. */
function checkValid(r: Route, o: Obj): void {
  if (!isLease(r.type)) return;
  const bad = leaseRefusal(o);
  if (bad) throw new HttpError(bad.code, bad.reason, bad.message);
}

function checkPrecondition(cur: Obj, rv: unknown): void {
  if (rv !== undefined && rv !== null && rv !== "" && rv !== cur.metadata.resourceVersion) {
    throw new HttpError(
      409,
      "Conflict",
      `Operation cannot be fulfilled on ${
        String(cur.kind).toLowerCase()
      }s "${cur.metadata.name}": the object has been modified; please apply your changes to the latest version and try again`,
      { name: cur.metadata.name, kind: String(cur.kind).toLowerCase() + "s" },
    );
  }
}

function patch(
  ctx: Ctx,
  r: Route,
  verb: string,
  q: URLSearchParams,
  req: IncomingMessage,
  res: ServerResponse,
  body: string,
  dryRun: boolean,
): void {
  const ct = String(req.headers["content-type"] ?? "").split(";")[0]!.trim();
  const cur = ctx.store.get(r.type, r.ns, r.name!);
  const now = ctx.opts.clock.now();
  if (verb === "apply") {
    const fieldManager = q.get("fieldManager");
    if (!fieldManager) {
      throw new HttpError(400, "BadRequest", "fieldManager is required for apply patch");
    }
    const applied = parseYaml(body) as Obj;
    const next = applyManaged(cur, applied, fieldManager, q.get("force") === "true", r.type, now);
    if (r.ns) next.metadata.namespace = r.ns;
    checkValid(r, next);
    if (dryRun) return send(res, 200, next);
    if (!cur) {
      if (r.type.group === "apps") defaultWorkload(next);
      return send(res, 201, ctx.store.create(r.type, next));
    }
    return send(res, 200, ctx.store.put(r.type, next));
  }
  if (!cur) throw notFound(r);
  const p = parseJson(body);
  let next: Obj;
  if (ct === "application/json-patch+json") next = jsonPatch(cur, p) as Obj;
  else if (ct === "application/merge-patch+json") next = mergePatch(cur, p) as Obj;
  else if (ct === "application/strategic-merge-patch+json") next = strategicMerge(cur, p) as Obj;
  else {throw new HttpError(
      415,
      "UnsupportedMediaType",
      `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml`,
    );}
  const rv = Array.isArray(p) ? undefined : (p.metadata as R | undefined)?.resourceVersion;
  checkPrecondition(cur, rv);
  next.metadata.resourceVersion = cur.metadata.resourceVersion;
  if (r.sub === "status") next = { ...cur, status: next.status };
  checkValid(r, next);
  if (dryRun) return send(res, 200, next);
  recordUpdate(next, cur, Array.isArray(p) ? next : p, managerOf(q, req), r.type, now, r.sub);
  send(res, 200, ctx.store.put(r.type, next));
}

function evict(ctx: Ctx, r: Route, body: R, dryRun: boolean, res: ServerResponse): void {
  const pod = ctx.store.get(r.type, r.ns, r.name!);
  const bodyName = (body.metadata as R | undefined)?.name;
  if (bodyName !== undefined && bodyName !== r.name) {
    throw new HttpError(400, "BadRequest", "name in URL does not match name in Eviction object");
  }
  const fault = ctx.opts.faults.take("kube.evict", r.name, ctx.opts.clock.now());
  if (fault && fault.kind !== "lose-response") {
    const code = fault.kind === "unavailable" ? 503 : Number(fault.params?.status ?? 429);
    return send(
      res,
      code,
      statusBody(code, code === 429 ? "TooManyRequests" : "ServiceUnavailable", "simulated fault"),
    );
  }
  if (!pod) throw notFound(r);
  const reply = evictPod(ctx.controllers, pod, body, dryRun);
  ctx.stats.evictions[reply.outcome === "gone" ? "failed" : reply.outcome]++;
  if (fault?.kind === "lose-response") {
    res.socket?.destroy();
    return;
  }
  send(res, reply.httpStatus, reply.body, reply.headers as Record<string, string> | undefined);
}

/** The Table kubectl asks for (`Accept: ...;as=Table;v=v1;g=meta.k8s.io`), rows in order. */
function asTable(ctx: Ctx, r: Route, q: URLSearchParams, objs: Obj[], meta: R): R {
  return toTable(r.type, objs, ctx.opts.clock.now(), includeObjectOf(q), meta);
}

function filterFor(r: Route, q: URLSearchParams): (o: Obj) => boolean {
  const labels = parseLabelSelector(q.get("labelSelector"));
  const fields = parseFieldSelector(q.get("fieldSelector"));
  return (o) =>
    (r.ns === undefined || !r.type.namespaced || o.metadata.namespace === r.ns) &&
    labels(o.metadata.labels ?? {}) && fields(o);
}

function list(ctx: Ctx, r: Route, q: URLSearchParams): R {
  const match = filterFor(r, q);
  const limit = Number(q.get("limit") ?? 0);
  let start = 0;
  const cont = q.get("continue");
  if (cont) {
    const tok = JSON.parse(atob(cont)) as { rv: number; start: number };
    if (tok.rv < ctx.store.oldestWatchable) {
      throw new HttpError(
        410,
        "Expired",
        "The provided continue parameter is too old to display a consistent list result.",
      );
    }
    start = tok.start;
  }
  const all = ctx.store.list(r.type, r.ns).filter(match);
  const items = limit > 0 ? all.slice(start, start + limit) : all.slice(start);
  const more = limit > 0 && start + limit < all.length;
  const rv = String(ctx.store.resourceVersion);
  return {
    kind: `${r.type.kind}List`,
    apiVersion: r.type.group === "" ? "v1" : `${r.type.group}/${r.type.version}`,
    metadata: {
      resourceVersion: rv,
      ...(more
        ? {
          continue: btoa(JSON.stringify({ rv: Number(rv), start: start + limit })),
          remainingItemCount: all.length - start - limit,
        }
        : {}),
    },
    items,
  };
}

function watch(
  ctx: Ctx,
  r: Route,
  q: URLSearchParams,
  res: ServerResponse,
  table: boolean,
): void {
  const match = filterFor(r, q);
  res.writeHead(200, { "Content-Type": "application/json", "Transfer-Encoding": "chunked" });
  // Answer at once, as the apiserver does: a watch with nothing to say yet must not hold the
  // client's request open without headers (client-go's informers, `kubectl rollout status`, then
  // wait for them even after they stop).
  res.flushHeaders();
  // A Table watch (`kubectl get -w`) carries each object as a one-row Table, as the apiserver does.
  const write = (type: string, object: unknown) =>
    res.write(
      JSON.stringify({
        type,
        object: table && type !== "ERROR"
          ? asTable(ctx, r, q, [object as Obj], {
            resourceVersion: (object as Obj).metadata.resourceVersion,
          })
          : object,
      }) + "\n",
    );
  const rvParam = q.get("resourceVersion");
  let initial: StoredEvent[];
  try {
    initial = rvParam && rvParam !== "0" && q.get("sendInitialEvents") !== "true"
      ? ctx.store.eventsSince(r.type, Number(rvParam))
      : ctx.store.list(r.type, r.ns).map((o) => ({
        rv: 0,
        type: "ADDED" as const,
        type_key: "",
        object: o,
      }));
  } catch (e) {
    if (!(e instanceof GoneError)) throw e;
    write("ERROR", statusBody(410, "Expired", e.message));
    res.end();
    return;
  }
  for (const e of initial) if (match(e.object)) write(e.type, e.object);
  // A streaming list (`sendInitialEvents=true`, client-go's WatchList, used by kubectl 1.35
  // informers) waits for a bookmark that says the initial events are all sent.
  if (q.get("sendInitialEvents") === "true") {
    res.write(
      JSON.stringify({
        type: "BOOKMARK",
        object: {
          kind: r.type.kind,
          apiVersion: r.type.group === "" ? "v1" : `${r.type.group}/${r.type.version}`,
          metadata: {
            resourceVersion: String(ctx.store.resourceVersion),
            annotations: { "k8s.io/initial-events-end": "true" },
          },
        },
      }) + "\n",
    );
  }
  let closed = false;
  const stop = () => {
    if (closed) return;
    closed = true;
    unwatch();
    ctx.openWatches.delete(stop);
    res.end();
  };
  const unwatch = ctx.store.watch(r.type, (e) => {
    if (!closed && match(e.object)) write(e.type, e.object);
  });
  ctx.openWatches.add(stop);
  res.on("close", stop);
  if (
    ctx.opts.faults.take("kube.watch", r.name ?? r.type.plural, ctx.opts.clock.now())?.kind ===
      "watch-disconnect"
  ) stop();
}

/** Writes a kubeconfig with the CA, server URL and client certificate embedded. */
export function writeKubeconfig(
  path: string,
  c: { url: string; caPem: string; clientCertPem?: string; clientKeyPem?: string; token?: string },
): void {
  const b64 = (s: string) => Buffer.from(s).toString("base64");
  const user: R = {};
  if (c.clientCertPem) user["client-certificate-data"] = b64(c.clientCertPem);
  if (c.clientKeyPem) user["client-key-data"] = b64(c.clientKeyPem);
  if (c.token) user.token = c.token;
  const doc = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [{
      name: "twin",
      cluster: { server: c.url, "certificate-authority-data": b64(c.caPem) },
    }],
    users: [{ name: "twin-admin", user }],
    contexts: [{ name: "twin", context: { cluster: "twin", user: "twin-admin" } }],
    "current-context": "twin",
    preferences: {},
  };
  writeFileSync(path, stringifyYaml(doc), { mode: 0o600 });
}
