/**
 * Writing plans instead of typing them (`cairn plan new`, `cairn plan bind`). Pure: the caller
 * reads the catalogue, node source and bound files, resolves installer digests through the
 * registry, and writes the text. Everything rendered here must pass `cairn plan check`; the CLI
 * checks the rendered file before it keeps it.
 */
import { z } from "../zod.ts";
import { type Catalogue, hasRelease, latestPatch } from "../catalogue.ts";
import type { Reason } from "../reasons.ts";
import {
  compareVersions,
  formatVersion,
  isLifecycleApiVersion,
  parseVersion,
  type Version,
} from "../version.ts";
import type { FieldPath, LoadedYaml } from "./yaml_load.ts";
import type { TalosHop } from "./schema.ts";

/** A refusal to author: a reason code and what was wrong, nothing written. */
export interface AuthoringRefusal {
  readonly reason: Reason;
  readonly message: string;
}

/** One hop before its installer is resolved. */
export interface HopStep {
  readonly from: string;
  readonly to: string;
}

/** Most hops a TalosUpgrade plan may hold (the schema's limit). */
export const MAX_HOPS = 8;

/**
 * The hop chain from `from` to `to` as the plan checks demand it: within one minor a single hop;
 * across minors first the latest patch of the current minor (when not already on it), then one
 * minor at a time to the latest stable patch of each, the last hop ending on the target itself.
 *
 * @example
 * ```ts ignore
 * talosHopChain(cat, "v1.12.3", "v1.14.2");
 * // v1.12.3→v1.12.9, v1.12.9→v1.13.9, v1.13.9→v1.14.2 (with 1.12.9 and 1.13.9 the latest patches)
 * ```
 */
export function talosHopChain(
  cat: Catalogue,
  fromText: string,
  toText: string,
): { ok: true; hops: HopStep[] } | { ok: false; refusal: AuthoringRefusal } {
  const refuse = (reason: Reason, message: string) => ({
    ok: false as const,
    refusal: { reason, message },
  });
  const from = parseVersion(fromText), to = parseVersion(toText);
  const c = compareVersions(to, from);
  if (c < 0) return refuse("VersionDowngrade", `${toText} is older than ${fromText}`);
  if (c === 0) return refuse("VersionUnchanged", `source and target are both ${fromText}`);
  if (to.major !== from.major) {
    return refuse("SkippedMinor", `${fromText} to ${toText} crosses a major version`);
  }
  if (!hasRelease(cat, to)) {
    return refuse("CatalogueUnknownVersion", `Talos ${toText} is not in the release catalogue`);
  }
  if (to.minor === from.minor) return { ok: true, hops: [{ from: fromText, to: toText }] };
  if (!hasRelease(cat, from)) {
    return refuse(
      "CatalogueUnknownVersion",
      `Talos ${fromText} is not in the release catalogue, so its minor's latest patch is unknown`,
    );
  }
  const hops: HopStep[] = [];
  let current: Version = from;
  const step = (next: Version) => {
    hops.push({ from: formatVersion(current), to: formatVersion(next) });
    current = next;
  };
  const latest = latestPatch(cat, from)!;
  if (compareVersions(current, latest) < 0) step(latest);
  for (let minor = from.minor + 1; minor <= to.minor; minor++) {
    const next = minor === to.minor
      ? to
      : latestPatch(cat, parseVersion(`v${from.major}.${minor}.0`));
    if (!next) {
      return refuse(
        "CatalogueUnknownVersion",
        `the release catalogue has no stable release of Talos ${from.major}.${minor}, ` +
          `which the upgrade must pass through`,
      );
    }
    step(next);
  }
  if (hops.length > MAX_HOPS) {
    return refuse(
      "SkippedMinor",
      `${fromText} to ${toText} needs ${hops.length} hops, more than ${MAX_HOPS}`,
    );
  }
  return { ok: true, hops };
}

/** `lifecycle` for a source that serves LifecycleService.Upgrade, else `legacy`. */
export function rpcPathFor(from: string): TalosHop["rpcPath"] {
  return isLifecycleApiVersion(parseVersion(from)) ? "lifecycle" : "legacy";
}

/** The Image Factory installer reference of a hop, without its digest. */
export function installerReference(
  registry: string,
  platform: string,
  schematic: string,
  to: string,
): string {
  return `${registry}/${platform}-installer/${schematic}:${to}`;
}

