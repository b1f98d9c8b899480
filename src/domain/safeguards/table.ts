/**
 * The safeguard table of the safety model (docs/safeguards.md#the-table), as data: one row per
 * reference safeguard, in the seed's order, with its placement (P plan validation, E execution, O
 * observation, in the order the seed gives them) and disposition. Row names are our own paraphrase.
 * Every report lists every row, each with a verdict and the evidence behind it; the judgement of
 * each row lives beside this table (`judge_*.ts`), the headline that follows from the rows in
 * `verdict.ts`.
 */

/** Where a safeguard acts: Plan validation, Execution, Observation. */
export type Placement = "P" | "E" | "O";

/** How the design keeps the reference safeguard. */
export type Disposition = "adopt" | "change";

/** One row of the safeguard table. */
export interface SafeguardRow {
  /** Stable PascalCase id; reports and journal records refer to rows by it. */
  readonly id: string;
  /** What the safeguard ensures, in our words. */
  readonly name: string;
  readonly placement: readonly Placement[];
  readonly disposition: Disposition;
}

/** The rows, in the seed's order. */
export const SAFEGUARDS = [
  row(
    "NodeIdentityBound",
    "One node chosen by declared inventory; address and client derived from it",
    "PEO",
    "adopt",
  ),
  row(
    "SchematicPreserved",
    "Running schematic kept on intermediate hops, pinned schematic on the last",
    "PEO",
    "adopt",
  ),
  row("InstallerDigestResolved", "Installer image resolved to a registry digest", "PE", "adopt"),
  row(
    "PreviewReadOnly",
    "Preview is read-only; authority comes from plan approval, not a flag",
    "PE",
    "change",
  ),
  row(
    "RolloutOrdered",
    "Ordered rollout with stop points: workers first, control planes last",
    "P",
    "change",
  ),
  row(
    "SingleRolloutSlot",
    "One node at a time under one cluster rollout slot and machine scope",
    "E",
    "adopt",
  ),
  row("NoDowngradeNoSkippedMinor", "No downgrade and no skipped minor version", "PE", "adopt"),
  row(
    "LatestPatchBeforeMinor",
    "Latest patch of the current minor before a minor hop, from a dated catalogue",
    "PE",
    "change",
  ),
  row(
    "KubeletInSupportWindow",
    "Every kubelet inside the target OS version's support window",
    "PE",
    "adopt",
  ),
  row(
    "InstallerImageExists",
    "Installer image exists for the exact platform; no fallback tag",
    "PE",
    "adopt",
  ),
  row(
    "HealthReadFreshEachRound",
    "Every health check re-read in each bounded round",
    "OE",
    "adopt",
  ),
  row(
    "CallsBoundedByRemainingTime",
    "Each call bounded by the phase's remaining time; timeouts are unreadable",
    "EO",
    "adopt",
  ),
  row(
    "ClusterGate",
    "All nodes Ready and uncordoned; Talos, etcd, control plane and kubelet healthy",
    "POE",
    "change",
  ),
  row(
    "DisruptionBudgetsAudited",
    "Disruption budgets matched to target pods, generation and unhealthy-pod policy",
    "POE",
    "change",
  ),
  row(
    "WorkloadsReady",
    "Deployments, StatefulSets and DaemonSets ready at their desired generation",
    "PO",
    "adopt",
  ),
  row(
    "DatabaseOperatorReady",
    "Database operator phase and readiness, by a versioned native predicate",
    "PO",
    "adopt",
  ),
  row(
    "ObjectStoreAndBrokerHealthy",
    "Object-store endpoint and per-server broker health via named read-only routes",
    "PO",
    "change",
  ),
  row(
    "MetricsAndMqttHealthy",
    "Metrics-storage operator and MQTT cluster status cover all required members",
    "PO",
    "adopt",
  ),
  row(
    "ClientMatchesServer",
    "Client and server versions pinned per hop, RPC path qualified",
    "PE",
    "adopt",
  ),
  row(
    "PhasesRecordedSeparately",
    "Install, cordon, drain and reboot each recorded and observed on its own",
    "EO",
    "change",
  ),
  row(
    "PostconditionsThenOwnedUncordon",
    "Version, schematic and Ready verified; only an operation-owned cordon undone",
    "EO",
    "change",
  ),
  row(
    "PostGateBeforeNextNode",
    "Full post-gate with every mutation accounted before the next node",
    "OE",
    "adopt",
  ),
  row(
    "KubernetesAfterUniformOs",
    "Kubernetes upgrade refused on mixed OS versions or a skipped minor",
    "PE",
    "adopt",
  ),
  row(
    "KubernetesSkewChecked",
    "Kubernetes target checked against every node's version and component skew",
    "PE",
    "change",
  ),
  row(
    "BootstrapOwnershipChecked",
    "Manifest inventory present and no GitOps-owned bootstrap object taken over",
    "PE",
    "adopt",
  ),
  row(
    "DryRunWithoutPrePull",
    "Kubernetes dry run proven free of image pre-pull and other writes",
    "PE",
    "adopt",
  ),
] as const satisfies readonly SafeguardRow[];

/** A safeguard row id. */
export type SafeguardId = (typeof SAFEGUARDS)[number]["id"];

function row<const I extends string>(
  id: I,
  name: string,
  placement: string,
  disposition: Disposition,
): SafeguardRow & { readonly id: I } {
  return { id, name, placement: [...placement] as Placement[], disposition };
}

const NUMBER: ReadonlyMap<string, number> = new Map(SAFEGUARDS.map((r, i) => [r.id, i + 1]));

/** The row's 1-based number as reports print it. */
export function rowNumber(id: SafeguardId): number {
  return NUMBER.get(id)!;
}

/** The table row of `id`. */
export function rowOf(id: SafeguardId): SafeguardRow {
  return SAFEGUARDS[rowNumber(id) - 1]!;
}

/** Whether `id` names a row of the table (ids also arrive as plain strings from adapters). */
export function isSafeguardId(id: string): id is SafeguardId {
  return NUMBER.has(id);
}
