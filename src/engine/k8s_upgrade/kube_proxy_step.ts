/**
 * kube-proxy in a KubernetesUpgrade (docs/plans.md#plan-kinds), after the control plane and
 * before the kubelets, as `talosctl upgrade-k8s` orders it. Talos renders kube-proxy's DaemonSet
 * from each control plane's `cluster.proxy.image` but only creates missing bootstrap objects, so
 * upgrade-k8s patches every control plane's configuration and then syncs the manifests. cairn
 * does the same in its own operations: one per control plane changes `cluster.proxy.image`
 * (the configuration change of `step.ts`), and the last control plane's operation then changes
 * the DaemonSet's image itself through the one mutation path, as narrowly as it can (a strategic
 * merge of that one container's image under cairn's field manager, with the resourceVersion it
 * judged as a precondition, never forced, never a whole-manifest apply).
 *
 * The guard: a field of kube-proxy's containers owned by another manager (a GitOps controller)
 * refuses before the commitment and stops the operation before the change; the precondition
 * makes the API server refuse a change to a DaemonSet that moved since it was judged. The
 * postcondition is observed, never taken from the change's answer: the DaemonSet rolled
 * (domain/k8s_upgrade/kube_proxy.ts).
 */
import {
  componentImage,
  imagePath,
  type UpgradeComponent,
} from "../../domain/k8s_upgrade/machine_config.ts";
import {
  type DaemonSetFacts,
  foreignTemplateOwners,
  KUBE_PROXY,
  kubeProxyReading,
  type ProxyPodFacts,
} from "../../domain/k8s_upgrade/kube_proxy.ts";
import { managedFieldsOf } from "../../domain/k8s_upgrade/ownership.ts";
import type { PostconditionReading } from "../../domain/operation.ts";
import type { KubernetesUpgradePlan } from "../../domain/plan/schema.ts";
import type { Reason } from "../../domain/reasons.ts";
import type { Kube, KubeObject, KubeResourceRef } from "../../ports/kube.ts";
import { CAIRN_FIELD_MANAGER } from "../cordon_ownership.ts";
import type { StepState } from "../executor/deps.ts";
import { mutate, type Sent } from "../executor/mutation.ts";
import { haltUnresolved, type NodeOutcome } from "../executor/step_outcome.ts";
import { configVersionOf } from "./config_floor.ts";
import { imageTag } from "./read_evidence.ts";

type Step = StepState<KubernetesUpgradePlan>;

const DAEMONSETS: KubeResourceRef = {
  group: "apps",
  version: "v1",
  plural: "daemonsets",
  namespaced: true,
};
const POD_LIST: KubeResourceRef = { group: "", version: "v1", plural: "pods", namespaced: true };

/** What `step.ts` lends this module (it owns the operation's settle and the config read). */
export interface KubeProxyKit {
  readonly settle: (
    s: Step,
    component: UpgradeComponent,
    look: () => Promise<{
      readonly reading: PostconditionReading;
      readonly summary: string;
      readonly version: string | undefined;
      readonly objectUid: string;
      readonly resourceVersion: string;
    }>,
  ) => Promise<NodeOutcome>;
  readonly readConfig: (
    s: Step,
    timeoutMs: number,
  ) => Promise<{ ok: true; config: string; version: string } | { ok: false; error: string }>;
}

/** The control plane whose kube-proxy operation changes the DaemonSet: the plan's last one. */
export function daemonSetMover(plan: KubernetesUpgradePlan): string | undefined {
  return plan.spec.nodes.filter((n) => n.role === "controlplane").at(-1)?.name;
}

const label = `DaemonSet ${KUBE_PROXY.namespace}/${KUBE_PROXY.name}`;

/** The ownership guard on one read of the DaemonSet: undefined when no other manager owns. */
export function kubeProxyOwnershipProblem(ds: KubeObject): string | undefined {
  const foreign = foreignTemplateOwners(
    managedFieldsOf(ds.metadata?.managedFields) ?? [],
    CAIRN_FIELD_MANAGER,
  );
  if (foreign.length === 0) return undefined;
  return foreign.map((f) =>
    `${label} field ${f.path} is owned by ${f.manager} (${f.operation || "unknown operation"}); ` +
    `changing kube-proxy's image would take it over`
  ).join("; ");
}