// --- node sources ----------------------------------------------------------------------------

const NodeFacts = {
  name: z.string().min(1),
  role: z.enum(["worker", "controlplane"]),
  address: z.string().min(1),
  talosVersion: z.string().optional(),
  kubeletVersion: z.string().optional(),
  schematic: z.string().optional(),
  platform: z.string().optional(),
  arch: z.string().optional(),
};

/** A twin cluster description (`fixtures/clusters/*.yaml`); only the facts a plan needs. */
const ClusterDescriptionFacts = z.object({
  kind: z.literal("ClusterDescription"),
  metadata: z.object({ name: z.string() }),
  spec: z.object({
    kubernetesVersion: z.string().optional(),
    nodes: z.array(z.object(NodeFacts)).min(1),
  }),
});

/**
 * A node inventory: the nodes of a real cluster, written by hand or exported, e.g.
 *
 * ```yaml
 * apiVersion: cairn.dev/v1alpha1
 * kind: NodeInventory
 * metadata: { name: home-ops }
 * spec:
 *   kubernetesVersion: v1.35.2          # optional (else --kubernetes)
 *   nodes:
 *     - { name: cp-1, role: controlplane, address: 10.5.0.3, schematic: <64 hex> }
 * ```
 */
const NodeInventory = z.strictObject({
  apiVersion: z.literal("cairn.dev/v1alpha1"),
  kind: z.literal("NodeInventory"),
  metadata: z.strictObject({ name: z.string() }),
  spec: z.strictObject({
    kubernetesVersion: z.string().optional(),
    nodes: z.array(z.strictObject(NodeFacts)).min(1),
  }),
});

/** The facts a node source gives. */
export interface NodeSource {
  readonly cluster: string;
  readonly kubernetesVersion?: string;
  readonly nodes: readonly z.infer<z.ZodObject<typeof NodeFacts>>[];
}

/** Reads a cluster description or a node inventory (already loaded as YAML). */
export function parseNodeSource(
  value: unknown,
): { ok: true; source: NodeSource } | { ok: false; message: string; path: FieldPath } {
  const kind = (value as { kind?: unknown } | null)?.kind;
  const schema = kind === "NodeInventory" ? NodeInventory : ClusterDescriptionFacts;
  if (kind !== "NodeInventory" && kind !== "ClusterDescription") {
    return {
      ok: false,
      message: "expected kind ClusterDescription or NodeInventory",
      path: ["kind"],
    };
  }
  const r = schema.safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    return { ok: false, message: issue.message, path: issue.path };
  }
  const d = r.data;
  return {
    ok: true,
    source: {
      cluster: d.metadata.name,
      ...(d.spec.kubernetesVersion ? { kubernetesVersion: d.spec.kubernetesVersion } : {}),
      nodes: d.spec.nodes,
    },
  };
}

/**
 * Rollout order, each role in the source's order: every worker first, then the control planes
 * (a Talos upgrade), or the control planes first, then the kubelets (a Kubernetes upgrade: a
 * kubelet may not be newer than its API server).
 */
export function rolloutOrder<T extends { role: "worker" | "controlplane" }>(
  nodes: readonly T[],
  order: "workersFirst" | "controlPlanesFirst" = "workersFirst",
): T[] {
  const workers = nodes.filter((n) => n.role === "worker");
  const cps = nodes.filter((n) => n.role !== "worker");
  return order === "workersFirst" ? [...workers, ...cps] : [...cps, ...workers];
}

/**
 * The one value every node that states `key` agrees on; `undefined` when none states it, a
 * refusal message when they disagree (a plan binds one schematic, one kubelet, one platform).
 */
export function commonFact(
  nodes: NodeSource["nodes"],
  key: "talosVersion" | "kubeletVersion" | "schematic" | "platform" | "arch",
): { value?: string; conflict?: string } {
  const values = [...new Set(nodes.map((n) => n[key]).filter((v): v is string => v !== undefined))];
  if (values.length > 1) return { conflict: `the nodes disagree on ${key}: ${values.join(", ")}` };
  return values.length ? { value: values[0]! } : {};
}

// --- rendering -------------------------------------------------------------------------------

