/**
 * What the journal keeps of a dispatch check: each check's verdict and detail, the refusals with
 * their reason codes, where the bound files were read, and every installer resolution (reference,
 * pinned digest, platform, resolved digest and index, registry, verdict) so a report can judge the
 * installer from the record alone.
 */
import type { DispatchCheckResult } from "./dispatch_check.ts";

/** The `detail` of a `dispatch-check` journal event. */
export function dispatchJournalDetail(r: DispatchCheckResult): Record<string, unknown> {
  return {
    files: r.files,
    checks: r.items.map((i) => ({
      check: i.check,
      verdict: i.verdict,
      reason: i.reason ?? null,
      detail: i.detail,
    })),
    refusals: r.refusals.map((x) => ({
      reason: x.reason,
      message: x.message,
      where: x.where ?? "",
    })),
    installers: r.installers.map((i) => ({
      hop: i.hop,
      reference: i.reference,
      pinned: i.pinned,
      platform: i.platform,
      verdict: i.item.verdict,
      reason: i.item.reason ?? null,
      digest: i.resolved?.digest ?? null,
      indexDigest: i.resolved?.indexDigest ?? null,
      registry: i.resolved?.registry ?? null,
    })),
  };
}
