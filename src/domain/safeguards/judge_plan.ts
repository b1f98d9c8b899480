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

/** The P rows of a plan of `kind` whose checks found `found`; nothing when it did not parse. */
export function judgePlanChecks(
  kind: string | undefined,
  found: ReadonlySet<string>,
): RowResult[] {
  if (kind === undefined) return [];
  const notApplicable = kind === "TalosUpgrade"
    ? KUBERNETES_ROWS.map((id): RowResult => ({
      id,
      verdict: "not-applicable",
      evidence: "a TalosUpgrade changes no Kubernetes version or bootstrap manifest",
    }))
    : [];
  return [
    ...notApplicable,
    ...PLAN_ROWS.map(([id, reasons]): RowResult => {
      const hit = reasons.filter((r) => found.has(r));
      return hit.length
        ? { id, verdict: "fail", evidence: `plan checks found ${hit.join(", ")}`, reason: hit[0]! }
        : { id, verdict: "pass", evidence: `plan checks found none of ${reasons.join(", ")}` };
    }),
  ];
}
