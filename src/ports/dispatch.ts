/**
 * What the dispatch check (`engine/authorize/dispatch_check.ts`) reads its current evidence
 * through: the plan's bound files as they are in the repository now, the identity of the cluster
 * connected to as the cluster reports it, and the installer images as the registry resolves them.
 * The trust root (`TrustRoot`, ports/reconcile.ts) and the clock come through their own ports.
 */
import type { Reason } from "../domain/reasons.ts";

/**
 * One bound file as read now: its bytes, why there are none, or why the path was refused
 * unread (it escapes the repository, goes through a symlink, is not a regular file or is over
 * the size cap: `BoundPath*` / `BoundFile*` reasons).
 */
export type BoundFileRead =
  | { readonly status: "read"; readonly bytes: Uint8Array }
  | { readonly status: "missing"; readonly detail: string }
  | { readonly status: "refused"; readonly reason: Reason; readonly detail: string };

/**
 * Reads a plan's bound files (catalogue, health policy, evidence manifest) by their
 * repository-relative path, from the repository as it is at the moment of the call (the working
 * tree for `cairn apply`, the watched branch's current tip for the reconciler).
 */
export interface BoundFileSource {
  /** Where the files come from, for reports (`working tree /…`, `main at 1a2b3c4d5e6f`). */
  describe(): string;
  read(path: string): Promise<BoundFileRead>;
}

/** The cluster's own statement of who it is. */
export interface ClusterIdentity {
  /** The cluster name the cluster reports (Talos: `cluster.clusterName` of the machine config). */
  readonly name: string;
  /** The cluster's generated id, when it reports one (Talos: `clusterId`). */
  readonly id: string;
  /** Where it was read, e.g. `Infos.cluster.talos.dev/current from worker-1`. */
  readonly source: string;
}

/**
 * Reads the identity of the cluster a node belongs to, from the node itself (never from the plan,
 * the kubeconfig or a context name). Throws when the cluster cannot be read.
 */
export interface ClusterIdentitySource {
  read(node: string): Promise<ClusterIdentity>;
}

/** An installer reference resolved for one platform. */
export interface InstallerResolution {
  /** The reference resolved (the hop's image without its pinned digest). */
  readonly reference: string;
  /** `os/architecture`. */
  readonly platform: string;
  /** Digest of the platform's image manifest. */
  readonly digest: string;
  /** Digest of the index the platform manifest was selected from, when it came from one. */
  readonly indexDigest?: string;
  /** Which registry answered (the twin's endpoint in tests and rehearsals). */
  readonly registry: string;
}

/** A resolution that did not produce a digest; `reason` is an `oci` reason code. */
export interface InstallerResolutionFailure {
  readonly reason: Reason;
  readonly message: string;
}

/** Resolves installer references through the OCI distribution API. */
export interface InstallerResolver {
  /** Where it resolves, for reports. */
  describe(): string;
  resolve(
    reference: string,
    platform: { readonly os: string; readonly architecture: string },
  ): Promise<
    { ok: true; value: InstallerResolution } | { ok: false; failure: InstallerResolutionFailure }
  >;
}