/** Default per-phase deadlines `[transport, verification]` in seconds, as the examples use. */
export const DEFAULT_TALOS_DEADLINES = {
  pull: [300, 600],
  install: [600, 900],
  cordon: [30, 60],
  drain: [600, 900],
  reboot: [60, 900],
  verify: [60, 1200],
  uncordon: [30, 60],
} as const satisfies Record<string, readonly [number, number]>;

/** The metadata every plan kind's draft carries. */
export interface PlanHeader {
  readonly name: string;
  readonly cluster: string;
  readonly author: string;
  readonly expires: string;
}

/** A file a plan binds: its repository-relative path and the SHA-256 of its bytes. */
type Bound = { readonly path: string; readonly sha256: string };

/** A node as a plan lists it. */
type PlanNode = { name: string; role: string; address: string };

/** What {@link renderTalosUpgradePlan} writes. */
export interface TalosPlanDraft extends PlanHeader {
  readonly catalogue: Bound;
  readonly healthPolicy: Bound;
  readonly evidence?: Bound;
  readonly platform: string;
  readonly arch: string;
  readonly kubernetes: { readonly version: string; readonly kubelet: string };
  readonly hops: readonly TalosHop[];
  readonly nodes: readonly PlanNode[];
  readonly drainTimeoutSeconds?: number;
}

/** A YAML scalar: plain when it cannot be misread, double-quoted (JSON) otherwise. */
function scalar(v: string): string {
  return /^[A-Za-z0-9][A-Za-z0-9@._+\/-]*$/.test(v) &&
      !/^(true|false|null|yes|no|on|off|~)$/i.test(v)
    ? v
    : JSON.stringify(v);
}

/** Renders a TalosUpgrade plan with the defaults the shipped example uses. */
export function renderTalosUpgradePlan(d: TalosPlanDraft): string {
  const first = d.hops[0]!, last = d.hops[d.hops.length - 1]!;
  return [
    `# TalosUpgrade of ${d.cluster} from ${first.from} to ${last.to} (${d.hops.length} hop(s)), written by`,
    "# `cairn plan new talos`: workers first, control planes last, one node at a time. Everything",
    "# that reaches a mutation is bound below; any change is a new plan (`cairn plan bind` after",
    "# editing a bound file, then sign again).",
    ...envelope("TalosUpgrade", d),
    ...boundLines("catalogue", d.catalogue),
    ...boundLines("healthPolicy", d.healthPolicy),
    ...(d.evidence ? boundLines("evidence", d.evidence) : []),
    "  retry:",
    "    maxAttempts: 3",
    `  platform: ${scalar(d.platform)}`,
    `  arch: ${scalar(d.arch)}`,
    "  kubernetes:",
    `    version: ${d.kubernetes.version}`,
    `    kubelet: ${d.kubernetes.kubelet}`,
    "  hops:",
    ...d.hops.flatMap((h) => [
      `    - from: ${h.from}`,
      `      to: ${h.to}`,
      `      rpcPath: ${h.rpcPath}`,
      "      installer:",
      `        image: ${h.installer.image}`,
      `        schematic: ${h.installer.schematic}`,
    ]),
    ...nodeLines(d.nodes),
    "  rollout:",
    "    maxParallel: 1",
    "  phases:",
    `    drainTimeoutSeconds: ${d.drainTimeoutSeconds ?? 600}`,
    "    rebootMode: default",
    "    deadlines:",
    ...Object.entries(DEFAULT_TALOS_DEADLINES).map(([p, [t, v]]) =>
      `      ${p}: { transportSeconds: ${t}, verificationSeconds: ${v} }`
    ),
    "  recovery:",
    "    - action: uncordonOwnedCordon",
    "",
  ].join("\n");
}

/** What {@link renderKubernetesUpgradePlan} writes. */
export interface KubernetesPlanDraft extends PlanHeader {
  readonly catalogue: Bound;
  readonly healthPolicy: Bound;
  readonly evidence?: Bound;
  readonly talosVersion: string;
  readonly from: string;
  readonly to: string;
  readonly nodes: readonly PlanNode[];
}

