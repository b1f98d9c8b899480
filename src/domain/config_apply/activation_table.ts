/**
 * When a Talos machine-configuration change takes effect, per Talos minor and configuration path
 * (docs/config-apply.md#the-activation-table). A stored or even an "active"
 * configuration does not prove that a service runs with it: the class says what must happen
 * before a setting can be active, and the probe says how activation is observed afterwards.
 *
 * The table is pure data. A path that no row covers for the running minor is `unknown`, and an
 * unknown change holds the plan for review: absence of a row never means "immediate".
 */

/** What a change needs before it is active. Ordered from least to most demanding. */
export const ACTIVATION_CLASSES = [
  "immediate",
  "installUpgradeOnly",
  "explicitActivation",
  "unknown",
] as const;

/** One activation class. */
export type ActivationClass = (typeof ACTIVATION_CLASSES)[number];

/**
 * How an applied setting is observed active on the running node:
 * - `status`: a COSI status resource the running service publishes; the setting is active when the
 *   resource's `field` equals the configuration value at the rule's path.
 * - `boot-after-store`: no status shows it; it is active only once a boot started after the
 *   persistent configuration held it (boot ID changed after the store) and the active configuration
 *   holds it after that boot.
 * - `never-by-apply`: only an install or upgrade acts on it; it is stored, never activated here.
 */
export type ActivationProbe =
  | {
    readonly kind: "status";
    readonly namespace: string;
    readonly type: string;
    readonly id: string;
    /** Top-level key of the status resource's YAML spec. */
    readonly field: string;
  }
  /**
   * `status-exists`: a per-item status resource (id = the item's name, e.g. a kernel module) exists
   * on the running node for every added item.
   */
  | { readonly kind: "status-exists"; readonly namespace: string; readonly type: string }
  | { readonly kind: "boot-after-store" }
  | { readonly kind: "never-by-apply" };

/** Which changes at a path a rule covers. */
export type ChangeMatch =
  | "any"
  /** Kernel modules: a module removed from the list, or its parameters changed. */
  | "module-removed-or-changed"
  /** Kernel modules: only new modules added. */
  | "module-added";

/** How well a rule is established. */
export type RuleBasis =
  /** Read in the pinned Talos source. */
  | "source"
  /** Stated by the documentation the safeguards design pinned (docs/config-apply.md#the-activation-table). */
  | "documented"
  /** Not established for this minor: the stricter class is assumed, so nothing is under-gated. */
  | "assumed-stricter";

/** One row: a path prefix, the minors it holds for, its class, probe and evidence. */
export interface ActivationRule {
  /** Dotted path prefix in the v1alpha1 document, e.g. `cluster.etcd`. */
  readonly path: string;
  readonly minors: readonly number[];
  readonly match: ChangeMatch;
  readonly class: Exclude<ActivationClass, "unknown">;
  readonly probe: ActivationProbe;
  readonly basis: RuleBasis;
  /** Where the fact comes from (never the rule's own wording). */
  readonly source: string;
}

const SEED_DOCS =
  "SideroLabs documentation d7cf508, configuration page (Talos v1.14), as pinned by the safeguards design";
const V113_IMMEDIATE =
  "siderolabs/talos:internal/app/machined/pkg/runtime/v1alpha1/v1alpha1_runtime.go@v1.13.9 " +
  "CanApplyImmediate (the paths NO_REBOOT accepts without a reboot)";
const V114_APPLY =
  "siderolabs/talos:internal/app/machined/internal/server/v1alpha1/v1alpha1_server.go@v1.14.0-rc.1 " +
  "ApplyConfiguration (NO_REBOOT stores and activates the document with no reboot check)";

/** The time-server status the time sync controller publishes (both minors). */
const TIME_STATUS: ActivationProbe = {
  kind: "status",
  namespace: "network",
  type: "TimeServerStatuses.net.talos.dev",
  id: "timeservers",
  field: "timeServers",
};

/**
 * The table. Rows are looked up by the longest path prefix that covers a changed path and matches
 * the kind of change; order does not matter.
 */