/**
 * Before a kube-proxy commitment: the DaemonSet read and its ownership judged. A foreign owner
 * refuses; an unreadable DaemonSet holds (nothing is committed either way).
 */
export async function kubeProxyPrecheck(
  kube: Kube,
  timeoutMs: number,
): Promise<{ readonly reason: Reason; readonly detail: string; refused: boolean } | undefined> {
  let ds: KubeObject | undefined;
  try {
    ds = await kube.getObject(DAEMONSETS, KUBE_PROXY.name, KUBE_PROXY.namespace, { timeoutMs });
  } catch (e) {
    return { reason: "KubeProxyUnreadable", detail: `${label}: ${String(e)}`, refused: false };
  }
  if (!ds) {
    return { reason: "KubeProxyUnreadable", detail: `${label} does not exist`, refused: false };
  }
  const problem = kubeProxyOwnershipProblem(ds);
  return problem
    ? { reason: "KubeProxyOwnedElsewhere", detail: problem, refused: true }
    : undefined;
}

/** After a control plane's `cluster.proxy.image` was changed: the DaemonSet if it is the last. */
export async function kubeProxyAfterConfig(
  s: Step,
  target: string,
  kit: KubeProxyKit,
  /** The configuration version the accepted change was based on, when it was a number. */
  basedOn?: bigint,
): Promise<NodeOutcome> {
  const plan = s.bound.plan;
  const deadline = plan.spec.phases.deadlines.controlPlane;
  const timeoutMs = s.deps.callTimeoutMs(deadline.transportSeconds * 1000);
  const to = plan.spec.to;
  const mover = daemonSetMover(plan);
  const configLook = async () => {
    const c = await kit.readConfig(s, timeoutMs);
    // The accepted change left the document at least one version past its basis: an older
    // answer is from before the change (a lagging proxy or cache) and judges nothing.
    const version = c.ok ? configVersionOf(c.version) : undefined;
    const stale = basedOn !== undefined && version !== undefined && version <= basedOn;
    const image = c.ok && !stale ? componentImage(c.config, "kube-proxy") : undefined;
    const tag = image ? imageTag(image) : undefined;
    const reading: PostconditionReading = !c.ok || !image
      ? "unreadable"
      : tag === to
      ? "established"
      : "contradicted";
    const words = !c.ok
      ? c.error
      : stale
      ? `${s.node}'s machine configuration read at version ${c.version}, from before the change ` +
        `(based on version ${basedOn})`
      : `${s.node}'s ${imagePath("kube-proxy")} names ${image ?? "nothing"} (MachineConfigs)`;
    return { reading, words, tag };
  };
  if (s.node !== mover) {
    return await kit.settle(s, "kube-proxy", async () => {
      const c = await configLook();
      return {
        reading: c.reading,
        summary: `${c.words}; the DaemonSet moves with ${mover}'s operation`,
        version: c.tag,
        objectUid: "",
        resourceVersion: "",
      };
    });
  }
  // Judged on one read, changed only at that read's resourceVersion: a manager that appears in
  // between makes the API server refuse (409) rather than be taken over.
  let ds: KubeObject | undefined;
  try {
    ds = await s.deps.kube.getObject(DAEMONSETS, KUBE_PROXY.name, KUBE_PROXY.namespace, {
      timeoutMs,
    });
  } catch (e) {
    return await haltUnresolved(s, "KubeProxyUnreadable", `${label}: ${String(e)}`);
  }
  if (!ds?.metadata?.resourceVersion) {
    return await haltUnresolved(s, "KubeProxyUnreadable", `${label} does not exist`);
  }
  const problem = kubeProxyOwnershipProblem(ds);
  if (problem) return await haltUnresolved(s, "KubeProxyOwnedElsewhere", problem);
  const expectedResourceVersion = ds.metadata.resourceVersion;
  const changed = await mutate<undefined>(s, {
    phase: "kube-proxy-image",
    request: {
      api: `PATCH apps/v1 daemonsets ${KUBE_PROXY.namespace}/${KUBE_PROXY.name}`,
      patch: "strategic-merge",
      container: KUBE_PROXY.container,
      image: target,
      expectedResourceVersion,
      fieldManager: CAIRN_FIELD_MANAGER,
    },
    route: `kube:daemonsets/${KUBE_PROXY.namespace}/${KUBE_PROXY.name}`,
    deadline,
    send: async (ms): Promise<Sent<undefined>> => {
      const r = await s.deps.kube.setContainerImage(
        DAEMONSETS,
        KUBE_PROXY.namespace,
        KUBE_PROXY.name,
        { container: KUBE_PROXY.container, image: target, expectedResourceVersion },
        { timeoutMs: ms },
      );
      // Stored says nothing about the pods: the rollout is observed below.
      return r.kind === "applied"
        ? {
          responseClass: "accepted",
          detail: `template stored at resourceVersion ${r.resourceVersion}, generation ` +
            `${r.generation}`,
        }
        : { responseClass: "rejected-pre-mutation", detail: `${r.kind}: ${r.message}` };
    },
  });
  if (changed.kind === "refused") return await haltUnresolved(s, changed.reason, changed.detail);
  if (changed.sent.responseClass !== "accepted") {
    const refused = changed.sent.responseClass === "rejected-pre-mutation";
    return await haltUnresolved(
      s,
      refused ? "KubeProxyChangeRefused" : "KubeProxyChangeLost",
      changed.sent.detail,
    );
  }
  return await kit.settle(s, "kube-proxy", async () => {
    const [c, r] = await Promise.all([configLook(), readRollout(s.deps.kube, timeoutMs)]);
    const judged = kubeProxyReading(r.ds, r.pods, to);
    const reading: PostconditionReading =
      judged.reading === "contradicted" || c.reading === "contradicted"
        ? "contradicted"
        : judged.reading === "established" && c.reading === "established"
        ? "established"
        : "unreadable";
    return {
      reading,
      summary: `${judged.summary}; ${c.words}`,
      version: r.ds?.templateImage ? imageTag(r.ds.templateImage) : undefined,
      objectUid: r.uid,
      resourceVersion: r.resourceVersion,
    };
  });
}

