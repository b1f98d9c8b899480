/**
 * Flux delivery in a drawn world (issue 16, ComponentUpgrade): the objects a home-ops cluster
 * delivers a Cilium chart bump through (a `GitRepository`, the `Kustomization` that applies the
 * release from it, an `OCIRepository` chart source, a `HelmRelease` carrying kustomize-controller's
 * labels, the agent `DaemonSet`), the git history the merge belongs to, and the delivery itself as
 * steps on the twin's virtual clock, each of which a drawn Flux fault can change: a source that
 * never advances, a Kustomization Ready at its older revision or failing (not Ready, stalled,
 * progressing forever), a Helm upgrade that fails and is rolled back looking Ready, a delivery too
 * slow for the deadline, a later commit or one git does not know applied, and a delivery that goes
 * back after it landed. The agent's pods are rolled by the twin's own DaemonSet controller.
 */
import { createHash } from "node:crypto";
import type { CommitHistory } from "../../ports/commit_history.ts";
import type { InprocTwin } from "../../sim/inproc/cluster.ts";
import type { Obj } from "../../sim/kube/store.ts";

type R = Record<string, unknown>;
const rec = (v: unknown): R => (v !== null && typeof v === "object" ? v as R : {});

/** The component every ComponentUpgrade seed moves, and where Flux keeps it. */
export const COMPONENT = {
  id: "cilium",
  namespace: "kube-system",
  name: "cilium",
  kustomization: { namespace: "flux-system", name: "cilium" },
  gitRepository: { namespace: "flux-system", name: "home-ops" },
  container: "cilium-agent",
  selector: "k8s-app=cilium",
  from: "1.18.2",
  to: "1.18.3",
  image: (v: string) => `quay.io/cilium/cilium:v${v}`,
  pin: "kubernetes/apps/kube-system/cilium/app/ocirepository.yaml",
} as const;

const hex = (s: string) => createHash("sha1").update(s).digest("hex");

/**
 * The watched repository's commits: the base, the reviewed branch's head, the merge, a later
 * commit on top of it, a force-pushed tip without it, and one git never fetched.
 */
export const COMMITS = {
  base: hex("dst base"),
  head: hex("dst head"),
  merge: hex("dst merge"),
  later: hex("dst later"),
  forcePushed: hex("dst force-pushed"),
  unknown: hex("dst unknown"),
} as const;

const PARENTS: ReadonlyMap<string, readonly string[]> = new Map([
  [COMMITS.base, []],
  [COMMITS.head, [COMMITS.base]],
  [COMMITS.merge, [COMMITS.base, COMMITS.head]],
  [COMMITS.later, [COMMITS.merge]],
  [COMMITS.forcePushed, [COMMITS.base]],
]);

/** Whether `descendant` is or has `ancestor` in the world's history; undefined when unknown. */
export function worldContains(descendant: string, ancestor: string): boolean | undefined {
  if (!PARENTS.has(descendant) || !PARENTS.has(ancestor)) return undefined;
  const seen = new Set<string>();
  const todo = [descendant];
  while (todo.length) {
    const c = todo.pop()!;
    if (c === ancestor) return true;
    if (seen.has(c)) continue;
    seen.add(c);
    todo.push(...PARENTS.get(c) ?? []);
  }
  return false;
}

/** The controller's git: what `git merge-base --is-ancestor` answers in the cache clone. */
export const worldHistory: CommitHistory = {
  contains: (d, a) => Promise.resolve(worldContains(d, a)),
};

