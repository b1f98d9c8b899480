/**
 * Flux and the operators it hands charts to, on the twin's virtual clock (the playbooks, `playbooks/`): a merge on
 * the watched branch reaches the cluster the way it does in a home-ops cluster, in steps a
 * reader can see and that can fail to happen.
 *
 * 1. source-controller fetches the Git revision (`GitRepository` artifact `main@sha1:<commit>`);
 *    kustomize-controller applies it (every `Kustomization`'s `lastAppliedRevision`), which
 *    changes the `OCIRepository` pins it carries (`spec.ref.tag`, a new generation).
 * 2. source-controller fetches each moved chart (`OCIRepository` artifact `<tag>@sha256:…` at the
 *    current generation, Ready).
 * 3. helm-controller upgrades each `HelmRelease` whose `chartRef` names it (`history[0]`,
 *    `lastAttemptedRevision`, Ready at the current generation) and the chart renders its own
 *    workloads: the Rook operator Deployment, the Cilium agent DaemonSet (which rolls node by
 *    node on any change), the CloudNative-PG operator.
 * 4. Operators render what they own. The Rook operator re-renders the CSI plugins (the
 *    `app.kubernetes.io/part-of=ceph-csi` workloads) only when it reconciles its CRs again: its
 *    own pod restarting on an image bump does that (`rookRerendersOnRestart`, default true, as on
 *    1.21.0); when it does not, the plugins keep the old cephcsi however long one waits. The
 *    CloudNative-PG operator rolls every instance after its own upgrade: replicas first, then a
 *    switchover, then the old primary.
 *
 * Images roll pod by pod in place (the container image and the kubelet's `containerStatuses`),
 * one pod per `rollStepSeconds`, so a reader sees old and new images side by side mid-roll.
 */
import { createHash } from "node:crypto";
import type { SimClock } from "../clock.ts";
import type { Obj, ResourceType, Store } from "./store.ts";
import { bundledCephcsi } from "../gitops/upstream.ts";
import { REVISION_LABEL, revisionOf, ROLLED_IN_PLACE } from "./daemonset_rollout.ts";

type R = Record<string, unknown>;
const rec = (v: unknown): R => (v !== null && typeof v === "object" ? v as R : {});

/** What the twin's Flux and operators do, and how long each step takes (virtual seconds). */
export interface GitOpsTwinOptions {
  readonly store: Store;
  readonly clock: SimClock;
  readonly gitFetchSeconds?: number;
  readonly applySeconds?: number;
  readonly chartFetchSeconds?: number;
  readonly helmUpgradeSeconds?: number;
  /** The Rook operator's pod restart on its own image bump re-reconciles the CSI Driver CRs. */
  readonly rookRerendersOnRestart?: boolean;
  readonly operatorReconcileSeconds?: number;
  readonly rollStepSeconds?: number;
  /** The cephcsi version a rook-ceph chart tag bundles (undefined: the chart moves no plugin). */
  readonly bundledCephcsi?: (rookTag: string) => string | undefined;
}

/** A merge on the watched branch as the cluster will see it. */
export interface Merge {
  /** The merge commit (40 hex). */
  readonly commit: string;
  /** `namespace/name` of each OCIRepository → the tag the merged tree pins. */
  readonly ociTags: Readonly<Record<string, string>>;
}

const CSI_PART_OF = "ceph-csi";

export class GitOpsTwin {
  readonly #o: GitOpsTwinOptions;
  /** What happened, in order (for tests and the demo's narration). */
  readonly events: string[] = [];

  constructor(o: GitOpsTwinOptions) {
    this.#o = o;
  }

