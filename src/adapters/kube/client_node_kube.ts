/**
 * The `Kube` port over `@kubernetes/client-node` 1.4.0 (loaded lazily: importing it costs ~0.6 s).
 * TLS, client certificates and tokens come from the kubeconfig through the library's own
 * `KubeConfig`. Writes go through the typed API with field manager `cairn`, so ownership of
 * `spec.unschedulable` can be read back from managedFields. Reads go through the library's HTTP
 * pipeline but are mapped from the raw JSON (see map.ts); lists follow `continue` tokens.
 */
import { yamlErrorSummary } from "../../domain/yaml_error_summary.ts";
import type * as K8s from "@kubernetes/client-node";
import { Buffer } from "node:buffer";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { request as httpRequest } from "node:http";
import { silenceDependencyDeprecation } from "./quiet_deprecation.ts";
import type {
  ContainerImageChange,
  CordonOutcome,
  CreateOutcome,
  EvictionOutcome,
  EvictOptions,
  Kube,
  KubeCallOptions,
  KubeList,
  KubeListOptions,
  KubeNode,
  KubeObject,
  KubePdb,
  KubePod,
  KubeProxyAnswer,
  KubeProxyOptions,
  KubeProxyTarget,
  KubeResourceRef,
  KubeSelectorOptions,
  KubeServerVersion,
  KubeWatchEnd,
  KubeWatchEvent,
  KubeWatchOptions,
  PatchOutcome,
  PodRef,
} from "../../ports/kube.ts";
import {
  badResponse,
  httpError,
  httpStatusOf,
  parseStatus,
  timeoutError,
  toKubeError,
  transportError,
} from "./errors.ts";
import { classifyEviction } from "./eviction_outcome.ts";
import { NODES, readNode, readNodeList, readPdbList, readPod, readPodList } from "./typed_reads.ts";
import { watchResource } from "./watch.ts";
import { type KubeconfigFiles, readKubeconfigFiles } from "./kubeconfig_files.ts";
import { CairnError } from "../../domain/errors.ts";
import { parseDeprecatedApiMetrics } from "../../domain/k8s_upgrade/deprecated_apis.ts";
import type { DeprecatedApiUse } from "../../domain/k8s_upgrade/preflight.ts";

export type Lib = typeof K8s;

/**
 * The field manager of every write. It must equal the engine's `CAIRN_FIELD_MANAGER` (adapters do
 * not import the engine; the adapter test asserts the two agree), because uncordon ownership is
 * decided by who owns `spec.unschedulable` in managedFields.
 */
export const DEFAULT_FIELD_MANAGER = "cairn";
type R = Record<string, unknown>;
const rec = (v: unknown): R => (v !== null && typeof v === "object" ? v as R : {});

export interface ClientNodeKubeOptions {
  /**
   * One kubeconfig file, or a `KUBECONFIG` list merged by kubectl's rules (`kubeconfig_files.ts`);
   * ignored when `kubeconfigYaml` is given; neither = the library's default lookup.
   */
  readonly kubeconfigPath?: KubeconfigFiles;
  readonly kubeconfigYaml?: string;
  readonly context?: string;
  /** Field manager for writes (default `cairn`, which cordon ownership depends on). */
  readonly fieldManager?: string;
  /** Items per LIST page (default 500, kubectl's chunk size). */
  readonly pageSize?: number;
}

export { NODES, PDBS, PODS } from "./typed_reads.ts";

/** Builds the API path of a collection or object. */
export function resourcePath(ref: KubeResourceRef, namespace?: string, name?: string): string {
  const base = ref.group === "" ? `/api/${ref.version}` : `/apis/${ref.group}/${ref.version}`;
  const ns = ref.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : "";
  return `${base}${ns}/${ref.plural}${name !== undefined ? `/${encodeURIComponent(name)}` : ""}`;
}

/** Loads the library and the kubeconfig; the returned port talks to the current context. */
export async function createClientNodeKube(opts: ClientNodeKubeOptions = {}): Promise<Kube> {
  const { lib, kc, server } = await loadKubeConfig(opts);
  return new ClientNodeKube(lib, kc, server, opts);
}