/** How a drawn world's Flux delivery goes wrong (none: it delivers the merge). */
export type FluxFault =
  /** source-controller never fetches the merge (the GitRepository stays at the base). */
  | { readonly kind: "source-stuck" }
  /** The Kustomization that applies the release stays Ready at the base revision. */
  | { readonly kind: "applied-old-revision" }
  /** Its apply of the merge fails: Ready False (HealthCheckFailed), or Stalled too. */
  | { readonly kind: "kustomization-failing"; readonly stalled: boolean }
  /** Its reconciliation never ends: Ready Unknown, "Reconciliation in progress". */
  | { readonly kind: "kustomization-progressing" }
  /** The Helm upgrade fails and remediation rolls it back; the release is Ready on the old chart. */
  | { readonly kind: "helm-rolled-back" }
  /** Every step of the delivery takes `extraMs` longer. */
  | { readonly kind: "slow"; readonly extraMs: number }
  /** Flux applies a later commit containing the merge, or one git does not know. */
  | { readonly kind: "applies"; readonly commit: "later" | "unknown" }
  /**
   * `afterMs` after the delivery landed it goes back; with `holdMs`, the first node's apid is
   * reported unhealthy for that long from the landing (after-merge rounds fail meanwhile, so the
   * going back falls between the landing seen and a passing round).
   */
  | {
    readonly kind: "regress";
    readonly afterMs: number;
    readonly how: "force-push" | "not-ready" | "rolled-back";
    readonly holdMs?: number;
  };

/** The Flux objects and the agent DaemonSet, as the description's objects (before the merge). */
export function fluxObjects(): Record<string, unknown>[] {
  const c = COMPONENT;
  const base = `main@sha1:${COMMITS.base}`;
  const ready = (reason: string, message: string) => [{
    type: "Ready",
    status: "True",
    reason,
    message,
  }];
  const agent = c.image(c.from);
  return [
    {
      apiVersion: "source.toolkit.fluxcd.io/v1",
      kind: "GitRepository",
      metadata: { ...c.gitRepository, generation: 1 },
      spec: { interval: "1h", url: "https://github.com/example/home-ops", ref: { branch: "main" } },
      status: {
        observedGeneration: 1,
        artifact: { revision: base },
        conditions: ready("Succeeded", `stored artifact for revision '${base}'`),
      },
    },
    {
      apiVersion: "kustomize.toolkit.fluxcd.io/v1",
      kind: "Kustomization",
      metadata: { ...c.kustomization, generation: 1 },
      spec: {
        interval: "1h",
        path: "./kubernetes/apps/kube-system/cilium",
        prune: true,
        sourceRef: { kind: "GitRepository", name: c.gitRepository.name },
      },
      status: {
        observedGeneration: 1,
        lastAppliedRevision: base,
        lastAttemptedRevision: base,
        conditions: ready("ReconciliationSucceeded", `Applied revision: ${base}`),
      },
    },
    {
      apiVersion: "source.toolkit.fluxcd.io/v1",
      kind: "OCIRepository",
      metadata: { namespace: c.namespace, name: c.name, generation: 1 },
      spec: { interval: "1h", url: "oci://quay.io/cilium/charts/cilium", ref: { tag: c.from } },
      status: {
        observedGeneration: 1,
        artifact: { revision: chartRevision(c.from) },
        conditions: ready("Succeeded", `stored artifact for digest '${chartRevision(c.from)}'`),
      },
    },
    {
      apiVersion: "helm.toolkit.fluxcd.io/v2",
      kind: "HelmRelease",
      metadata: {
        namespace: c.namespace,
        name: c.name,
        generation: 1,
        labels: {
          "kustomize.toolkit.fluxcd.io/name": c.kustomization.name,
          "kustomize.toolkit.fluxcd.io/namespace": c.kustomization.namespace,
        },
      },
      spec: { interval: "1h", chartRef: { kind: "OCIRepository", name: c.name } },
      status: {
        observedGeneration: 1,
        lastAttemptedRevision: c.from,
        history: [{ chartName: "cilium", chartVersion: c.from, status: "deployed", version: 1 }],
        conditions: ready("UpgradeSucceeded", `Helm install succeeded with chart cilium@${c.from}`),
      },
    },
    {
      apiVersion: "apps/v1",
      kind: "DaemonSet",
      metadata: { namespace: c.namespace, name: c.name, labels: { "k8s-app": "cilium" } },
      spec: {
        selector: { matchLabels: { "k8s-app": "cilium" } },
        template: {
          metadata: { labels: { "k8s-app": "cilium" } },
          spec: { containers: [{ name: c.container, image: agent }] },
        },
      },
    },
  ];
}