export const ACTIVATION_TABLE: readonly ActivationRule[] = [
  {
    path: "machine.time.servers",
    minors: [13, 14],
    match: "any",
    class: "immediate",
    probe: TIME_STATUS,
    basis: "source",
    source: `${V113_IMMEDIATE}; ${V114_APPLY}; status type from ` +
      "pkg/machinery/resources/network/timeserver_status.go (TimeServerStatuses.net.talos.dev, " +
      "id timeservers, yaml timeServers)",
  },
  {
    path: "cluster.etcd",
    minors: [14],
    match: "any",
    class: "explicitActivation",
    probe: { kind: "boot-after-store" },
    basis: "documented",
    source: `${SEED_DOCS}: etcd settings need a reboot or service restart to take effect`,
  },
  {
    path: "cluster.etcd",
    minors: [13],
    match: "any",
    class: "explicitActivation",
    probe: { kind: "boot-after-store" },
    basis: "assumed-stricter",
    source: `${V113_IMMEDIATE} accepts .cluster without a reboot, which says nothing about the ` +
      "running etcd; the v1.14 documentation's class is assumed",
  },
  {
    path: "machine.kernel.modules",
    minors: [13, 14],
    match: "module-removed-or-changed",
    class: "explicitActivation",
    probe: { kind: "boot-after-store" },
    basis: "documented",
    source: `${SEED_DOCS}: removing a loaded kernel module or changing its parameters needs a ` +
      "reboot (v1.13 assumed alike: CanApplyImmediate accepts .machine.kernel without one)",
  },
  {
    path: "machine.kernel.modules",
    minors: [14],
    match: "module-added",
    class: "immediate",
    probe: {
      kind: "status-exists",
      namespace: "runtime",
      type: "KernelModuleStatuses.runtime.talos.dev",
    },
    basis: "source",
    source:
      `${V114_APPLY}; loaded modules are published as KernelModuleStatuses.runtime.talos.dev ` +
      "(pkg/machinery/resources/runtime/kernel_module_status.go@v1.14.0-rc.1, absent in v1.13.9)",
  },
  {
    path: "machine.systemDiskEncryption",
    minors: [13, 14],
    match: "any",
    class: "explicitActivation",
    probe: { kind: "boot-after-store" },
    basis: "documented",
    source: `${SEED_DOCS}: volume encryption-key rotation needs a reboot (v1.13 assumed alike)`,
  },
  {
    path: "machine.env",
    minors: [13, 14],
    match: "any",
    class: "explicitActivation",
    probe: { kind: "boot-after-store" },
    basis: "documented",
    source: `${SEED_DOCS}: environments retained by running services need a restart ` +
      "(v1.13 assumed alike)",
  },
  {
    path: "machine.install",
    minors: [13, 14],
    match: "any",
    class: "installUpgradeOnly",
    probe: { kind: "never-by-apply" },
    basis: "documented",
    source: `${SEED_DOCS}: install settings are not applied to an installed node by a reboot; ` +
      `${V113_IMMEDIATE} lists .machine.install as accepted without one (stored, not acted on)`,
  },
];

/** The rule covering a changed path for a minor, or undefined (the change is `unknown`). */
export function ruleFor(
  minor: number,
  path: string,
  match: Exclude<ChangeMatch, "any">[] | "any",
  table: readonly ActivationRule[] = ACTIVATION_TABLE,
): ActivationRule | undefined {
  let best: ActivationRule | undefined;
  for (const r of table) {
    if (!r.minors.includes(minor)) continue;
    if (!covers(r.path, path)) continue;
    if (r.match !== "any" && (match === "any" || !match.includes(r.match))) continue;
    if (!best || r.path.length > best.path.length) best = r;
  }
  return best;
}

/** True when `prefix` is `path` or one of its ancestors (whole segments only). */
export function covers(prefix: string, path: string): boolean {
  return path === prefix || path.startsWith(prefix + ".");
}

/** The more demanding of two classes. */
export function stricter(a: ActivationClass, b: ActivationClass): ActivationClass {
  return ACTIVATION_CLASSES.indexOf(a) >= ACTIVATION_CLASSES.indexOf(b) ? a : b;
}
