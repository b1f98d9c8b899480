/**
 * Plan-validation (P) rows judged from what `cairn plan check` found in the plan: each row names
 * the reason codes that would violate it; a row passes only when the checks ran (the plan parsed)
 * and found none of them. Rows about Kubernetes upgrades are not applicable to a TalosUpgrade,
 * with that reason. Pure.
 */
import type { Reason } from "../reasons.ts";
import type { RowResult } from "./result.ts";
import type { SafeguardId } from "./table.ts";

/** Plan-check reason codes behind each plan-time safeguard row. */
const PLAN_ROWS: ReadonlyArray<readonly [SafeguardId, readonly Reason[]]> = [
  ["NoDowngradeNoSkippedMinor", ["VersionDowngrade", "SkippedMinor", "VersionUnchanged"]],
  ["LatestPatchBeforeMinor", ["MissingIntermediatePatch", "CatalogueStale", "CatalogueMissing"]],
  ["KubeletInSupportWindow", ["KubeletOutsideWindow", "KubernetesUnsupported"]],
  ["InstallerDigestResolved", ["InstallerImageMismatch"]],
  ["ClientMatchesServer", ["RpcPathMismatch", "HopChainBroken"]],
  ["RolloutOrdered", ["NodeListInvalid", "ParallelismUnsupported"]],
];

/** Rows about Kubernetes upgrades, which a TalosUpgrade does not perform. */
const KUBERNETES_ROWS: readonly SafeguardId[] = [
  "KubernetesAfterUniformOs",
  "KubernetesSkewChecked",
  "BootstrapOwnershipChecked",
  "DryRunWithoutPrePull",
];

/** Rows about installing an OS image, which a ConfigApply does not do. */
const OS_IMAGE_ROWS: readonly SafeguardId[] = [
  "SchematicPreserved",
  "InstallerDigestResolved",
  "NoDowngradeNoSkippedMinor",
  "LatestPatchBeforeMinor",
  "KubeletInSupportWindow",
  "InstallerImageExists",
];

/** What a ConfigApply's plan checks speak to (docs/config-apply.md#mode-and-class). */
const CONFIG_ROWS: ReadonlyArray<readonly [SafeguardId, readonly Reason[]]> = [
  // The apply's RPC qualified for the Talos version: a mode the version rejects, or one that
  // cannot bring the declared activation class about with every step journaled.
  ["ClientMatchesServer", ["ConfigApplyModeUnsupported", "ConfigApplyModeMismatch"]],
  ["RolloutOrdered", ["NodeListInvalid", "ParallelismUnsupported"]],
];

function notApplicable(ids: readonly SafeguardId[], evidence: string): RowResult[] {
  return ids.map((id): RowResult => ({ id, verdict: "not-applicable", evidence }));
}

/** The P rows of a plan of `kind` whose checks found `found`; nothing when it did not parse. */
export function judgePlanChecks(
  kind: string | undefined,
  found: ReadonlySet<string>,
): RowResult[] {
  if (kind === undefined) return [];
  if (kind === "ConfigApply") {
    return [
      ...notApplicable(
        [...OS_IMAGE_ROWS, ...KUBERNETES_ROWS],
        "a ConfigApply installs no image and changes no Talos or Kubernetes version",
      ),
      ...judged(CONFIG_ROWS, found),
    ];
  }
  const notApplicableRows = kind === "TalosUpgrade"
    ? notApplicable(
      KUBERNETES_ROWS,
      "a TalosUpgrade changes no Kubernetes version or bootstrap manifest",
    )
    : [];
  return [...notApplicableRows, ...judged(PLAN_ROWS, found)];
}

function judged(
  rows: ReadonlyArray<readonly [SafeguardId, readonly Reason[]]>,
  found: ReadonlySet<string>,
): RowResult[] {
  return rows.map(([id, reasons]): RowResult => {
    const hit = reasons.filter((r) => found.has(r));
    return hit.length
      ? { id, verdict: "fail", evidence: `plan checks found ${hit.join(", ")}`, reason: hit[0]! }
      : { id, verdict: "pass", evidence: `plan checks found none of ${reasons.join(", ")}` };
  });
}