  #type(group: string, version: string, plural: string): ResourceType | undefined {
    return this.#o.store.findType(group, version, plural);
  }

  #after(seconds: number | undefined, fallback: number, fn: () => void): void {
    this.#o.clock.schedule((seconds ?? fallback) * 1000, fn);
  }

  #log(what: string): void {
    this.events.push(`${new Date(this.#o.clock.now()).toISOString()} ${what}`);
  }

  /** Starts delivering a merge; every step happens later on the virtual clock. */
  merge(m: Merge): void {
    const o = this.#o;
    this.#after(o.gitFetchSeconds, 10, () => {
      const revision = `main@sha1:${m.commit}`;
      for (const repo of this.#all("source.toolkit.fluxcd.io", "v1", "gitrepositories")) {
        this.#setStatus("source.toolkit.fluxcd.io", "v1", "gitrepositories", repo, (s) => ({
          ...s,
          observedGeneration: repo.metadata.generation ?? 1,
          artifact: { ...rec(s.artifact), revision },
          conditions: [ready("Succeeded", `stored artifact for revision '${revision}'`)],
        }));
      }
      this.#log(`source-controller fetched ${revision}`);
      this.#after(o.applySeconds, 5, () => this.#apply(m, revision));
    });
  }

  #apply(m: Merge, revision: string): void {
    const ociType = this.#type("source.toolkit.fluxcd.io", "v1", "ocirepositories");
    const moved: Obj[] = [];
    for (const [key, tag] of Object.entries(m.ociTags)) {
      const [ns, name] = key.split("/") as [string, string];
      const cur = ociType && this.#o.store.get(ociType, ns, name);
      if (!ociType || !cur || rec(rec(cur.spec).ref).tag === tag) continue;
      const spec = { ...rec(cur.spec), ref: { ...rec(rec(cur.spec).ref), tag } };
      moved.push(this.#o.store.put(ociType, { ...cur, spec }));
      this.#log(`kustomize-controller applied OCIRepository ${key} ref.tag ${tag}`);
    }
    for (const ks of this.#all("kustomize.toolkit.fluxcd.io", "v1", "kustomizations")) {
      this.#setStatus("kustomize.toolkit.fluxcd.io", "v1", "kustomizations", ks, (s) => ({
        ...s,
        observedGeneration: ks.metadata.generation ?? 1,
        lastAppliedRevision: revision,
        lastAttemptedRevision: revision,
        conditions: [ready("ReconciliationSucceeded", `Applied revision: ${revision}`)],
      }));
    }
    for (const oci of moved) {
      this.#after(this.#o.chartFetchSeconds, 10, () => this.#fetchChart(oci));
    }
  }

  #fetchChart(oci: Obj): void {
    const type = this.#type("source.toolkit.fluxcd.io", "v1", "ocirepositories")!;
    const cur = this.#o.store.get(type, oci.metadata.namespace, oci.metadata.name);
    if (!cur) return;
    const tag = String(rec(rec(cur.spec).ref).tag);
    const digest = createHash("sha256").update(`${cur.metadata.name}:${tag}`).digest("hex");
    const revision = `${tag}@sha256:${digest}`;
    this.#setStatus("source.toolkit.fluxcd.io", "v1", "ocirepositories", cur, (s) => ({
      ...s,
      observedGeneration: cur.metadata.generation ?? 1,
      artifact: { ...rec(s.artifact), revision, digest: `sha256:${digest}` },
      conditions: [ready("Succeeded", `stored artifact for digest '${tag}@sha256:${digest}'`)],
    }));
    this.#log(`source-controller fetched chart ${cur.metadata.name} ${revision}`);
    const releases = this.#all("helm.toolkit.fluxcd.io", "v2", "helmreleases").filter((hr) => {
      const ref = rec(rec(hr.spec).chartRef);
      return ref.kind === "OCIRepository" && ref.name === cur.metadata.name &&
        (ref.namespace ?? hr.metadata.namespace) === cur.metadata.namespace;
    });
    for (const hr of releases) {
      this.#after(this.#o.helmUpgradeSeconds, 20, () => this.#upgrade(hr, tag, digest));
    }
  }

  #upgrade(hr: Obj, tag: string, digest: string): void {
    const version = tag.replace(/^v/, "");
    const now = new Date(this.#o.clock.now()).toISOString();
    this.#setStatus("helm.toolkit.fluxcd.io", "v2", "helmreleases", hr, (s) => {
      const history = Array.isArray(s.history) ? s.history as unknown[] : [];
      const chartName = String(rec(history[0]).chartName ?? hr.metadata.name);
      return {
        ...s,
        observedGeneration: hr.metadata.generation ?? 1,
        lastAttemptedRevision: version,
        lastAttemptedRevisionDigest: `sha256:${digest}`,
        history: [
          {
            chartName,
            chartVersion: version,
            status: "deployed",
            digest: `sha256:${digest}`,
            firstDeployed: now,
            lastDeployed: now,
            version: history.length + 1,
          },
          ...history.slice(0, 4),
        ],
        conditions: [ready(
          "UpgradeSucceeded",
          `Helm upgrade succeeded for release ` +
            `${hr.metadata.namespace}/${hr.metadata.name}.v${history.length + 1} with chart ` +
            `${chartName}@${version}`,
        )],
      };
    });
    this.#log(
      `helm-controller upgraded HelmRelease ${hr.metadata.namespace}/${hr.metadata.name} to ${version}`,
    );
    this.#render(hr, tag);
  }

  /** What each chart renders itself (the operator's own Deployment, the agent DaemonSet). */
  #render(hr: Obj, tag: string): void {
    const ns = hr.metadata.namespace!;
    const chart = String(rec(rec(hr.spec).chartRef).name ?? hr.metadata.name);
    if (chart === "rook-ceph") {
      this.#rollImage("deployments", ns, "rook-ceph-operator", `docker.io/rook/ceph:${tag}`, () => {
        // The operator pod restarted on its new image.
        if (this.#o.rookRerendersOnRestart === false) {
          this.#log("rook-ceph operator restarted; it did not reconcile its CSI Driver CRs");
          return;
        }
        const csi = this.#o.bundledCephcsi?.(tag);
        if (!csi) return;
        this.#after(this.#o.operatorReconcileSeconds, 30, () => {
          this.#log(`rook-ceph operator reconciled its Driver CRs: cephcsi ${csi}`);
          for (const w of this.#csiWorkloads(ns)) {
            this.#rollImage(w.plural, ns, w.obj.metadata.name, `quay.io/cephcsi/cephcsi:${csi}`);
          }
        });
      });
    } else if (chart === "cilium") {
      const v = `v${tag.replace(/^v/, "")}`;
      this.#rollImage("daemonsets", ns, "cilium", `quay.io/cilium/cilium:${v}`);
    } else if (chart === "cloudnative-pg") {
      // The operator's new instance manager rolls every instance: replicas first, then a
      // switchover, then the old primary (seed 004: "a switchover then replica restarts").
      this.#log(`cloudnative-pg operator ${tag.replace(/^v/, "")} rolls its Cluster instances`);
      this.#after(this.#o.operatorReconcileSeconds, 30, () => this.#rollCnpg());
    }
  }

  /** Every CNPG Cluster: replicas restart one by one, a switchover, then the old primary. */
  #rollCnpg(): void {
    const pods = this.#type("", "v1", "pods");
    const clusters = this.#type("postgresql.cnpg.io", "v1", "clusters");
    if (!pods || !clusters) return;
    const step = (this.#o.rollStepSeconds ?? 10) * 1000;
    for (const c of this.#o.store.list(clusters)) {
      const ns = c.metadata.namespace!;
      const name = c.metadata.name;
      const members = () =>
        this.#o.store.list(pods, ns).filter((p) =>
          rec(p.metadata.labels)["cnpg.io/cluster"] === name
        );
      const role = (p: Obj) => rec(p.metadata.labels)["cnpg.io/instanceRole"];
      const queue = members().filter((p) => role(p) === "replica").map((p) => p.metadata.name)
        .sort();
      const oldPrimary = members().find((p) => role(p) === "primary")?.metadata.name;
      const next = () => {
        const podName = queue.shift();
        if (podName !== undefined) {
          this.#restartPod(pods, clusters, ns, name, podName, step, next);
          return;
        }
        if (!oldPrimary) return;
        // Switchover to the first ready replica, then restart the old primary as a replica.
        const to = members().find((p) => role(p) === "replica")?.metadata.name;
        if (!to) return;
        for (const p of members()) {
          const r = p.metadata.name === to ? "primary" : "replica";
          this.#o.store.put(pods, {
            ...p,
            metadata: {
              ...p.metadata,
              labels: { ...rec(p.metadata.labels), "cnpg.io/instanceRole": r, role: r },
            },
          });
        }
        this.#setCnpgStatus(clusters, ns, name, { currentPrimary: to });
        this.#log(`cnpg Cluster ${ns}/${name}: switchover from ${oldPrimary} to ${to}`);
        this.#restartPod(
          pods,
          clusters,
          ns,
          name,
          oldPrimary,
          step,
          () => this.#log(`cnpg Cluster ${ns}/${name}: every instance restarted`),
        );
      };
      next();
    }
  }

  /** The pod goes unready (its container restarts) and is ready again `ms` later. */
  #restartPod(
    pods: ResourceType,
    clusters: ResourceType,
    ns: string,
    cluster: string,
    name: string,
    ms: number,
    done: () => void,
  ): void {
    const set = (ready: boolean) => {
      const p = this.#o.store.get(pods, ns, name);
      if (!p) return;
      const status = rec(p.status);
      const conditions = ((status.conditions ?? []) as R[]).map((c) =>
        c.type === "Ready" || c.type === "ContainersReady"
          ? { ...c, status: ready ? "True" : "False" }
          : c
      );
      const containerStatuses = ((status.containerStatuses ?? []) as R[]).map((c) => ({
        ...c,
        ready,
        ...(ready ? {} : { restartCount: Number(c.restartCount ?? 0) + 1 }),
      }));
      this.#o.store.put(pods, { ...p, status: { ...status, conditions, containerStatuses } });
      const readyCount =
        this.#o.store.list(pods, ns).filter((x) =>
          rec(x.metadata.labels)["cnpg.io/cluster"] === cluster &&
          ((rec(x.status).conditions ?? []) as R[]).some((c) =>
            c.type === "Ready" && c.status === "True"
          )
        ).length;
      this.#setCnpgStatus(clusters, ns, cluster, { readyInstances: readyCount });
    };
    set(false);
    this.#log(`cnpg instance ${ns}/${name} restarting`);
    this.#o.clock.schedule(ms, () => {
      set(true);
      done();
    });
  }

  #setCnpgStatus(clusters: ResourceType, ns: string, name: string, patch: R): void {
    const c = this.#o.store.get(clusters, ns, name);
    if (!c) return;
    this.#o.store.put(clusters, { ...c, status: { ...rec(c.status), ...patch } });
  }

  #csiWorkloads(ns: string): { plural: string; obj: Obj }[] {
    const out: { plural: string; obj: Obj }[] = [];
    for (const plural of ["deployments", "daemonsets"]) {
      for (const w of this.#all("apps", "v1", plural)) {
        const labels = rec(w.metadata.labels);
        if (w.metadata.namespace === ns && labels["app.kubernetes.io/part-of"] === CSI_PART_OF) {
          out.push({ plural, obj: w });
        }
      }
    }
    return out;
  }

  /**
   * Sets the workload's first container image (template, and its ReplicaSets for a Deployment),
   * then moves its pods to it one at a time; `done` runs when the last pod runs the new image.
   */
  #rollImage(plural: string, ns: string, name: string, image: string, done?: () => void): void {
    const { store } = this.#o;
    const type = this.#type("apps", "v1", plural);
    const w = type && store.get(type, ns, name);
    if (!type || !w) return;
    const moved = withImage(w, image);
    // A DaemonSet's pods are moved in place here, not by the DaemonSet controller's rollout; each
    // moved pod carries the new template's revision, as the controller's own would.
    const revision = plural === "daemonsets" ? revisionOf(moved) : undefined;
    if (revision) {
      moved.metadata = {
        ...moved.metadata,
        annotations: { ...moved.metadata.annotations, [ROLLED_IN_PLACE]: "true" },
      };
    }
    store.put(type, moved);
    const owners = new Set<string>([w.metadata.uid ?? ""]);
    if (plural === "deployments") {
      const rsType = this.#type("apps", "v1", "replicasets")!;
      for (const rs of store.list(rsType, ns)) {
        if (ownedBy(rs, w.metadata.uid)) {
          owners.add(rs.metadata.uid ?? "");
          store.put(rsType, withImage(rs, image));
        }
      }
    }
    this.#log(`${plural.slice(0, -1)} ${ns}/${name} rolling to ${image}`);
    const step = (this.#o.rollStepSeconds ?? 10) * 1000;
    const next = () => {
      const pods = this.#type("", "v1", "pods")!;
      const stale = store.list(pods, ns)
        .filter((p) => [...owners].some((u) => ownedBy(p, u)) && firstImage(p) !== image)
        .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))[0];
      if (!stale) {
        this.#log(`${plural.slice(0, -1)} ${ns}/${name} runs ${image}`);
        done?.();
        return;
      }
      store.put(pods, podWithImage(stale, image, this.#o.clock.now(), revision));
      this.#o.clock.schedule(step, next);
    };
    this.#o.clock.schedule(step, next);
  }

  #all(group: string, version: string, plural: string): Obj[] {
    const t = this.#type(group, version, plural);
    return t ? [...this.#o.store.list(t)] : [];
  }

  #setStatus(
    group: string,
    version: string,
    plural: string,
    o: Obj,
    f: (s: R) => R,
  ): void {
    const t = this.#type(group, version, plural)!;
    const cur = this.#o.store.get(t, o.metadata.namespace, o.metadata.name);
    if (!cur) return;
    this.#o.store.put(t, { ...cur, status: f(rec(cur.status)) });
  }
}

