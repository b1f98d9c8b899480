/**
 * The `LeaseStore` port in process: one Lease in the twin's Kubernetes store, read and written
 * as the socket twin's API server does it (the same validation, `sim/kube/lease.ts`; the
 * resourceVersion precondition of an update; AlreadyExists on a second create), and mapped by
 * the real adapter's own functions (`adapters/kube/lease_map.ts`). Several replicas' electors
 * share one twin by opening one store each on the same Lease.
 */
import { httpError } from "../../adapters/kube/errors.ts";
import { leaseFromWire, LEASES, leaseToWire } from "../../adapters/kube/lease_map.ts";
import type { LeaseSpec, LeaseStore, LeaseWrite, ObservedLease } from "../../ports/lease.ts";
import { statusBody } from "../kube/eviction.ts";
import { leaseRefusal } from "../kube/lease.ts";
import { clone } from "../kube/patch.ts";
import type { Obj, Store } from "../kube/store.ts";

/** Counts of Lease requests, for tests that bound an election's traffic. */
export interface LeaseStats {
  reads: number;
  writes: number;
  conflicts: number;
}

export class InprocLeaseStore implements LeaseStore {
  readonly where: string;
  readonly stats: LeaseStats = { reads: 0, writes: 0, conflicts: 0 };
  /** While set, every call fails as an unreachable API server would (a partitioned replica). */
  unreachable = false;

  constructor(
    private readonly store: Store,
    private readonly namespace: string,
    private readonly name: string,
  ) {
    this.where = `${namespace}/${name}`;
  }

  get #type() {
    return this.store.findType(LEASES.group, LEASES.version, LEASES.plural)!;
  }

  #reachable(what: string): void {
    if (this.unreachable) {
      throw httpError(503, statusBody(503, "ServiceUnavailable", "simulated partition"), what);
    }
  }

  get(): Promise<ObservedLease | undefined> {
    const what = `GET lease ${this.where}`;
    this.#reachable(what);
    this.stats.reads++;
    const o = this.store.get(this.#type, this.namespace, this.name);
    return Promise.resolve(o ? leaseFromWire(clone(o), what) : undefined);
  }

  create(spec: LeaseSpec): Promise<LeaseWrite> {
    const what = `create lease ${this.where}`;
    this.#reachable(what);
    this.stats.writes++;
    const o = leaseToWire(this.namespace, this.name, spec) as Obj;
    this.#valid(o, what);
    const created = this.store.create(this.#type, o);
    if (!created) return this.#conflict(`leases "${this.name}" already exists`);
    return Promise.resolve({
      kind: "written",
      lease: leaseFromWire(clone(created), what),
    });
  }

  update(spec: LeaseSpec, resourceVersion: string): Promise<LeaseWrite> {
    const what = `update lease ${this.where}`;
    this.#reachable(what);
    this.stats.writes++;
    const cur = this.store.get(this.#type, this.namespace, this.name);
    if (!cur) {
      throw httpError(404, statusBody(404, "NotFound", `leases "${this.name}" not found`), what);
    }
    if (cur.metadata.resourceVersion !== resourceVersion) {
      return this.#conflict(
        `Operation cannot be fulfilled on leases "${this.name}": the object has been modified`,
      );
    }
    const next = {
      ...clone(cur),
      spec: leaseToWire(this.namespace, this.name, spec).spec,
    } as Obj;
    this.#valid(next, what);
    const put = this.store.put(this.#type, next);
    return Promise.resolve({ kind: "written", lease: leaseFromWire(clone(put), what) });
  }

  #valid(o: Obj, what: string): void {
    const bad = leaseRefusal(o);
    if (bad) throw httpError(bad.code, statusBody(bad.code, bad.reason, bad.message), what);
  }

  #conflict(message: string): Promise<LeaseWrite> {
    this.stats.conflicts++;
    return Promise.resolve({ kind: "conflict", message });
  }
}
