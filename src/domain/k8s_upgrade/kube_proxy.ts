/**
 * kube-proxy's postcondition and its ownership guard, judged on what was read (pure).
 *
 * kube-proxy runs from one DaemonSet (`kube-system/kube-proxy`, Talos's bootstrap manifest). Its
 * image change is done when the DaemonSet controller has rolled it: the controller observed the
 * current generation, every node it wants is scheduled at that template (`updatedNumberScheduled`)
 * and available (`numberAvailable`), and every kube-proxy pod there is runs the target image and
 * is ready. The answer to the change itself proves none of that (it only says the template was
 * stored), so the reading comes from the DaemonSet's status and its pods.
 */
import type { PostconditionReading } from "../operation.ts";
import { BOOTSTRAP_FIELD_MANAGER, type ManagedFieldsEntry, ownedFields } from "./ownership.ts";

/** The DaemonSet's name and namespace, and its container (Talos's manifest). */
export const KUBE_PROXY = { namespace: "kube-system", name: "kube-proxy", container: "kube-proxy" };

/** What the DaemonSet says about itself. */
export interface DaemonSetFacts {
  readonly generation: number;
  readonly observedGeneration: number | undefined;
  /** The kube-proxy container's image in the pod template. */
  readonly templateImage: string | undefined;
  readonly desired: number | undefined;
  readonly updated: number | undefined;
  readonly available: number | undefined;
}

/** One kube-proxy pod as read. */
export interface ProxyPodFacts {
  readonly name: string;
  readonly node: string;
  readonly image: string | undefined;
  readonly ready: boolean;
  /** Being deleted (a rollout replacing it): not counted as a running pod. */
  readonly terminating: boolean;
}

/** A reading of the rollout with its words. */
export interface KubeProxyReading {
  readonly reading: PostconditionReading;
  readonly summary: string;
}

function tagOf(image: string | undefined): string | undefined {
  if (!image) return undefined;
  const noDigest = image.split("@")[0]!;
  const slash = noDigest.lastIndexOf("/");
  const colon = noDigest.lastIndexOf(":");
  return colon > slash ? noDigest.slice(colon + 1) : undefined;
}

/**
 * Judges the rollout at `to`: established only when the controller observed the current
 * generation and every wanted pod is updated, available, at `to` and ready; contradicted when
 * the template names another version (changed or reverted) or a pod at `to` is read not ready;
 * anything else (a rollout still under way, a status not yet observed, a read that failed) is
 * unreadable — never completed, never failed on a timeout alone.
 */
export function kubeProxyReading(
  ds: DaemonSetFacts | undefined,
  pods: readonly ProxyPodFacts[] | undefined,
  to: string,
): KubeProxyReading {
  if (!ds || !pods) {
    return {
      reading: "unreadable",
      summary: `kube-proxy's ${ds ? "pods" : "DaemonSet"} could not be read`,
    };
  }
  const running = pods.filter((p) => !p.terminating);
  const atTarget = running.filter((p) => tagOf(p.image) === to);
  const notReady = atTarget.filter((p) => !p.ready);
  const older = running.filter((p) => tagOf(p.image) !== to);
  const status = `generation ${ds.generation} (observed ${ds.observedGeneration ?? "none"}), ` +
    `desired ${ds.desired ?? "?"}, updated ${ds.updated ?? "?"}, available ${ds.available ?? "?"}`;
  const pods_ =
    `${atTarget.length - notReady.length} of ${running.length} pod(s) at ${to} and ready` +
    (notReady.length
      ? `; not ready: ${notReady.map((p) => `${p.name} on ${p.node}`).join(", ")}`
      : "") +
    (older.length
      ? `; at another version: ${
        older.map((p) => `${p.name} on ${p.node} ${tagOf(p.image) ?? "?"}`).join(", ")
      }`
      : "");
  const summary = `kube-proxy DaemonSet template ${
    ds.templateImage ?? "unreadable"
  }, ${status}; ${pods_}`;
  const templateTag = tagOf(ds.templateImage);
  if ((templateTag !== undefined && templateTag !== to) || notReady.length > 0) {
    return { reading: "contradicted", summary };
  }
  const want = ds.desired;
  const rolled = templateTag === to &&
    ds.observedGeneration === ds.generation &&
    want !== undefined && want > 0 &&
    ds.updated === want && ds.available === want &&
    running.length === want && atTarget.length === want;
  return { reading: rolled ? "established" : "unreadable", summary };
}

const CONTAINERS = ".spec.template.spec.containers";

/** A field of the DaemonSet owned by a manager that is neither Talos's bootstrap one nor cairn. */
export interface ForeignOwnership {
  readonly path: string;
  readonly manager: string;
  readonly operation: string;
}

/**
 * The fields of kube-proxy's containers that another manager (a GitOps controller) owns — the
 * list, a container, its image or anything of it: changing the image would take such a field
 * over or fight that manager, so the guard refuses. Only the main resource counts (status is
 * the controller's). `cairnManager` is cairn's own field manager (a previous run's image change
 * is cairn's, not someone else's).
 */
export function foreignTemplateOwners(
  managedFields: readonly ManagedFieldsEntry[],
  cairnManager: string,
): ForeignOwnership[] {
  const out: ForeignOwnership[] = [];
  for (const e of managedFields) {
    if (e.subresource !== "") continue;
    if (e.manager === BOOTSTRAP_FIELD_MANAGER || e.manager === cairnManager) continue;
    for (const f of ownedFields(e.fieldsV1)) {
      const within = f.path === CONTAINERS || f.path.startsWith(`${CONTAINERS}[`);
      // A field owned whole above the list (`.spec.template` as a leaf) holds the list too.
      const above = f.whole && CONTAINERS.startsWith(`${f.path}.`);
      if (within || above) {
        out.push({ path: f.path, manager: e.manager, operation: e.operation });
      }
    }
  }
  return out;
}