/** Where a kubeconfig comes from (shared by the Kube port and the Lease client). */
export type KubeConfigSource = Pick<
  ClientNodeKubeOptions,
  "kubeconfigPath" | "kubeconfigYaml" | "context"
>;

/** The library (loaded lazily) and a kubeconfig at its current context; refused when unusable. */
export async function loadKubeConfig(
  opts: KubeConfigSource,
): Promise<{ lib: Lib; kc: K8s.KubeConfig; server: string }> {
  silenceDependencyDeprecation(); // before the import: loading the library emits the warning
  const lib: Lib = await import("@kubernetes/client-node");
  const kc = new lib.KubeConfig();
  // Read (and merged, for a KUBECONFIG list) before the library sees it; errors name the file.
  const text = opts.kubeconfigYaml ??
    (opts.kubeconfigPath !== undefined
      ? await readKubeconfigFiles(opts.kubeconfigPath)
      : undefined);
  const where = typeof opts.kubeconfigPath === "string"
    ? ` ${opts.kubeconfigPath}`
    : opts.kubeconfigPath !== undefined
    ? ` ${opts.kubeconfigPath.join(":")}`
    : "";
  try {
    if (text !== undefined) kc.loadFromString(text);
    else kc.loadFromDefault();
  } catch (e) {
    throw new CairnError({
      reason: "KubeconfigInvalid",
      message: `cannot load kubeconfig${where}: ${yamlErrorSummary(e)}`,
    }, { cause: e });
  }
  if (opts.context !== undefined) {
    // client-node takes any name here; kubectl refuses one the file does not define.
    if (!kc.getContexts().some((c) => c.name === opts.context)) {
      const known = kc.getContexts().map((c) => c.name).join(", ") || "none";
      throw new CairnError({
        reason: "KubeconfigInvalid",
        message: `kubeconfig${where} has no context named ${opts.context} (contexts: ${known})`,
      });
    }
    kc.setCurrentContext(opts.context);
  }
  const server = kc.getCurrentCluster()?.server;
  if (!server) {
    throw new CairnError({
      reason: "KubeconfigInvalid",
      message: `kubeconfig has no cluster for context ${kc.getCurrentContext() || "(none)"}`,
    });
  }
  return { lib, kc, server };
}

interface RawResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly text: string;
}

class ClientNodeKube implements Kube {
  readonly #core: K8s.CoreV1Api;
  readonly #server: K8s.ServerConfiguration<Record<string, string>>;
  readonly #http: K8s.IsomorphicFetchHttpLibrary;
  /** Keep-alive agents by TLS identity (see {@link ClientNodeKube.#reuseConnection}). */
  readonly #agents: Array<
    { readonly options: Record<string, unknown>; readonly agent: HttpsAgent }
  > = [];
  readonly #fieldManager: string;
  readonly #pageSize: number;

  constructor(
    private readonly lib: Lib,
    private readonly kc: K8s.KubeConfig,
    server: string,
    opts: ClientNodeKubeOptions,
  ) {
    this.#core = kc.makeApiClient(lib.CoreV1Api);
    this.#server = new lib.ServerConfiguration(server.replace(/\/+$/, ""), {});
    this.#http = new lib.IsomorphicFetchHttpLibrary();
    this.#fieldManager = opts.fieldManager ?? DEFAULT_FIELD_MANAGER;
    this.#pageSize = opts.pageSize ?? 500;
  }