/** Renders a KubernetesUpgrade plan with the defaults the shipped example uses. */
export function renderKubernetesUpgradePlan(d: KubernetesPlanDraft): string {
  return [
    `# KubernetesUpgrade of ${d.cluster} from ${d.from} to ${d.to} on Talos ${d.talosVersion}, written`,
    "# by `cairn plan new kubernetes`: control planes first (one at a time), then kubelets on",
    "# workers. Any change is a new plan (`cairn plan bind` after editing a bound file, then sign).",
    ...envelope("KubernetesUpgrade", d),
    ...boundLines("catalogue", d.catalogue),
    ...boundLines("healthPolicy", d.healthPolicy),
    ...(d.evidence ? boundLines("evidence", d.evidence) : []),
    "  retry:",
    "    maxAttempts: 3",
    `  talosVersion: ${d.talosVersion}`,
    `  from: ${d.from}`,
    `  to: ${d.to}`,
    ...nodeLines(d.nodes),
    "  rollout:",
    "    maxParallel: 1",
    "  phases:",
    "    deadlines:",
    "      controlPlane: { transportSeconds: 120, verificationSeconds: 900 }",
    "      kubelet: { transportSeconds: 120, verificationSeconds: 600 }",
    "  recovery: []",
    "",
  ].join("\n");
}

/** The apiVersion, kind and metadata every plan starts with, up to `spec:`. */
function envelope(kind: string, d: PlanHeader) {
  return [
    "apiVersion: cairn.dev/v1alpha1",
    `kind: ${kind}`,
    "metadata:",
    `  name: ${scalar(d.name)}`,
    `  cluster: ${scalar(d.cluster)}`,
    `  author: ${scalar(d.author)}`,
    `  expires: ${d.expires}`,
    "spec:",
  ];
}

function boundLines(key: string, f: Bound): string[] {
  return [`  ${key}:`, `    path: ${scalar(f.path)}`, `    sha256: ${f.sha256}`];
}

/** The plan's `spec.nodes`, in the order given. */
function nodeLines(nodes: readonly PlanNode[]): string[] {
  return [
    "  nodes:",
    ...nodes.flatMap((n) => [
      `    - name: ${scalar(n.name)}`,
      `      role: ${n.role}`,
      `      address: ${scalar(n.address)}`,
    ]),
  ];
}

/** What {@link renderConfigApplyPlan} writes. */
export interface ConfigPlanDraft extends PlanHeader {
  readonly catalogue: Bound;
  readonly healthPolicy: Bound;
  readonly config: Bound;
  readonly talosVersion: string;
  readonly mode: string;
  readonly activation: string;
  readonly nodes: readonly PlanNode[];
}

/** Renders a ConfigApply plan (workers first, one node at a time). */
export function renderConfigApplyPlan(d: ConfigPlanDraft): string {
  return [
    `# ConfigApply on ${d.cluster} (mode ${d.mode}, activation ${d.activation}), written by`,
    "# `cairn plan new config`: workers first, one node at a time. Any change is a new plan.",
    ...envelope("ConfigApply", d),
    ...boundLines("catalogue", d.catalogue),
    ...boundLines("healthPolicy", d.healthPolicy),
    "  retry:",
    "    maxAttempts: 2",
    `  talosVersion: ${d.talosVersion}`,
    `  mode: ${d.mode}`,
    `  activation: ${d.activation}`,
    ...boundLines("config", d.config),
    ...nodeLines(d.nodes),
    "  rollout:",
    "    maxParallel: 1",
    "  phases:",
    "    deadlines:",
    "      apply: { transportSeconds: 60, verificationSeconds: 300 }",
    "  recovery: []",
    "",
  ].join("\n");
}

/** What {@link renderComponentUpgradePlan} writes. */
export interface ComponentPlanDraft extends PlanHeader {
  readonly healthPolicy: Bound;
  readonly component: string;
  readonly flux: { readonly kind: string; readonly namespace: string; readonly name: string };
  readonly from: string;
  readonly to: string;
  /** The reviewed branch: base and head commits, and the pin files at head by digest. */
  readonly change?: {
    readonly base: string;
    readonly head: string;
    readonly pins: readonly Bound[];
  };
  /** What delivery must show: the Flux source, and images operator-rendered workloads run. */
  readonly delivery?: {
    readonly source: { readonly kind: string; readonly namespace: string; readonly name: string };
    readonly images: readonly {
      readonly namespace: string;
      readonly selector: string;
      readonly container: string;
      readonly image: string;
      readonly renderedBy: string;
    }[];
  };
}