function chartRevision(tag: string): string {
  return `${tag}@sha256:${createHash("sha256").update(`cilium:${tag}`).digest("hex")}`;
}

/** Step durations of the delivery (virtual ms), drawn per seed. */
export interface FluxTimings {
  readonly gitFetchMs: number;
  readonly applyMs: number;
  readonly chartFetchMs: number;
  readonly helmUpgradeMs: number;
}

/**
 * Starts delivering the merge on the twin's clock: source-controller fetches it, kustomize-
 * controller applies it (moving the chart pin), source-controller fetches the chart, helm-
 * controller upgrades the release and the agent DaemonSet's template moves (the twin's DaemonSet
 * controller rolls its pods one node at a time). `faults` change what happens.
 */
export function deliverMerge(
  twin: InprocTwin,
  timings: FluxTimings,
  faults: readonly FluxFault[],
): void {
  const c = COMPONENT;
  const has = <K extends FluxFault["kind"]>(k: K) =>
    faults.find((f): f is Extract<FluxFault, { kind: K }> => f.kind === k);
  const extra = has("slow")?.extraMs ?? 0;
  const applies = has("applies");
  const commit = applies?.commit === "later"
    ? COMMITS.later
    : applies?.commit === "unknown"
    ? COMMITS.unknown
    : COMMITS.merge;
  const revision = `main@sha1:${commit}`;
  const at = (ms: number, fn: () => void) => twin.sim.schedule(ms + extra, fn);
  if (has("source-stuck")) return;
  at(timings.gitFetchMs, () => {
    setStatus(twin, "gitrepositories", c.gitRepository, (s) => ({
      ...s,
      artifact: { ...rec(s.artifact), revision },
      conditions: [
        cond("Ready", "True", "Succeeded", `stored artifact for revision '${revision}'`),
      ],
    }));
    at(timings.applyMs, () => {
      applyKustomization(twin, revision, faults);
      // The merged tree moves the chart pin (applied whether or not the Kustomization that applies
      // the release reports it: another Kustomization may carry the sources).
      const oci = typeOf(twin, "ocirepositories");
      const cur = twin.store.get(oci, c.namespace, c.name)!;
      twin.store.put(oci, { ...cur, spec: { ...rec(cur.spec), ref: { tag: c.to } } });
      at(timings.chartFetchMs, () => {
        setStatus(twin, "ocirepositories", { namespace: c.namespace, name: c.name }, (s) => ({
          ...s,
          artifact: { revision: chartRevision(c.to) },
          conditions: [
            cond("Ready", "True", "Succeeded", `stored artifact '${chartRevision(c.to)}'`),
          ],
        }));
        at(timings.helmUpgradeMs, () => upgrade(twin, faults));
      });
    });
  });
}

function applyKustomization(twin: InprocTwin, revision: string, faults: readonly FluxFault[]) {
  const c = COMPONENT;
  if (faults.some((f) => f.kind === "applied-old-revision")) return;
  const failing = faults.find((f) => f.kind === "kustomization-failing");
  const progressing = faults.some((f) => f.kind === "kustomization-progressing");
  setStatus(twin, "kustomizations", c.kustomization, (s) => ({
    ...s,
    lastAttemptedRevision: revision,
    ...(failing || progressing ? {} : { lastAppliedRevision: revision }),
    conditions: progressing
      ? [cond("Ready", "Unknown", "Progressing", "Reconciliation in progress")]
      : failing
      ? [
        cond("Ready", "False", "HealthCheckFailed", "health check failed after 5m0s"),
        ...(failing.kind === "kustomization-failing" && failing.stalled
          ? [cond("Stalled", "True", "HealthCheckFailed", "health check failed after 5m0s")]
          : []),
      ]
      : [cond("Ready", "True", "ReconciliationSucceeded", `Applied revision: ${revision}`)],
  }));
}