  async serverVersion(): Promise<KubeServerVersion> {
    const v = rec(await this.#getJson("/version", {}));
    if (typeof v.gitVersion !== "string") throw badResponse("GET /version", "no gitVersion");
    return { gitVersion: v.gitVersion, major: String(v.major ?? ""), minor: String(v.minor ?? "") };
  }

  requestedDeprecatedApis(opts: KubeCallOptions = {}): Promise<readonly DeprecatedApiUse[]> {
    return this.#bounded("GET /metrics", opts, async (signal) => {
      const res = await this.#raw("GET", "/metrics", {}, signal, "text/plain");
      if (res.status < 200 || res.status > 299) {
        throw httpError(res.status, res.text, "GET /metrics");
      }
      return parseDeprecatedApiMetrics(res.text);
    });
  }

  getNode(name: string, opts?: KubeCallOptions): Promise<KubeNode | undefined> {
    return readNode(this, name, opts);
  }

  listNodes(opts: { readonly labelSelector?: string } = {}): Promise<KubeList<KubeNode>> {
    return readNodeList(this, opts);
  }

  listPods(onNode?: string, opts: KubeListOptions = {}): Promise<KubeList<KubePod>> {
    return readPodList(this, onNode, opts);
  }

  getPod(ref: PodRef, opts?: KubeCallOptions): Promise<KubePod | undefined> {
    return readPod(this, ref, opts);
  }

  listPdbs(opts: KubeListOptions = {}): Promise<KubeList<KubePdb>> {
    return readPdbList(this, opts);
  }

  cordon(node: string, expectedResourceVersion: string, opts?: KubeCallOptions) {
    return this.#bounded(
      `PATCH node ${node}`,
      opts,
      (signal) => this.#setUnschedulable(node, expectedResourceVersion, true, signal),
    );
  }

  uncordon(node: string, expectedResourceVersion: string, opts?: KubeCallOptions) {
    return this.#bounded(
      `PATCH node ${node}`,
      opts,
      (signal) => this.#setUnschedulable(node, expectedResourceVersion, null, signal),
    );
  }

  /**
   * Runs one call under its deadline: the request is aborted when `opts.timeoutMs` passes and
   * the call throws `KubeTimeout`, whatever the server is doing (a silent server, a stalled
   * body). Without a deadline the call runs as before.
   */
  async #bounded<T>(
    what: string,
    opts: KubeCallOptions | undefined,
    work: (signal: AbortSignal | undefined) => Promise<T>,
  ): Promise<T> {
    const ms = opts?.timeoutMs;
    if (ms === undefined) return await work(undefined);
    const abort = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        abort.abort();
        reject(timeoutError(what, ms));
      }, Math.max(0, ms));
    });
    const running = work(abort.signal);
    // The abandoned request still settles (aborted); that late rejection is not news.
    running.catch(() => {});
    try {
      return await Promise.race([running, expired]);
    } catch (e) {
      if (abort.signal.aborted) throw timeoutError(what, ms);
      throw e;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Client middleware that ties one typed API request to `signal`. */
  #withSignal(signal: AbortSignal | undefined): K8s.ObservableMiddleware[] {
    if (!signal) return [];
    return [{
      pre: (ctx) => {
        ctx.setSignal(signal);
        return new this.lib.Observable(Promise.resolve(ctx));
      },
      post: (rsp) => new this.lib.Observable(Promise.resolve(rsp)),
    }];
  }

  /**
   * A merge patch carrying the expected resourceVersion: the server applies it only if the node
   * is still at that version (409 otherwise). `null` removes the field, as kubectl uncordon does.
   */
  async #setUnschedulable(
    node: string,
    rv: string,
    value: true | null,
    signal: AbortSignal | undefined,
  ): Promise<CordonOutcome> {
    const before = await this.#getObject(NODES, node, undefined, signal);
    if (!before) return { kind: "not-found", message: `node "${node}" not found` };
    const prior = rec(before.spec).unschedulable === true;
    const what = `PATCH node ${node}`;
    try {
      const patched = await this.#core.patchNode(
        {
          name: node,
          body: { metadata: { resourceVersion: rv }, spec: { unschedulable: value } },
          fieldManager: this.#fieldManager,
        },
        this.lib.setHeaderOptions("Content-Type", this.lib.PatchStrategy.MergePatch, {
          middleware: this.#withSignal(signal),
          middlewareMergeStrategy: "append",
        }),
      );
      const after = patched.metadata?.resourceVersion;
      if (!after) throw badResponse(what, "patched node has no resourceVersion");
      return { kind: "applied", priorUnschedulable: prior, resourceVersion: after };
    } catch (e) {
      const code = httpStatusOf(e);
      const message = parseStatus(rec(e).body)?.message ?? `HTTP ${code}`;
      if (code === 409) return { kind: "conflict", message };
      if (code === 404) return { kind: "not-found", message };
      throw toKubeError(e, what);
    }
  }

  evict(pod: PodRef, opts: EvictOptions = {}): Promise<EvictionOutcome> {
    return this.#bounded(
      `evict ${pod.namespace}/${pod.name}`,
      opts,
      (signal) => this.#evict(pod, opts, signal),
    );
  }

  async #evict(
    pod: PodRef,
    opts: EvictOptions,
    signal: AbortSignal | undefined,
  ): Promise<EvictionOutcome> {
    let raw = "";
    // The typed API parses a 2xx body as V1Eviction and drops Status fields; keep the raw text.
    const capture: K8s.ObservableMiddleware = {
      pre: (ctx) => new this.lib.Observable(Promise.resolve(ctx)),
      post: (rsp) =>
        new this.lib.Observable(
          rsp.body.text().then((text) => {
            raw = text;
            return new this.lib.ResponseContext(rsp.httpStatusCode, rsp.headers, {
              text: () => Promise.resolve(text),
              binary: () => Promise.resolve(Buffer.from(text)),
            });
          }),
        ),
    };
    const deleteOptions = opts.gracePeriodSeconds !== undefined
      ? { gracePeriodSeconds: opts.gracePeriodSeconds }
      : {};
    try {
      const info = await this.#core.createNamespacedPodEvictionWithHttpInfo({
        name: pod.name,
        namespace: pod.namespace,
        body: {
          apiVersion: "policy/v1",
          kind: "Eviction",
          metadata: { name: pod.name, namespace: pod.namespace },
          deleteOptions,
        },
        ...(opts.dryRun ? { dryRun: "All" } : {}),
      }, { middleware: [...this.#withSignal(signal), capture], middlewareMergeStrategy: "append" });
      return classifyEviction(info.httpStatusCode, raw, info.headers);
    } catch (e) {
      const code = httpStatusOf(e);
      if (code === undefined || code === 401) {
        throw toKubeError(e, `evict ${pod.namespace}/${pod.name}`);
      }
      const headers = rec(rec(e).headers) as Record<string, string>;
      return classifyEviction(
        code,
        raw || rec(e).body,
        headers,
        `evict ${pod.namespace}/${pod.name}`,
      );
    }
  }

  getObject(
    ref: KubeResourceRef,
    name: string,
    namespace?: string,
    opts?: KubeCallOptions,
  ): Promise<KubeObject | undefined> {
    return this.#bounded(
      `GET ${resourcePath(ref, namespace, name)}`,
      opts,
      (signal) => this.#getObject(ref, name, namespace, signal),
    );
  }

  async #getObject(
    ref: KubeResourceRef,
    name: string,
    namespace: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<KubeObject | undefined> {
    const path = resourcePath(ref, namespace, name);
    const res = await this.#raw("GET", path, {}, signal);
    if (res.status === 404) return undefined;
    return this.#json(res, `GET ${path}`) as KubeObject;
  }

  createObject(
    ref: KubeResourceRef,
    namespace: string | undefined,
    body: Readonly<Record<string, unknown>>,
    opts: KubeCallOptions = {},
  ): Promise<CreateOutcome> {
    const path = resourcePath(ref, namespace);
    return this.#bounded(`POST ${path}`, opts, async (signal) => {
      const res = await this.#raw(
        "POST",
        path,
        { fieldManager: this.#fieldManager },
        signal,
        "application/json",
        JSON.stringify(body),
      );
      if (res.status === 201 || res.status === 200) {
        const o = rec(this.#json(res, `POST ${path}`));
        const meta = rec(o.metadata);
        return {
          kind: "created",
          uid: String(meta.uid ?? ""),
          resourceVersion: String(meta.resourceVersion ?? ""),
        };
      }
      let message = `HTTP ${res.status}`;
      try {
        message = parseStatus(JSON.parse(res.text))?.message ?? message;
      } catch { /* not a Status: keep the code */ }
      if (res.status === 409) return { kind: "exists", message };
      if ([400, 403, 404, 422].includes(res.status)) {
        return { kind: "rejected", code: res.status, message };
      }
      // 429, 5xx: the server's answer does not say whether the object was stored.
      throw httpError(res.status, res.text, `POST ${path}`);
    });
  }

  setContainerImage(
    ref: KubeResourceRef,
    namespace: string,
    name: string,
    change: ContainerImageChange,
    opts: KubeCallOptions = {},
  ): Promise<PatchOutcome> {
    const path = resourcePath(ref, namespace, name);
    const what = `PATCH ${path}`;
    return this.#bounded(what, opts, async (signal) => {
      // Strategic merge: the containers list is merged by name, so only this image is written;
      // the resourceVersion makes the server refuse (409) if the object moved since it was read.
      const body = {
        metadata: { resourceVersion: change.expectedResourceVersion },
        spec: {
          template: { spec: { containers: [{ name: change.container, image: change.image }] } },
        },
      };
      const res = await this.#raw(
        "PATCH",
        path,
        { fieldManager: this.#fieldManager },
        signal,
        "application/json",
        JSON.stringify(body),
        "application/strategic-merge-patch+json",
      );
      if (res.status === 200) {
        const meta = rec(rec(this.#json(res, what)).metadata);
        return {
          kind: "applied",
          resourceVersion: String(meta.resourceVersion ?? ""),
          generation: Number(meta.generation ?? 0),
        };
      }
      let message = `HTTP ${res.status}`;
      try {
        message = parseStatus(JSON.parse(res.text))?.message ?? message;
      } catch { /* not a Status: keep the code */ }
      if (res.status === 409) return { kind: "conflict", message };
      if (res.status === 404) return { kind: "not-found", message };
      if ([400, 403, 422].includes(res.status)) {
        return { kind: "rejected", code: res.status, message };
      }
      // 429, 5xx: the answer does not say whether the change was stored.
      throw httpError(res.status, res.text, what);
    });
  }

  listObjects(ref: KubeResourceRef, opts: KubeListOptions = {}): Promise<KubeList<KubeObject>> {
    return this.#bounded(`LIST ${resourcePath(ref, opts.namespace)}`, opts, async (signal) => {
      for (let attempt = 0;; attempt++) {
        try {
          return await this.#listAll(ref, opts, signal);
        } catch (e) {
          // A continue token outlived the server's history (410): start the list again.
          if (!(e instanceof CairnError && e.reason === "KubeWatchExpired") || attempt >= 2) {
            throw e;
          }
        }
      }
    });
  }

  async #listAll(
    ref: KubeResourceRef,
    opts: KubeListOptions,
    signal: AbortSignal | undefined,
  ): Promise<KubeList<KubeObject>> {
    const items: KubeObject[] = [];
    let resourceVersion: string | undefined;
    let cont: string | undefined;
    do {
      const page = await this.#listPage(ref, opts, this.#pageSize, cont, signal);
      resourceVersion ??= page.resourceVersion;
      // Each page's whole objects are garbage once cut: the list never holds them all at once.
      for (const o of page.items) items.push(opts.project ? opts.project(o) : o);
      cont = page.cont;
    } while (cont);
    return { items, resourceVersion: resourceVersion ?? "" };
  }

  async #listPage(
    ref: KubeResourceRef,
    opts: KubeSelectorOptions,
    limit: number,
    cont?: string,
    signal?: AbortSignal,
  ): Promise<{ items: KubeObject[]; resourceVersion: string; cont: string | undefined }> {
    const path = resourcePath(ref, opts.namespace);
    const body = rec(
      await this.#getJson(path, {
        limit: String(limit),
        labelSelector: opts.labelSelector,
        fieldSelector: opts.fieldSelector,
        continue: cont,
      }, signal),
    );
    if (!Array.isArray(body.items)) throw badResponse(`GET ${path}`, "list has no items");
    const meta = rec(body.metadata);
    const kind = typeof body.kind === "string" ? body.kind.replace(/List$/, "") : undefined;
    const apiVersion = body.apiVersion;
    // List items omit kind/apiVersion on the wire; put them back so objects are self-describing.
    const items = (body.items as R[]).map((o) => ({ kind, apiVersion, ...o }) as KubeObject);
    const next = typeof meta.continue === "string" && meta.continue !== ""
      ? meta.continue
      : undefined;
    return { items, resourceVersion: String(meta.resourceVersion ?? ""), cont: next };
  }

  async watch(
    ref: KubeResourceRef,
    opts: KubeWatchOptions,
    onEvent: (event: KubeWatchEvent) => void,
  ): Promise<KubeWatchEnd> {
    if (opts.signal?.aborted) return { kind: "aborted" };
    // "Omitted = from now": without a version the server would replay the current state.
    const from = opts.resourceVersion ?? (await this.#listPage(ref, opts, 1)).resourceVersion;
    return watchResource(
      new this.lib.Watch(this.kc),
      resourcePath(ref, opts.namespace),
      { ...opts, resourceVersion: from },
      onEvent,
    );
  }

  /**
   * One GET through the proxy subresource. Any HTTP status the route answers is returned (a 503
   * from a server whose streams lag is the evidence); only no answer at all throws.
   */
  proxyGet(target: KubeProxyTarget, opts: KubeProxyOptions): Promise<KubeProxyAnswer> {
    const path = proxyPath(target);
    return this.#bounded(`GET ${path}`, opts, async (signal) => {
      const res = await this.#raw("GET", path, {}, signal);
      const bytes = new TextEncoder().encode(res.text);
      const truncated = bytes.length > opts.maxBytes;
      const body = truncated
        ? new TextDecoder().decode(bytes.subarray(0, opts.maxBytes))
        : res.text;
      return { status: res.status, body, truncated };
    });
  }

  async #getJson(
    path: string,
    query: Record<string, string | undefined>,
    signal?: AbortSignal,
  ): Promise<unknown> {
    const res = await this.#raw("GET", path, query, signal);
    return this.#json(res, `GET ${path}`);
  }

  #json(res: RawResponse, what: string): unknown {
    if (res.status < 200 || res.status > 299) throw httpError(res.status, res.text, what);
    try {
      return JSON.parse(res.text);
    } catch {
      throw badResponse(what, "body is not JSON");
    }
  }

  /**
   * client-node 1.x gives every request a new https.Agent, so every request opened a new TLS
   * connection (the client key parsed again, a full handshake): most of the CPU of a Kubernetes
   * read. The request keeps the agent's TLS options but goes through one keep-alive agent per
   * set of options, so a rotated certificate or CA in the kubeconfig still gets an agent of its
   * own. A proxy agent (or plain HTTP) is left as the library made it.
   */
  #reuseConnection(ctx: K8s.RequestContext): void {
    const fresh = ctx.getAgent();
    if (!(fresh instanceof HttpsAgent) || fresh.constructor !== HttpsAgent) return;
    const o = (fresh as HttpsAgent & { options: Record<string, unknown> }).options;
    // Compared byte for byte, not through a text key: the library decodes the kubeconfig's
    // certificates into new buffers on every request, and encoding them again to build a key
    // was a third of this method's CPU per read.
    let entry = this.#agents.find((a) => TLS_IDENTITY.every((k) => sameOption(a.options[k], o[k])));
    if (!entry) {
      // Identities change only when the kubeconfig's credentials do: forget superseded agents
      // rather than keep one per rotation forever.
      if (this.#agents.length >= 4) this.#agents.length = 0;
      const options = Object.fromEntries(TLS_IDENTITY.map((k) => [k, o[k]]));
      entry = {
        options,
        agent: new HttpsAgent({ ...options, keepAlive: true, keepAliveMsecs: 1_000 }),
      };
      this.#agents.push(entry);
    }
    ctx.setAgent(entry.agent);
  }

  async #send(ctx: K8s.RequestContext): Promise<RawResponse> {
    const rsp = await this.#http.send(ctx).toPromise();
    return { status: rsp.httpStatusCode, headers: rsp.headers, text: await rsp.body.text() };
  }

  /** One request through the library's HTTP pipeline and kubeconfig authentication. */
  async #raw(
    method: "GET" | "POST" | "PATCH",
    path: string,
    query: Record<string, string | undefined>,
    signal?: AbortSignal,
    accept = "application/json",
    body?: string,
    contentType = "application/json",
  ): Promise<RawResponse> {
    const ctx = this.#server.makeRequestContext(path, this.lib.HttpMethod[method]);
    if (signal) ctx.setSignal(signal);
    if (body !== undefined) {
      ctx.setHeaderParam("Content-Type", contentType);
      ctx.setBody(body);
    }
    for (const [k, v] of Object.entries(query)) {
      if (v !== undefined && v !== "") ctx.setQueryParam(k, v);
    }
    ctx.setHeaderParam("Accept", accept);
    try {
      await this.kc.applySecurityAuthentication(ctx);
      // Only reads ride a kept-alive connection; a write keeps a connection of its own, as
      // before. Deno sends a request again on a new connection when its kept-alive one fails,
      // and it does so even for a request abandoned at its deadline (denoland/deno#36786): a
      // repeated read is harmless, a repeated eviction or patch is not.
      // (test/adapters/kube/client_node_kube_test.ts: a read whose connection the server drops.)
      if (method === "GET") this.#reuseConnection(ctx);
      return method === "GET" ? await getWithAgent(ctx, signal) : await this.#send(ctx);
    } catch (e) {
      throw transportError(e, `${method} ${path}`);
    }
  }
}

