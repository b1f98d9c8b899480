import type { Actor } from "../../ports/journal.ts";
import type { KubeNode } from "../../ports/kube.ts";
import {
  identityRecord,
  type IdentityVerdict,
  judgeIdentity,
  type MachineIdentity,
  SYSTEM_INFORMATION,
  uuidFromNode,
  uuidFromSystemInformation,
  type UuidReading,
} from "../../domain/machine_identity.ts";
import { digestOf, identityText } from "./digests.ts";
import type { StepState } from "./deps.ts";
import type { Plan } from "../../domain/plan/schema.ts";

/**
 * The default bound of an identity read: a TalosUpgrade's verify transport deadline, a
 * ConfigApply's apply transport deadline; one minute for a kind without either.
 */
function evidenceReadMs(plan: Plan): number {
  switch (plan.kind) {
    case "TalosUpgrade":
      return plan.spec.phases.deadlines.verify.transportSeconds * 1000;
    case "ConfigApply":
      return plan.spec.phases.deadlines.apply.transportSeconds * 1000;
    case "KubernetesUpgrade":
      return plan.spec.phases.deadlines.controlPlane.transportSeconds * 1000;
    default:
      return 60_000;
  }
}

/** The controller as a journal actor. */
export function controllerActor(owner: string): Actor {
  return { identity: owner, role: "controller" };
}

/** An evidence observation as recorded, and what it says about the machine. */
export interface Evidence {
  readonly id: string;
  readonly verdict: IdentityVerdict;
}

/**
 * Re-observes the machine's identity on both sides and records it as `evidence` for this plan
 * (and operation, once there is one): the Kubernetes Node of the plan's node name (its
 * `systemUUID`) and Talos at the plan's address (SystemInformation `uuid`), judged against the
 * identity the commitment bound, when there is one. The basis is allocated before the remote
 * reads, so "after" means a higher basis.
 *
 * Only an observation that names the committed machine on both sides gets the bound identity
 * digest; any other is recorded under a `Machine…` digest that no comparison accepts, and its
 * summary says why — a machine that cannot be identified cannot be dispatched to, and the newer
 * record contradicts every older evidence of the same machine in the journal.
 */
export async function observeEvidence(
  s: Pick<StepState<Plan>, "deps" | "bound" | "node" | "address"> & {
    readonly operationId?: string;
    /** The identity bound at commitment (absent for the commitment's own evidence). */
    readonly committed?: MachineIdentity;
  },
  /** Bound of each read, phase time (default: the plan's verify transport deadline). */
  transportMs = evidenceReadMs(s.bound.plan),
): Promise<Evidence> {
  const { journal, kube, talos, clock, owner } = s.deps;
  const actor = controllerActor(owner);
  const timeoutMs = s.deps.callTimeoutMs(transportMs);
  const basis = await journal.startObservation(s.node, actor, clock.now());
  const failed = (e: unknown): UuidReading => ({
    ok: false,
    error: e instanceof Error ? e.message : String(e),
  });
  // Both sides at once, each bounded by the same phase time; a read past its deadline is
  // unreadable, never a match.
  type KubeRead = { node?: KubeNode; reading: UuidReading };
  const [kubeRead, talosReading] = await Promise.all([
    kube.getNode(s.node, { timeoutMs }).then(
      (n): KubeRead => ({
        ...(n ? { node: n } : {}),
        reading: n ? uuidFromNode(n.systemUUID) : { ok: false, error: `node ${s.node} not found` },
      }),
      (e): KubeRead => ({ reading: failed(e) }),
    ),
    talos.resource(s.address, SYSTEM_INFORMATION, { timeoutMs }).then(
      (r) => uuidFromSystemInformation(r.yamlSpec),
      (e) => failed(e),
    ),
  ]);
  const node = kubeRead.node;
  const kubeReading = kubeRead.reading;
  const verdict = judgeIdentity(
    { node: s.node, address: s.address, kube: kubeReading, talos: talosReading },
    s.committed,
  );
  const cluster = s.bound.plan.metadata.cluster;
  // The role is the observed Node's, the name and address the ones observed at: the journal
  // compares the digest with the plan's declared node.
  const digest = verdict.ok
    ? await digestOf(
      identityText(cluster, {
        name: node!.name,
        role: node!.controlPlane ? "controlplane" : "worker",
        address: s.address,
      }),
    )
    : `${verdict.reason}:${verdict.detail}`.slice(0, 200);
  const rec = await journal.recordObservation({
    machine: s.node,
    purpose: "evidence",
    planDigest: s.bound.digest,
    ...(s.operationId ? { operationId: s.operationId } : {}),
    basis,
    digest,
    ...(verdict.ok ? { machineIdentity: identityRecord(verdict.identity) } : {}),
    objectUid: node?.uid ?? "",
    resourceVersion: node?.resourceVersion ?? "",
    observedGeneration: 0,
    observedAtMs: clock.now(),
    summary: verdict.ok
      ? `${identityRecord(verdict.identity)} ready=${node!.ready} ` +
        `unschedulable=${node!.unschedulable} os=${node!.osImage}`
      : `${verdict.reason}: ${verdict.detail}`.slice(0, 1000),
    actor,
  });
  return { id: rec.id, verdict };
}