/** The DaemonSet's status and its pods, read; a failed read leaves that side undefined. */
async function readRollout(kube: Kube, timeoutMs: number): Promise<{
  ds: DaemonSetFacts | undefined;
  pods: ProxyPodFacts[] | undefined;
  uid: string;
  resourceVersion: string;
}> {
  const [ds, list] = await Promise.all([
    kube.getObject(DAEMONSETS, KUBE_PROXY.name, KUBE_PROXY.namespace, { timeoutMs })
      .catch(() => undefined),
    kube.listObjects(POD_LIST, { namespace: KUBE_PROXY.namespace, timeoutMs })
      .catch(() => undefined),
  ]);
  type R = Record<string, unknown>;
  const rec = (v: unknown): R => (v && typeof v === "object" ? v as R : {});
  const spec = rec(ds?.spec), status = rec(ds?.status);
  const containers = (rec(rec(spec.template).spec).containers ?? []) as R[];
  const num = (v: unknown) => (typeof v === "number" ? v : undefined);
  const facts: DaemonSetFacts | undefined = ds
    ? {
      generation: num(ds.metadata?.generation) ?? 0,
      observedGeneration: num(status.observedGeneration),
      templateImage: containers.find((c) => c.name === KUBE_PROXY.container)?.image as
        | string
        | undefined,
      desired: num(status.desiredNumberScheduled),
      updated: num(status.updatedNumberScheduled),
      available: num(status.numberAvailable),
    }
    : undefined;
  // The DaemonSet's own pods: controlled by it (its uid), whatever their labels say.
  const uid = ds?.metadata?.uid;
  const pods = list && uid
    ? list.items.filter((p) =>
      ((rec(p.metadata).ownerReferences ?? []) as R[]).some((o) =>
        o.controller === true && o.uid === uid
      )
    ).map((p): ProxyPodFacts => {
      const ps = rec(p.spec), st = rec(p.status);
      const c = ((ps.containers ?? []) as R[]).find((x) => x.name === KUBE_PROXY.container);
      return {
        name: String(p.metadata?.name ?? ""),
        node: String(ps.nodeName ?? ""),
        image: c?.image as string | undefined,
        ready: ((st.conditions ?? []) as R[]).some((x) =>
          x.type === "Ready" && x.status === "True"
        ),
        terminating: rec(p.metadata).deletionTimestamp !== undefined,
      };
    })
    : undefined;
  return {
    ds: facts,
    pods,
    uid: uid ?? "",
    resourceVersion: String(ds?.metadata?.resourceVersion ?? ""),
  };
}
