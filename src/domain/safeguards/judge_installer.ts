/**
 * Row 10 (installer image exists for the exact platform): passes only on a recorded resolution of
 * every hop's installer reference, for the plan's platform, to the digest the plan pins — at
 * preview from the preview's own resolution, at execution from the dispatch check journaled before
 * each commitment. No resolution is "installer not resolved", never a pass; an unreadable registry
 * is unreadable; another digest, a missing image or platform fails. Pure.
 */
import { resolutionMatches } from "../oci/installer.ts";
import type { Judged } from "./result.ts";

/** One hop's installer resolution as recorded. */
export interface InstallerRecord {
  readonly hop: number;
  readonly reference: string;
  readonly pinned: string;
  readonly platform: string;
  /** The resolution check's verdict (`pass`, `fail`, `unreadable`, `not-evaluated`). */
  readonly verdict: string;
  readonly reason: string | null;
  /** The platform manifest's digest the registry answered with, when it answered. */
  readonly digest: string | null;
  readonly indexDigest: string | null;
}

/** Row 10 with no resolution recorded. */
export const INSTALLER_UNRESOLVED: Judged = {
  verdict: "not-evaluated",
  evidence: "installer not resolved: no registry resolution of the pinned per-platform digest " +
    "was recorded",
};

/** Row 10 from one set of resolutions (every hop of the plan). */
export function judgeInstallers(records: readonly InstallerRecord[]): Judged {
  if (records.length === 0) return INSTALLER_UNRESOLVED;
  const failed = records.filter((r) => r.verdict === "fail");
  if (failed.length) {
    return {
      verdict: "fail",
      evidence: failed.map((r) =>
        `hop ${r.hop}: ${r.reference} for ${r.platform} ` +
        (r.digest ? `resolved to ${r.digest}, not the pinned ${r.pinned}` : "did not resolve")
      ).join("; "),
      reason: failed[0]!.reason ?? "InstallerDigestMismatch",
    };
  }
  const unread = records.filter((r) => r.verdict === "unreadable");
  if (unread.length) {
    return {
      verdict: "unreadable",
      evidence: `the registry could not be read for hop(s) ${unread.map((r) => r.hop).join(", ")}`,
      reason: unread[0]!.reason ?? "RegistryUnreadable",
    };
  }
  // A pass must show its digest: the recorded verdict alone is not the resolution.
  const unresolved = records.filter((r) =>
    r.verdict !== "pass" || r.digest === null ||
    !resolutionMatches(r.pinned, {
      digest: r.digest,
      ...(r.indexDigest ? { indexDigest: r.indexDigest } : {}),
    })
  );
  if (unresolved.length) {
    return {
      verdict: "not-evaluated",
      evidence: `installer not resolved for hop(s) ${unresolved.map((r) => r.hop).join(", ")}: ` +
        "no resolution to the pinned per-platform digest was recorded",
    };
  }
  return {
    verdict: "pass",
    evidence: records.map((r) =>
      `hop ${r.hop}: ${r.reference} for ${r.platform} resolved to the pinned ${r.pinned}`
    )
      .join("; "),
  };
}
