/**
 * A `coordination.k8s.io/v1` Lease as the leader election sees it: one named object, read and
 * written with optimistic concurrency (the resourceVersion). Types only; the adapter
 * (`adapters/kube/lease_client.ts`) and the in-process twin (`sim/inproc/lease.ts`) implement it.
 *
 * A lost race is a value (`conflict`), never an error: two replicas writing the same version is
 * the normal way an election is decided. Transport and server failures throw `CairnError` with a
 * `Kube*` reason, as the Kube port does.
 */

/** The Lease's spec, with times as epoch milliseconds (the wire has RFC 3339 micro-times). */
export interface LeaseSpec {
  /** Empty or absent: nobody holds it (released). */
  readonly holderIdentity?: string;
  readonly leaseDurationSeconds: number;
  readonly acquireTimeMs?: number;
  readonly renewTimeMs?: number;
  readonly leaseTransitions: number;
}

/** A Lease as read: its spec and the version a write must name. */
export interface ObservedLease {
  readonly spec: LeaseSpec;
  readonly resourceVersion: string;
}

/** What a write did: written (the new version) or lost to another writer. */
export type LeaseWrite =
  | { readonly kind: "written"; readonly lease: ObservedLease }
  | { readonly kind: "conflict"; readonly message: string };

/** One Lease object (its namespace and name are the adapter's configuration). */
export interface LeaseStore {
  /** Where the Lease lives, for logs: `namespace/name`. */
  readonly where: string;
  /** undefined when the Lease does not exist yet. */
  get(opts?: { readonly timeoutMs?: number }): Promise<ObservedLease | undefined>;
  /** Creates it; `conflict` when it already exists. */
  create(spec: LeaseSpec, opts?: { readonly timeoutMs?: number }): Promise<LeaseWrite>;
  /** Replaces it only if it is still at `resourceVersion`; `conflict` otherwise. */
  update(
    spec: LeaseSpec,
    resourceVersion: string,
    opts?: { readonly timeoutMs?: number },
  ): Promise<LeaseWrite>;
}
