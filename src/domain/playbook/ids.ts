/**
 * The protected components cairn has a playbook for, by the playbook's id (`metadata.name` of
 * `playbooks/<id>.yaml`). The playbooks are the source of truth: this list is what the pure plan
 * schema can see of them, and `test/domain/playbook/ids_test.ts` holds it to the shipped
 * directory (a playbook added, renamed or removed without this list fails that test).
 */
import type { PlanKind } from "../plan/schema.ts";

/** Every shipped playbook's id, sorted. */
export const PLAYBOOK_IDS = [
  "cert-manager",
  "cilium",
  "cloudnative-pg",
  "coredns",
  "envoy-gateway",
  "external-secrets",
  "flux",
  "gpu-operator",
  "kubernetes",
  "litellm-operator",
  "miroir",
  "rook-ceph",
  "spegel",
  "talos",
  "tuppr",
  "volsync",
] as const;

export type PlaybookComponentId = (typeof PLAYBOOK_IDS)[number];

/**
 * Components whose upgrade cairn executes under a plan kind of its own: a ComponentUpgrade of
 * one would only watch Flux while the machines it names are changed by something else.
 */
export const OWN_PLAN_KIND: Readonly<Partial<Record<PlaybookComponentId, PlanKind>>> = {
  talos: "TalosUpgrade",
  kubernetes: "KubernetesUpgrade",
};

/** The components a ComponentUpgrade may name: every playbook without a plan kind of its own. */
export const COMPONENT_UPGRADE_IDS: readonly string[] = PLAYBOOK_IDS.filter((id) =>
  OWN_PLAN_KIND[id] === undefined
);

/**
 * Why `id` cannot be a ComponentUpgrade's component (undefined when it can): a component with a
 * plan kind of its own, or one no playbook describes (the message lists the known ids).
 */
export function componentIdProblem(id: string): string | undefined {
  if (COMPONENT_UPGRADE_IDS.includes(id)) return undefined;
  const own = (OWN_PLAN_KIND as Record<string, PlanKind | undefined>)[id];
  if (own) {
    return `component ${JSON.stringify(id)} is upgraded by a ${own} plan, not a ComponentUpgrade`;
  }
  return `no playbook has the id ${JSON.stringify(id.slice(0, 80))}; known components: ${
    COMPONENT_UPGRADE_IDS.join(", ")
  } (the ids of playbooks/*.yaml)`;
}