function upgrade(twin: InprocTwin, faults: readonly FluxFault[]): void {
  const c = COMPONENT;
  if (faults.some((f) => f.kind === "helm-rolled-back")) {
    rollBack(twin);
    return;
  }
  setStatus(twin, "helmreleases", { namespace: c.namespace, name: c.name }, (s) => {
    const history = Array.isArray(s.history) ? s.history as R[] : [];
    return {
      ...s,
      lastAttemptedRevision: c.to,
      history: [
        {
          chartName: "cilium",
          chartVersion: c.to,
          status: "deployed",
          version: history.length + 1,
        },
        ...history.map((h) => ({ ...h, status: "superseded" })),
      ],
      conditions: [
        cond(
          "Ready",
          "True",
          "UpgradeSucceeded",
          `Helm upgrade succeeded with chart cilium@${c.to}`,
        ),
      ],
    };
  });
  const ds = typeOf(twin, "daemonsets");
  const cur = twin.store.get(ds, c.namespace, c.name)!;
  twin.store.put(ds, withImage(cur, c.image(c.to)));
  const regress = faults.find((f) => f.kind === "regress");
  if (regress?.kind === "regress") watchLanding(twin, regress);
}

/**
 * The upgrade failed and remediation rolled it back: a new release of the old chart, deployed,
 * and (the trap) the release Ready again.
 */
function rollBack(twin: InprocTwin): void {
  const c = COMPONENT;
  setStatus(twin, "helmreleases", { namespace: c.namespace, name: c.name }, (s) => {
    const history = Array.isArray(s.history) ? s.history as R[] : [];
    const n = history.length;
    return {
      ...s,
      lastAttemptedRevision: c.to,
      history: [
        { chartName: "cilium", chartVersion: c.from, status: "deployed", version: n + 2 },
        { chartName: "cilium", chartVersion: c.to, status: "failed", version: n + 1 },
        ...history.map((h) => ({ ...h, status: "superseded" })),
      ],
      conditions: [
        cond(
          "Ready",
          "True",
          "RollbackSucceeded",
          `Helm rollback to previous release ${c.namespace}/${c.name}.v${n} with chart ` +
            `cilium@${c.from} succeeded`,
        ),
      ],
    };
  });
}

/** Waits (on virtual time) for every agent pod to run the target, then goes back after a while. */
function watchLanding(
  twin: InprocTwin,
  r: Extract<FluxFault, { kind: "regress" }>,
): void {
  const look = () => {
    if (!landed(twin)) {
      twin.sim.schedule(1_000, look);
      return;
    }
    if (r.holdMs) {
      // Talos reports the first node's apid unhealthy for a while (a health flag only).
      const svc = [...twin.cluster.nodes.values()][0]!.services.find((x) => x.id === "apid")!;
      svc.healthy = false;
      twin.sim.schedule(r.holdMs, () => (svc.healthy = true));
    }
    twin.sim.schedule(r.afterMs, () => goBack(twin, r.how));
  };
  twin.sim.schedule(1_000, look);
}

function goBack(twin: InprocTwin, how: "force-push" | "not-ready" | "rolled-back"): void {
  const c = COMPONENT;
  if (how === "rolled-back") {
    rollBack(twin);
    return;
  }
  if (how === "not-ready") {
    setStatus(twin, "kustomizations", c.kustomization, (s) => ({
      ...s,
      conditions: [cond("Ready", "False", "ReconciliationFailed", "apply failed: dry-run error")],
    }));
    return;
  }
  // The branch was force-pushed without the merge, and Flux applied that tip.
  const revision = `main@sha1:${COMMITS.forcePushed}`;
  setStatus(twin, "gitrepositories", c.gitRepository, (s) => ({
    ...s,
    artifact: { ...rec(s.artifact), revision },
  }));
  setStatus(twin, "kustomizations", c.kustomization, (s) => ({
    ...s,
    lastAppliedRevision: revision,
    lastAttemptedRevision: revision,
    conditions: [cond("Ready", "True", "ReconciliationSucceeded", `Applied revision: ${revision}`)],
  }));
}