/** Renders a ComponentUpgrade plan (observed after merge, never mutated by cairn). */
export function renderComponentUpgradePlan(d: ComponentPlanDraft): string {
  return [
    `# ComponentUpgrade of ${d.component} from ${d.from} to ${d.to}, delivered by Flux; written by`,
    "# `cairn plan new component`. cairn observes the rollout; it does not mutate the component.",
    ...envelope("ComponentUpgrade", d),
    ...boundLines("healthPolicy", d.healthPolicy),
    "  retry:",
    "    maxAttempts: 3",
    `  component: ${scalar(d.component)}`,
    "  flux:",
    `    kind: ${scalar(d.flux.kind)}`,
    `    namespace: ${scalar(d.flux.namespace)}`,
    `    name: ${scalar(d.flux.name)}`,
    `  from: ${d.from}`,
    `  to: ${d.to}`,
    ...(d.change
      ? [
        "  change:",
        // Quoted always: an all-digit commit id would otherwise read as a number.
        `    base: ${JSON.stringify(d.change.base)}`,
        `    head: ${JSON.stringify(d.change.head)}`,
        "    pins:",
        ...d.change.pins.flatMap((p) => [
          `      - path: ${scalar(p.path)}`,
          `        sha256: ${p.sha256}`,
        ]),
      ]
      : []),
    ...(d.delivery
      ? [
        "  delivery:",
        "    source:",
        `      kind: ${scalar(d.delivery.source.kind)}`,
        `      namespace: ${scalar(d.delivery.source.namespace)}`,
        `      name: ${scalar(d.delivery.source.name)}`,
        ...(d.delivery.images.length ? ["    images:"] : ["    images: []"]),
        ...d.delivery.images.flatMap((i) => [
          `      - namespace: ${scalar(i.namespace)}`,
          `        selector: ${JSON.stringify(i.selector)}`,
          `        container: ${scalar(i.container)}`,
          `        image: ${JSON.stringify(i.image)}`,
          `        renderedBy: ${JSON.stringify(i.renderedBy)}`,
        ]),
      ]
      : []),
    "  phases:",
    "    deadlines:",
    "      rollout: { transportSeconds: 60, verificationSeconds: 1800 }",
    "",
  ].join("\n");
}

// --- re-binding ------------------------------------------------------------------------------

/** A bound file's digest as it is in the plan and as the file now hashes. */
export interface Rebinding {
  /** Field path of the bound file (`["spec", "healthPolicy"]`). */
  readonly path: FieldPath;
  readonly sha256: string;
}

/** A scalar to write at a field path (`["metadata", "expires"]`). */
export interface ScalarEdit {
  readonly path: FieldPath;
  readonly value: string;
}

/**
 * Writes each value in place of the scalar at its path, and nothing else: comments, order and
 * every other byte stay as written. Returns the paths whose value changed.
 */
export function replaceScalars(
  source: LoadedYaml,
  edits: readonly ScalarEdit[],
): { text: string; changed: FieldPath[] } {
  const spans: { start: number; end: number; value: string; path: FieldPath }[] = [];
  for (const e of edits) {
    const node = source.doc.getIn(e.path as unknown[], true) as
      | { range?: [number, number, number]; value?: unknown }
      | undefined;
    if (!node?.range) throw new Error(`no scalar at ${e.path.join(".")}`);
    if (node.value === e.value) continue;
    spans.push({ start: node.range[0], end: node.range[1], value: e.value, path: e.path });
  }
  let text = source.text;
  for (const e of [...spans].sort((a, b) => b.start - a.start)) {
    text = text.slice(0, e.start) + e.value + text.slice(e.end);
  }
  return { text, changed: spans.map((e) => e.path) };
}

/** Replaces the `sha256` value under each bound file's path (see {@link replaceScalars}). */
export function rebindDigests(
  source: LoadedYaml,
  rebindings: readonly Rebinding[],
): { text: string; changed: FieldPath[] } {
  const r = replaceScalars(
    source,
    rebindings.map((b) => ({ path: [...b.path, "sha256"], value: b.sha256 })),
  );
  return { text: r.text, changed: r.changed.map((p) => p.slice(0, -1)) };
}
