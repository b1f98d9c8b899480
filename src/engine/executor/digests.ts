import { sha256Hex } from "../../domain/plan/digest.ts";
import type { StepBinding } from "../../ports/journal.ts";
import type { TalosUpgradePlan } from "../../domain/plan/schema.ts";

/**
 * What the journal compares. `preDigest` is the node as the plan declares it (cluster, node
 * name, role, address); an evidence observation carries it only when both sides named one machine
 * there — the same one the commitment bound (observe.ts, domain/machine_identity.ts) — so a
 * reused address or a replaced machine cannot receive a request meant for another. `postDigest` is the bound postcondition:
 * the target version and schematic running on that machine with the bound health passing.
 */
const enc = new TextEncoder();

export function identityText(
  cluster: string,
  node: { name: string; role: string; address: string },
): string {
  return `identity:${cluster}/${node.name}/${node.role}@${node.address}`;
}

export function postconditionText(
  cluster: string,
  node: string,
  version: string,
  schematic: string,
  health: string,
): string {
  return `post:${cluster}/${node}@${version}#${schematic}|health=${health}`;
}

export function digestOf(text: string): Promise<string> {
  return sha256Hex(enc.encode(text));
}

/** The step key of a node in a plan. */
export function stepKey(node: string): string {
  return `${node}/0`;
}

/** The journal's step bindings for a TalosUpgrade plan (one step per node, final hop's target). */
export async function stepBindings(plan: TalosUpgradePlan): Promise<StepBinding[]> {
  const hop = plan.spec.hops[plan.spec.hops.length - 1]!;
  const cluster = plan.metadata.cluster;
  return await Promise.all(plan.spec.nodes.map(async (n) => ({
    step: stepKey(n.name),
    machine: n.name,
    preDigest: await digestOf(identityText(cluster, n)),
    postDigest: await digestOf(
      postconditionText(cluster, n.name, hop.to, hop.installer.schematic, "pass"),
    ),
  })));
}

/** Digest of the exact request an attempt sends. */
export function requestDigest(request: unknown): Promise<string> {
  return digestOf(JSON.stringify(request));
}
