/**
 * A KubernetesUpgrade world on the in-process twin: home-ops with its Kubernetes components
 * modelled (`kubernetesComponents`), the example plan for the twin's Talos version, parsed.
 */
import { join } from "node:path";
import { type ParsedPlan, parsePlan } from "../../src/domain/plan/parse.ts";
import type { KubernetesUpgradePlan } from "../../src/domain/plan/schema.ts";
import type { ClusterDescription } from "../../src/sim/cluster_description.ts";
import type { Fault } from "../../src/sim/faults.ts";
import { type InprocTwin, startInprocTwin } from "../../src/sim/inproc/cluster.ts";
import { homeOps } from "./inproc_world.ts";
import { ROOT } from "./twin_world.ts";

export const K8S_PLAN_PATH = join(ROOT, "plans/kubernetes-v1.36.0-talos-v1.13.9.yaml");

export type K8sComponents = NonNullable<ClusterDescription["spec"]["kubernetesComponents"]>;

export const COMPONENTS: K8sComponents = {
  inventory: "present",
  restartSeconds: 20,
  deprecatedApiRequests: [],
};

/** home-ops with the components modelled (and optional edits). */
export async function k8sDescription(
  k8s: Partial<K8sComponents> = {},
  edit?: (d: ClusterDescription) => void,
): Promise<ClusterDescription> {
  const d = await homeOps();
  d.spec.kubernetesComponents = { ...COMPONENTS, ...k8s };
  edit?.(d);
  return d;
}

export async function k8sTwin(
  o: { k8s?: Partial<K8sComponents>; faults?: Fault[]; edit?: (d: ClusterDescription) => void } =
    {},
): Promise<InprocTwin> {
  return startInprocTwin({
    description: await k8sDescription(o.k8s, o.edit),
    ...(o.faults ? { faults: o.faults } : {}),
  });
}

/** The example plan, optionally edited. */
export async function k8sPlan(
  edit: (text: string) => string = (t) => t,
): Promise<{ parsed: ParsedPlan; plan: KubernetesUpgradePlan; bytes: Uint8Array }> {
  const bytes = new TextEncoder().encode(edit(await Deno.readTextFile(K8S_PLAN_PATH)));
  const parsed = await parsePlan(bytes, { file: K8S_PLAN_PATH });
  return { parsed, plan: parsed.plan as KubernetesUpgradePlan, bytes };
}
