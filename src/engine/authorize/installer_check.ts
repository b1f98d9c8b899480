/**
 * Installer resolution before commitment: each hop's installer reference is resolved now, for the
 * plan's platform (`linux/<arch>`), and must reproduce the digest the plan pins. A different
 * digest, a missing image or platform refuses; a registry that cannot be read holds — an
 * unresolved installer is never a pass.
 */
import { pinnedInstaller, resolutionMatches } from "../../domain/oci/installer.ts";
import type { TalosUpgradePlan } from "../../domain/plan/schema.ts";
import type { InstallerResolution, InstallerResolver } from "../../ports/dispatch.ts";
import type { DispatchCheckItem } from "./dispatch_check.ts";

/** One hop's resolution as the journal records it (the report's installer row reads it). */
export interface InstallerCheck {
  readonly hop: number;
  readonly reference: string;
  readonly pinned: string;
  readonly platform: string;
  /** Present when the registry answered with a manifest for the platform. */
  readonly resolved?: InstallerResolution;
  readonly item: DispatchCheckItem;
}

/**
 * Resolves every hop's installer. Without a resolver each hop is recorded as not evaluated (the
 * report's installer row then says so); it is never recorded as a pass.
 */
export async function resolveInstallers(
  plan: TalosUpgradePlan,
  resolver: InstallerResolver | undefined,
): Promise<InstallerCheck[]> {
  const platform = { os: "linux", architecture: plan.spec.arch };
  const label = `linux/${plan.spec.arch}`;
  const out: InstallerCheck[] = [];
  for (const [hop, h] of plan.spec.hops.entries()) {
    const { reference, pinned } = pinnedInstaller(h);
    const base = { hop, reference, pinned, platform: label };
    if (!resolver) {
      out.push({
        ...base,
        item: {
          check: "installer",
          verdict: "not-evaluated",
          detail: `hop ${hop}: no registry was configured to resolve ${reference} for ${label}; ` +
            "the installer was not resolved",
        },
      });
      continue;
    }
    const r = await resolver.resolve(reference, platform);
    if (!r.ok) {
      const unreadable = r.failure.reason === "RegistryUnreadable";
      out.push({
        ...base,
        item: {
          check: "installer",
          verdict: unreadable ? "unreadable" : "fail",
          reason: r.failure.reason,
          detail: `hop ${hop}: ${reference} for ${label} through ${resolver.describe()}: ` +
            r.failure.message,
        },
      });
      continue;
    }
    const v = r.value;
    const from = v.indexDigest ? ` (index ${v.indexDigest})` : "";
    const matches = resolutionMatches(pinned, v);
    out.push({
      ...base,
      resolved: v,
      item: matches
        ? {
          check: "installer",
          verdict: "pass",
          detail: `hop ${hop}: ${reference} for ${label} resolves to ${v.digest}${from} at ` +
            `${v.registry}, as pinned`,
        }
        : {
          check: "installer",
          verdict: "fail",
          reason: "InstallerDigestMismatch",
          detail: `hop ${hop}: ${reference} for ${label} resolves to ${v.digest}${from} at ` +
            `${v.registry}; the plan pins ${pinned}`,
        },
    });
  }
  return out;
}