/** Whether two TLS options are the same: buffers (and lists of them) by content. */
function sameOption(a: unknown, b: unknown): boolean {
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return a.equals(b);
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((x, i) => sameOption(x, b[i]));
  }
  return a === b;
}

/** The agent options client-node sets that decide which TLS connection a request may use. */
const TLS_IDENTITY = [
  "ca",
  "cert",
  "key",
  "pfx",
  "passphrase",
  "rejectUnauthorized",
  "servername",
] as const;

/**
 * One GET over the agent the library's authentication chose (its CA, client certificate, proxy
 * and server-name settings, exactly as the library would send it), the body decoded as it
 * streams in (over the kept-alive agent `#reuseConnection` gave it, for https). The library's
 * own fetch keeps every chunk as a buffer until the body is complete and copies them once more:
 * a list of a large cluster then leaves ~100 MB of buffers for the collector, which the
 * allocator does not give back (bench/reconciler_memory_bench.ts).
 */
function getWithAgent(
  ctx: K8s.RequestContext,
  signal: AbortSignal | undefined,
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new DOMException("aborted", "AbortError"));
    const url = ctx.getUrl();
    // A plain-http server is allowed by the library only with skipTLSVerify (its http.Agent).
    const req = (url.startsWith("http:") ? httpRequest : httpsRequest)(url, {
      method: "GET",
      headers: ctx.getHeaders(),
      agent: ctx.getAgent() as HttpsAgent | undefined,
    }, (res) => {
      res.setEncoding("utf8");
      let text = "";
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => {
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers)) {
          if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(", ") : v;
        }
        resolve({ status: res.statusCode ?? 0, headers, text });
      });
      res.on("error", reject);
    });
    const onAbort = () => req.destroy(new DOMException("aborted", "AbortError"));
    signal?.addEventListener("abort", onAbort, { once: true });
    req.on("close", () => signal?.removeEventListener("abort", onAbort));
    req.on("error", reject);
    req.end();
  });
}

/** `/api/v1/namespaces/NS/{pods|services}/NAME:PORT/proxy/PATH`, every segment escaped. */
export function proxyPath(t: KubeProxyTarget): string {
  const plural = t.kind === "pod" ? "pods" : "services";
  const rest = t.path.split("/").filter((s) => s !== "").map(encodeURIComponent).join("/");
  return `/api/v1/namespaces/${encodeURIComponent(t.namespace)}/${plural}/` +
    `${encodeURIComponent(t.name)}:${encodeURIComponent(t.port)}/proxy/${rest}`;
}
