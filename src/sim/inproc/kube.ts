/**
 * The `Kube` port in process: every call goes straight to the twin's Kubernetes store and
 * controllers (`../kube/`) on the shared SimClock and FaultSchedule, with no HTTP and no socket.
 * What the socket twin's API server does for each request (request faults, selectors, the
 * merge patch with its resourceVersion precondition and managedFields entry, the Eviction
 * subresource, watches replayed from the store's history) is done here with the same model
 * functions, and every answer is turned into the port's values by the real adapter's own
 * mapping (`adapters/kube/map.ts`, `eviction_outcome.ts`, `errors.ts`): the same Eviction
 * answers, the same `Kube*` reasons, thrown where `ClientNodeKube` throws them.
 *
 * Objects cross the boundary as copies (as JSON over the wire would), and watch events are
 * delivered asynchronously in store order, never from inside a store write.
 */
import type {
  ContainerImageChange,
  CordonOutcome,
  CreateOutcome,
  EvictionOutcome,
  EvictOptions,
  Kube,
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
  KubeServerVersion,
  KubeWatchEnd,
  KubeWatchEvent,
  KubeWatchOptions,
  PatchOutcome,
  PodRef,
} from "../../ports/kube.ts";
import { CairnError } from "../../domain/errors.ts";
import { httpError, transportError } from "../../adapters/kube/errors.ts";
import { classifyEviction } from "../../adapters/kube/eviction_outcome.ts";
import {
  NODES,
  readNode,
  readNodeList,
  readPdbList,
  readPod,
  readPodList,
} from "../../adapters/kube/typed_reads.ts";
import type { FaultSchedule } from "../faults.ts";
import type { Controllers } from "../kube/controllers.ts";
import { evictPod, statusBody } from "../kube/eviction.ts";
import { clone, mergePatch, strategicMerge } from "../kube/patch.ts";
import { parseFieldSelector, parseLabelSelector, SelectorError } from "../kube/selectors.ts";
import { parseDeprecatedApiMetrics } from "../../domain/k8s_upgrade/deprecated_apis.ts";
import type { DeprecatedApiUse } from "../../domain/k8s_upgrade/preflight.ts";
import { servedVersion } from "../kube/bootstrap.ts";
import type { KubeSimStats } from "../kube/server.ts";
import { recordUpdate } from "../kube/ssa.ts";
import { GoneError, type Obj, type ResourceType, type Store } from "../kube/store.ts";
import type { VirtualTime } from "./time.ts";

/** The field manager `ClientNodeKube` writes with (cordon ownership is read from it). */
const FIELD_MANAGER = "cairn";

export interface InprocKubeOptions {
  readonly store: Store;
  readonly controllers: Controllers;
  readonly time: VirtualTime;
  readonly faults: FaultSchedule;
  /** What `/version` reports (the cluster description's `kubernetesVersion`). */
  readonly kubernetesVersion: string;
  /** The apiserver's `/metrics` text (the deprecated-API gauge); absent: an empty exposition. */
  readonly metrics?: () => string;
  /** Field manager of writes (default `cairn`, as the real adapter). */
  readonly fieldManager?: string;
  /**
   * Items per LIST page (default 500, as `ClientNodeKube`): a list counts one request per page,
   * and each page can meet a request fault, as the real adapter's paged LISTs do.
   */
  readonly pageSize?: number;
}

/** An HTTP answer the simulated server gave instead of running the request. */
interface Refusal {
  readonly code: number;
  readonly body: Record<string, unknown>;
  readonly headers: Readonly<Record<string, string>>;
}

/** A copy, as an object read off the wire would be. */
function wire<T>(o: T): T {
  return clone(o);
}

function path(ref: KubeResourceRef, namespace?: string, name?: string): string {
  const base = ref.group === "" ? `/api/${ref.version}` : `/apis/${ref.group}/${ref.version}`;
  const ns = ref.namespaced && namespace ? `/namespaces/${namespace}` : "";
  return `${base}${ns}/${ref.plural}${name !== undefined ? `/${name}` : ""}`;
}

export class InprocKube implements Kube {
  readonly stats: KubeSimStats = {
    total: 0,
    mutating: 0,
    byVerb: {},
    evictions: { accepted: 0, blocked: 0, failed: 0 },
  };
  readonly #o: InprocKubeOptions;
  readonly #watches = new Set<() => void>();

