/**
 * The `LeaseStore` port over the Kubernetes API (`coordination.k8s.io/v1` Leases), through
 * `@kubernetes/client-node`'s HTTP pipeline and kubeconfig authentication: GET, POST (create)
 * and PUT with the read resourceVersion (update). 409 is the lost race the election expects
 * (`conflict`); everything else that fails is a `Kube*` error. Every call has a deadline.
 */
import type * as K8s from "@kubernetes/client-node";
import type { LeaseSpec, LeaseStore, LeaseWrite, ObservedLease } from "../../ports/lease.ts";
import { httpError, timeoutError, transportError } from "./errors.ts";
import { type KubeConfigSource, type Lib, loadKubeConfig } from "./client_node_kube.ts";
import { leaseFromWire, leaseToWire } from "./lease_map.ts";

export interface LeaseClientOptions extends KubeConfigSource {
  readonly namespace: string;
  readonly name: string;
  /** Deadline of a call without its own (ms). */
  readonly defaultTimeoutMs?: number;
}

/** Opens the Lease client (loads the library and the kubeconfig). */
export async function createLeaseClient(o: LeaseClientOptions): Promise<LeaseStore> {
  const { lib, kc, server } = await loadKubeConfig(o);
  return new LeaseClient(lib, kc, server.replace(/\/+$/, ""), o);
}

interface Answer {
  readonly status: number;
  readonly text: string;
}

class LeaseClient implements LeaseStore {
  readonly where: string;
  readonly #server: K8s.ServerConfiguration<Record<string, string>>;
  readonly #http: K8s.IsomorphicFetchHttpLibrary;
  readonly #collection: string;

  constructor(
    private readonly lib: Lib,
    private readonly kc: K8s.KubeConfig,
    server: string,
    private readonly o: LeaseClientOptions,
  ) {
    this.where = `${o.namespace}/${o.name}`;
    this.#server = new lib.ServerConfiguration(server, {});
    this.#http = new lib.IsomorphicFetchHttpLibrary();
    this.#collection = `/apis/coordination.k8s.io/v1/namespaces/${
      encodeURIComponent(o.namespace)
    }/leases`;
  }

  get #object(): string {
    return `${this.#collection}/${encodeURIComponent(this.o.name)}`;
  }

  async get(opts?: { timeoutMs?: number }): Promise<ObservedLease | undefined> {
    const what = `GET lease ${this.where}`;
    const a = await this.#call("GET", this.#object, undefined, what, opts?.timeoutMs);
    if (a.status === 404) return undefined;
    return leaseFromWire(this.#ok(a, what), what);
  }

  async create(spec: LeaseSpec, opts?: { timeoutMs?: number }): Promise<LeaseWrite> {
    const what = `create lease ${this.where}`;
    const body = leaseToWire(this.o.namespace, this.o.name, spec);
    const a = await this.#call("POST", this.#collection, body, what, opts?.timeoutMs);
    return this.#written(a, what);
  }

  async update(
    spec: LeaseSpec,
    resourceVersion: string,
    opts?: { timeoutMs?: number },
  ): Promise<LeaseWrite> {
    const what = `update lease ${this.where}`;
    const body = leaseToWire(this.o.namespace, this.o.name, spec, resourceVersion);
    const a = await this.#call("PUT", this.#object, body, what, opts?.timeoutMs);
    return this.#written(a, what);
  }

  #written(a: Answer, what: string): LeaseWrite {
    // 409: AlreadyExists on create, a stale resourceVersion on update. Both lose the race.
    if (a.status === 409) return { kind: "conflict", message: `${what}: ${a.text.slice(0, 300)}` };
    return { kind: "written", lease: leaseFromWire(this.#ok(a, what), what) };
  }

  #ok(a: Answer, what: string): unknown {
    if (a.status < 200 || a.status > 299) throw httpError(a.status, a.text, what);
    try {
      return JSON.parse(a.text);
    } catch {
      throw httpError(a.status, a.text, what);
    }
  }

  async #call(
    method: "GET" | "POST" | "PUT",
    path: string,
    body: unknown,
    what: string,
    timeoutMs = this.o.defaultTimeoutMs ?? 10_000,
  ): Promise<Answer> {
    const ctx = this.#server.makeRequestContext(path, this.lib.HttpMethod[method]);
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), Math.max(0, timeoutMs));
    ctx.setSignal(abort.signal);
    ctx.setHeaderParam("Accept", "application/json");
    if (body !== undefined) {
      ctx.setHeaderParam("Content-Type", "application/json");
      ctx.setBody(JSON.stringify(body));
    }
    try {
      await this.kc.applySecurityAuthentication(ctx);
      const rsp = await this.#http.send(ctx).toPromise();
      return { status: rsp.httpStatusCode, text: await rsp.body.text() };
    } catch (e) {
      if (abort.signal.aborted) throw timeoutError(what, timeoutMs);
      throw transportError(e, what);
    } finally {
      clearTimeout(timer);
    }
  }
}