/** Every agent pod runs the target image and is ready. */
function landed(twin: InprocTwin): boolean {
  const c = COMPONENT;
  const pods = twin.store.list(typeOf(twin, "pods"), c.namespace).filter((p) =>
    rec(p.metadata.labels)["k8s-app"] === "cilium"
  );
  return pods.length > 0 && pods.every((p) => {
    const s = rec(p.status);
    const st = (Array.isArray(s.containerStatuses) ? s.containerStatuses as R[] : [])
      .find((x) => x.name === c.container);
    const ready = (Array.isArray(s.conditions) ? s.conditions as R[] : [])
      .some((x) => x.type === "Ready" && x.status === "True");
    return st?.image === c.image(c.to) && ready && p.metadata.deletionTimestamp === undefined;
  });
}

/** What the world holds of the delivery now (invariant 12's ground truth). */
export interface DeliveryTruth {
  /** The commit the Kustomization reports applied. */
  readonly applied: string | undefined;
  readonly ready: boolean;
  /** Its status describes its current generation. */
  readonly current: boolean;
  /** The release's newest history entry: its chart and status. */
  readonly chart: string | undefined;
  readonly chartStatus: string | undefined;
}

export function deliveryTruth(twin: InprocTwin): DeliveryTruth {
  const c = COMPONENT;
  const ks = twin.store.get(typeOf(twin, "kustomizations"), ...nsName(c.kustomization));
  const hr = twin.store.get(typeOf(twin, "helmreleases"), c.namespace, c.name);
  const s = rec(ks?.status);
  const conditions = Array.isArray(s.conditions) ? s.conditions as R[] : [];
  const h0 = rec((rec(hr?.status).history as R[] | undefined)?.[0]);
  return {
    applied: /([0-9a-f]{40})$/.exec(String(s.lastAppliedRevision ?? ""))?.[1],
    ready: conditions.some((x) => x.type === "Ready" && x.status === "True"),
    current: s.observedGeneration === (ks?.metadata.generation ?? 1),
    chart: typeof h0.chartVersion === "string" ? h0.chartVersion : undefined,
    chartStatus: typeof h0.status === "string" ? h0.status : undefined,
  };
}

const PLURAL_GROUP: Record<string, [string, string]> = {
  gitrepositories: ["source.toolkit.fluxcd.io", "v1"],
  ocirepositories: ["source.toolkit.fluxcd.io", "v1"],
  kustomizations: ["kustomize.toolkit.fluxcd.io", "v1"],
  helmreleases: ["helm.toolkit.fluxcd.io", "v2"],
  daemonsets: ["apps", "v1"],
  pods: ["", "v1"],
};

function typeOf(twin: InprocTwin, plural: string) {
  const [group, version] = PLURAL_GROUP[plural]!;
  return twin.store.findType(group, version, plural)!;
}

const nsName = (r: { namespace: string; name: string }) => [r.namespace, r.name] as const;

function setStatus(
  twin: InprocTwin,
  plural: string,
  ref: { namespace: string; name: string },
  f: (s: R) => R,
): void {
  const t = typeOf(twin, plural);
  const cur = twin.store.get(t, ref.namespace, ref.name);
  if (!cur) return;
  twin.store.put(t, {
    ...cur,
    status: { ...f(rec(cur.status)), observedGeneration: cur.metadata.generation ?? 1 },
  });
}

function cond(type: string, status: string, reason: string, message: string): R {
  return { type, status, reason, message };
}

function withImage(w: Obj, image: string): Obj {
  const spec = rec(w.spec);
  const template = rec(spec.template);
  const podSpec = rec(template.spec);
  const containers = ((podSpec.containers ?? []) as R[]).map((x, i) =>
    i === 0 ? { ...x, image } : x
  );
  return { ...w, spec: { ...spec, template: { ...template, spec: { ...podSpec, containers } } } };
}