function ready(reason: string, message: string): R {
  return { type: "Ready", status: "True", reason, message };
}

function ownedBy(o: Obj, uid: string | undefined): boolean {
  return uid !== undefined &&
    ((o.metadata.ownerReferences ?? []) as R[]).some((r) => r.uid === uid);
}

function firstImage(pod: Obj): string | undefined {
  const c = (rec(pod.spec).containers as R[] | undefined)?.[0];
  return c?.image as string | undefined;
}

function withImage(w: Obj, image: string): Obj {
  const spec = rec(w.spec);
  const template = rec(spec.template);
  const podSpec = rec(template.spec);
  const containers = ((podSpec.containers ?? []) as R[]).map((c, i) =>
    i === 0 ? { ...c, image } : c
  );
  return { ...w, spec: { ...spec, template: { ...template, spec: { ...podSpec, containers } } } };
}

/** The kubelet restarted the container on its new image (pod image is mutable in place). */
function podWithImage(pod: Obj, image: string, nowMs: number, revision?: string): Obj {
  const spec = rec(pod.spec);
  const containers = ((spec.containers ?? []) as R[]).map((c, i) => i === 0 ? { ...c, image } : c);
  const status = rec(pod.status);
  const statuses = ((status.containerStatuses ?? []) as R[]).map((c, i) =>
    i === 0
      ? {
        ...c,
        image,
        restartCount: Number(c.restartCount ?? 0) + 1,
        state: { running: { startedAt: new Date(nowMs).toISOString().replace(/\.\d+Z$/, "Z") } },
      }
      : c
  );
  return {
    ...pod,
    ...(revision
      ? {
        metadata: {
          ...pod.metadata,
          labels: { ...pod.metadata.labels, [REVISION_LABEL]: revision },
        },
      }
      : {}),
    spec: { ...spec, containers },
    status: { ...status, containerStatuses: statuses },
  };
}

/** The cephcsi a rook-ceph chart tag bundles, from the generated repositories' upstream model. */
export function rookBundledCephcsi(tag: string): string | undefined {
  const m = /^v?(\d+)\.(\d+)\.(\d+)$/.exec(tag);
  if (!m) return undefined;
  return bundledCephcsi({ major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]) });
}
