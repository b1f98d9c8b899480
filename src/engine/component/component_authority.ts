/**
 * The dispatch authority of a ComponentUpgrade: the plan as approved, and current evidence
 * through ports. A ComponentUpgrade targets no node, so the cluster says who it is through its
 * first control plane (by name) at its InternalIP (Talos `Infos.cluster.talos.dev`). Shared by
 * `cairn apply` / the demo (`app/component_run.ts`) and the reconcile loop.
 */
import type { ComponentUpgradePlan } from "../../domain/plan/schema.ts";
import type { Clock } from "../../ports/clock.ts";
import type { BoundFileSource } from "../../ports/dispatch.ts";
import type { Kube } from "../../ports/kube.ts";
import type { TrustRoot } from "../../ports/reconcile.ts";
import type { Talos } from "../../ports/talos.ts";
import { talosClusterIdentity } from "../authorize/cluster_identity.ts";
import type { DispatchAuthority } from "../executor/dispatch_gate.ts";

/** Bound on one cluster-identity read (ms). */
const IDENTITY_READ_MS = 20_000;

export function componentAuthority(o: {
  readonly plan: ComponentUpgradePlan;
  readonly bytes: Uint8Array;
  readonly signatures: string;
  readonly requiredApprovals: number;
  readonly files: BoundFileSource;
  readonly trust?: TrustRoot;
  readonly clock: Clock;
  readonly cluster: { readonly kube: Kube; readonly talos: Talos };
  readonly callTimeoutMs: (remainingMs: number) => number;
}): DispatchAuthority {
  const identity = talosClusterIdentity(o.cluster.talos, o.callTimeoutMs(IDENTITY_READ_MS));
  return {
    subject: {
      plan: o.plan,
      bytes: o.bytes,
      signatures: o.signatures,
      requiredApprovals: o.requiredApprovals,
    },
    ports: {
      files: o.files,
      ...(o.trust ? { trust: o.trust } : {}),
      clock: o.clock,
      cluster: { read: async () => identity.read(await controlPlaneAddress(o.cluster.kube)) },
    },
  };
}

/** The first control plane (by name) at its InternalIP: where Talos is asked who the cluster is. */
export async function controlPlaneAddress(kube: Kube): Promise<string> {
  const nodes = (await kube.listNodes()).items.filter((n) => n.controlPlane)
    .sort((a, b) => a.name.localeCompare(b.name));
  const n = nodes[0];
  if (!n) throw new Error("no control-plane node to read the cluster's identity from");
  return n.internalIPs[0] ?? n.name;
}