  constructor(o: InprocKubeOptions) {
    this.#o = o;
  }

  /** Cuts every open watch (the twin's `/kube/disconnect-watches`). */
  disconnectWatches(): void {
    for (const stop of [...this.#watches]) stop();
  }

  /** Counts one request and takes a request-level fault (HTTP 429/5xx storm) armed for it. */
  #request(verb: string, name: string | undefined): Refusal | undefined {
    this.stats.total++;
    this.stats.byVerb[verb] = (this.stats.byVerb[verb] ?? 0) + 1;
    if (verb === "patch" || verb === "evict" || verb === "create") this.stats.mutating++;
    const storm = this.#o.faults.take("kube.request", name, this.#o.time.sim.now());
    if (storm?.kind !== "http-storm" && storm?.kind !== "unavailable") return undefined;
    const code = storm.kind === "unavailable" ? 503 : Number(storm.params?.status ?? 429);
    const reason = code === 429 ? "TooManyRequests" : "ServiceUnavailable";
    return {
      code,
      body: statusBody(code, reason, "simulated fault"),
      headers: { "retry-after": "1" },
    };
  }

  #type(ref: KubeResourceRef): ResourceType | undefined {
    return this.#o.store.findType(ref.group, ref.version, ref.plural);
  }

  requestedDeprecatedApis(): Promise<readonly DeprecatedApiUse[]> {
    const refused = this.#request("discovery", undefined);
    if (refused) return Promise.reject(httpError(refused.code, refused.body, "GET /metrics"));
    return Promise.resolve(parseDeprecatedApiMetrics(this.#o.metrics?.() ?? ""));
  }

  serverVersion(): Promise<KubeServerVersion> {
    const refused = this.#request("discovery", undefined);
    if (refused) return Promise.reject(httpError(refused.code, refused.body, "GET /version"));
    const v = servedVersion(this.#o.store, this.#o.kubernetesVersion);
    const [major, minor] = v.slice(1).split(".");
    return Promise.resolve({ gitVersion: v, major: major ?? "", minor: minor ?? "" });
  }

  getNode(name: string): Promise<KubeNode | undefined> {
    return readNode(this, name);
  }

  listNodes(opts: { readonly labelSelector?: string } = {}): Promise<KubeList<KubeNode>> {
    return readNodeList(this, opts);
  }

  listPods(onNode?: string, opts: KubeListOptions = {}): Promise<KubeList<KubePod>> {
    return readPodList(this, onNode, opts);
  }

  getPod(ref: PodRef): Promise<KubePod | undefined> {
    return readPod(this, ref);
  }

  listPdbs(opts: KubeListOptions = {}): Promise<KubeList<KubePdb>> {
    return readPdbList(this, opts);
  }

  getObject(
    ref: KubeResourceRef,
    name: string,
    namespace?: string,
  ): Promise<KubeObject | undefined> {
    const what = `GET ${path(ref, namespace, name)}`;
    const refused = this.#request("get", name);
    if (refused) return Promise.reject(httpError(refused.code, refused.body, what));
    const t = this.#type(ref);
    const o = t && this.#o.store.get(t, ref.namespaced ? namespace : undefined, name);
    return Promise.resolve(o ? wire(o) as KubeObject : undefined);
  }

  /** The route model's answer, cut at `maxBytes` as the real adapter cuts it. */
  proxyGet(target: KubeProxyTarget, opts: KubeProxyOptions): Promise<KubeProxyAnswer> {
    const refused = this.#request("proxy", target.name);
    if (refused) {
      return Promise.resolve({
        status: refused.code,
        body: JSON.stringify(refused.body),
        truncated: false,
      });
    }
    const a = this.#o.controllers.routes.answer(this.#o.store, this.#o.controllers.pods, target);
    const bytes = new TextEncoder().encode(a.body);
    const truncated = bytes.length > opts.maxBytes;
    return Promise.resolve({
      status: a.status,
      body: truncated ? new TextDecoder().decode(bytes.subarray(0, opts.maxBytes)) : a.body,
      truncated,
    });
  }

  listObjects(ref: KubeResourceRef, opts: KubeListOptions = {}): Promise<KubeList<KubeObject>> {
    try {
      return Promise.resolve(this.#list(ref, opts));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** A LIST, paged as ClientNodeKube pages it (`limit`: only the first page, as for a watch's start). */
  #list(ref: KubeResourceRef, opts: KubeListOptions, limit?: number): KubeList<KubeObject> {
    const what = `GET ${path(ref, opts.namespace)}`;
    const refused = this.#request("list", undefined);
    if (refused) throw httpError(refused.code, refused.body, what);
    const t = this.#type(ref);
    if (!t) {
      throw httpError(
        404,
        statusBody(404, "NotFound", "the server could not find the requested resource"),
        what,
      );
    }
    const match = this.#filter(t, ref, opts, what);
    const matching = this.#o.store.list(t, ref.namespaced ? opts.namespace : undefined)
      .filter(match);
    const items = (limit !== undefined ? matching.slice(0, limit) : matching)
      .map((o) => opts.project ? opts.project(wire(o) as KubeObject) : wire(o) as KubeObject);
    const pages = Math.max(1, Math.ceil(items.length / (this.#o.pageSize ?? 500)));
    for (let page = 2; page <= pages; page++) {
      const more = this.#request("list", undefined);
      if (more) throw httpError(more.code, more.body, what);
    }
    return { items, resourceVersion: String(this.#o.store.resourceVersion) };
  }

  #filter(
    t: ResourceType,
    ref: KubeResourceRef,
    opts: KubeListOptions,
    what: string,
  ): (o: Obj) => boolean {
    try {
      const labels = parseLabelSelector(opts.labelSelector);
      const fields = parseFieldSelector(opts.fieldSelector);
      const ns = ref.namespaced ? opts.namespace : undefined;
      return (o) =>
        (ns === undefined || !t.namespaced || o.metadata.namespace === ns) &&
        labels(o.metadata.labels ?? {}) && fields(o);
    } catch (e) {
      if (e instanceof SelectorError) {
        throw httpError(400, statusBody(400, "BadRequest", e.message), what);
      }
      throw e;
    }
  }

  /** A POST as the API server answers it: stored (201), already there (409), or refused. */
  createObject(
    ref: KubeResourceRef,
    namespace: string | undefined,
    body: Readonly<Record<string, unknown>>,
  ): Promise<CreateOutcome> {
    const what = `POST ${path(ref, namespace)}`;
    const meta = (body["metadata"] ?? {}) as Record<string, unknown>;
    const name = typeof meta["name"] === "string" ? meta["name"] : "";
    const refused = this.#request("create", name);
    if (refused) return Promise.reject(httpError(refused.code, refused.body, what));
    const t = this.#type(ref);
    if (!t) {
      return Promise.resolve({
        kind: "rejected",
        code: 404,
        message: `the server could not find the requested resource (${ref.plural})`,
      });
    }
    if (name === "") {
      return Promise.resolve({ kind: "rejected", code: 422, message: "metadata.name: Required" });
    }
    const input = clone(body) as unknown as Obj;
    input.metadata = { ...(input.metadata ?? {}), name, ...(namespace ? { namespace } : {}) };
    const stored = this.#o.store.create(t, input);
    if (!stored) {
      return Promise.resolve({
        kind: "exists",
        message: `${ref.plural}.${ref.group} "${name}" already exists`,
      });
    }
    return Promise.resolve({
      kind: "created",
      uid: stored.metadata.uid ?? "",
      resourceVersion: stored.metadata.resourceVersion ?? "",
    });
  }

  /**
   * As `ClientNodeKube`: a strategic merge patch of one container's image (the list merged by
   * name) carrying the expected resourceVersion, applied only if the object is still at it (409
   * otherwise), recorded under the field manager; the store bumps the generation.
   */
  setContainerImage(
    ref: KubeResourceRef,
    namespace: string,
    name: string,
    change: ContainerImageChange,
  ): Promise<PatchOutcome> {
    const what = `PATCH ${path(ref, namespace)}/${name}`;
    const refused = this.#request("patch", name);
    if (refused) return Promise.reject(httpError(refused.code, refused.body, what));
    const t = this.#type(ref);
    const cur = t && this.#o.store.get(t, namespace, name);
    if (!t || !cur) {
      return Promise.resolve({ kind: "not-found", message: `${ref.plural} "${name}" not found` });
    }
    if (change.expectedResourceVersion !== cur.metadata.resourceVersion) {
      return Promise.resolve({
        kind: "conflict",
        message: `Operation cannot be fulfilled on ${ref.plural}.${ref.group} "${name}": the ` +
          "object has been modified; please apply your changes to the latest version and try again",
      });
    }
    const patch = {
      metadata: { resourceVersion: change.expectedResourceVersion },
      spec: {
        template: { spec: { containers: [{ name: change.container, image: change.image }] } },
      },
    };
    const next = strategicMerge(cur, patch) as Obj;
    next.metadata.resourceVersion = cur.metadata.resourceVersion;
    const manager = this.#o.fieldManager ?? FIELD_MANAGER;
    recordUpdate(next, cur, patch, manager, t, this.#o.time.sim.now());
    const stored = this.#o.store.put(t, next);
    return Promise.resolve({
      kind: "applied",
      resourceVersion: String(stored.metadata.resourceVersion),
      generation: Number(stored.metadata.generation ?? 0),
    });
  }

  cordon(node: string, expectedResourceVersion: string): Promise<CordonOutcome> {
    return this.#setUnschedulable(node, expectedResourceVersion, true);
  }

  uncordon(node: string, expectedResourceVersion: string): Promise<CordonOutcome> {
    return this.#setUnschedulable(node, expectedResourceVersion, null);
  }

  /**
   * As `ClientNodeKube`: read the node (the prior value), then a merge patch carrying the
   * expected resourceVersion, applied by the server only if the node is still at it (409
   * otherwise), recorded under the field manager. `null` removes the field, as kubectl uncordon.
   */
  async #setUnschedulable(node: string, rv: string, value: true | null): Promise<CordonOutcome> {
    const before = await this.getObject(NODES, node);
    if (!before) return { kind: "not-found", message: `node "${node}" not found` };
    const prior = (before.spec as Record<string, unknown> | undefined)?.unschedulable === true;
    const what = `PATCH node ${node}`;
    const refused = this.#request("patch", node);
    if (refused) throw httpError(refused.code, refused.body, what);
    const { store, controllers, time } = this.#o;
    const cur = store.get(controllers.nodes, undefined, node);
    if (!cur) return { kind: "not-found", message: `nodes "${node}" not found` };
    const patch = { metadata: { resourceVersion: rv }, spec: { unschedulable: value } };
    if (rv !== cur.metadata.resourceVersion) {
      return {
        kind: "conflict",
        message: `Operation cannot be fulfilled on nodes "${node}": the object has been ` +
          "modified; please apply your changes to the latest version and try again",
      };
    }
    const next = mergePatch(cur, patch) as Obj;
    next.metadata.resourceVersion = cur.metadata.resourceVersion;
    const manager = this.#o.fieldManager ?? FIELD_MANAGER;
    recordUpdate(next, cur, patch, manager, controllers.nodes, time.sim.now());
    const stored = store.put(controllers.nodes, next);
    return {
      kind: "applied",
      priorUnschedulable: prior,
      resourceVersion: String(stored.metadata.resourceVersion),
    };
  }

  evict(pod: PodRef, opts: EvictOptions = {}): Promise<EvictionOutcome> {
    const what = `evict ${pod.namespace}/${pod.name}`;
    try {
      return Promise.resolve(this.#evict(pod, opts, what));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  #evict(pod: PodRef, opts: EvictOptions, what: string): EvictionOutcome {
    const refused = this.#request("evict", pod.name);
    if (refused) return classifyEviction(refused.code, refused.body, refused.headers, what);
    const { store, controllers, faults, time } = this.#o;
    const fault = faults.take("kube.evict", pod.name, time.sim.now());
    if (fault && fault.kind !== "lose-response") {
      const code = fault.kind === "unavailable" ? 503 : Number(fault.params?.status ?? 429);
      const reason = code === 429 ? "TooManyRequests" : "ServiceUnavailable";
      return classifyEviction(code, statusBody(code, reason, "simulated fault"), {}, what);
    }
    const cur = store.get(controllers.pods, pod.namespace, pod.name);
    if (!cur) {
      const body = statusBody(404, "NotFound", `pods "${pod.name}" not found`);
      return classifyEviction(404, body, {}, what);
    }
    const deleteOptions = opts.gracePeriodSeconds !== undefined
      ? { gracePeriodSeconds: opts.gracePeriodSeconds }
      : {};
    const body = {
      apiVersion: "policy/v1",
      kind: "Eviction",
      metadata: { name: pod.name, namespace: pod.namespace },
      deleteOptions,
    };
    const reply = evictPod(controllers, cur, body, opts.dryRun === true);
    this.stats.evictions[reply.outcome === "gone" ? "failed" : reply.outcome]++;
    // The effect happened; the connection dropped before the answer (a transport error).
    if (fault?.kind === "lose-response") throw transportError(new Error("socket hang up"), what);
    return classifyEviction(reply.httpStatus, wire(reply.body), reply.headers ?? {}, what);
  }

  watch(
    ref: KubeResourceRef,
    opts: KubeWatchOptions,
    onEvent: (event: KubeWatchEvent) => void,
  ): Promise<KubeWatchEnd> {
    if (opts.signal?.aborted) return Promise.resolve({ kind: "aborted" });
    let from: string;
    try {
      // "Omitted = from now": ClientNodeKube lists one item for the collection's version.
      from = opts.resourceVersion ?? this.#list(ref, { ...opts }, 1).resourceVersion;
    } catch (e) {
      return Promise.reject(e);
    }
    const what = `WATCH ${path(ref, opts.namespace)}`;
    const refused = this.#request("watch", undefined);
    if (refused) {
      const e = httpError(refused.code, refused.body, what);
      return Promise.resolve({ kind: "failed", reason: e.reason, message: e.message });
    }
    const { store, faults, time } = this.#o;
    const t = this.#type(ref);
    if (!t) {
      const e = httpError(404, statusBody(404, "NotFound", "not found"), what);
      return Promise.resolve({ kind: "failed", reason: e.reason, message: e.message });
    }
    let match: (o: Obj) => boolean;
    try {
      match = this.#filter(t, ref, opts, what);
    } catch (e) {
      if (!(e instanceof CairnError)) return Promise.reject(e);
      return Promise.resolve({ kind: "failed", reason: e.reason, message: e.message });
    }
    let replay: ReadonlyArray<{ type: KubeWatchEvent["type"]; object: Obj }>;
    try {
      replay = from !== "" && from !== "0"
        ? store.eventsSince(t, Number(from))
        : store.list(t, ref.namespaced ? opts.namespace : undefined).map((o) => ({
          type: "ADDED" as const,
          object: o,
        }));
    } catch (e) {
      if (!(e instanceof GoneError)) return Promise.reject(e);
      return Promise.resolve({ kind: "expired" });
    }
    return new Promise((resolve) => {
      // `live`: the stream still takes events; `dropped`: our abort, so queued ones are discarded.
      let live = true, dropped = false;
      const deliver = (type: KubeWatchEvent["type"], object: Obj) => {
        if (!match(object)) return;
        const copy = wire(object) as KubeObject;
        queueMicrotask(() => {
          if (!dropped) onEvent({ type, object: copy });
        });
      };
      for (const e of replay) deliver(e.type, e.object);
      const unwatch = store.watch(t, (e) => {
        if (live) deliver(e.type, e.object);
      });
      const detach = () => {
        live = false;
        unwatch();
        this.#watches.delete(stop);
        opts.signal?.removeEventListener("abort", onAbort);
      };
      const stop = () => {
        if (!live) return;
        detach();
        // After the events already queued, as a stream's end follows its last line.
        queueMicrotask(() => resolve({ kind: "closed" }));
      };
      const onAbort = () => {
        if (!live) return;
        dropped = true;
        detach();
        resolve({ kind: "aborted" });
      };
      this.#watches.add(stop);
      opts.signal?.addEventListener("abort", onAbort, { once: true });
      const cut = faults.take("kube.watch", ref.plural, time.sim.now());
      if (cut?.kind === "watch-disconnect") stop();
    });
  }
}
