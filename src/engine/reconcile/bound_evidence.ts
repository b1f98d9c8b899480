/**
 * The bound evidence manifest of a plan under the loop: read at the plan's commit from Git (the
 * path resolves from `plans/` first, then the repository root, as for the catalogue) and handed
 * to the offline checker. A manifest whose digest differs from the bound one is a refusal: it
 * changed after the plan was written and is never silently used.
 */
import type { Plan } from "../../domain/plan/schema.ts";
import type { PlanSource } from "../../ports/plan_source.ts";
import type { EvidenceChecker, EvidenceReading } from "../../ports/reconcile.ts";
import type { ReasonNote } from "../../domain/reasons.ts";
import type { Verdict } from "../../domain/verdict.ts";

/** The plan's `spec.evidence`, when its kind binds one. */
export function boundManifest(
  plan: Plan | undefined,
): { path: string; sha256: string } | undefined {
  if (!plan || (plan.kind !== "TalosUpgrade" && plan.kind !== "KubernetesUpgrade")) {
    return undefined;
  }
  return plan.spec.evidence;
}

/** Reads and checks the bound manifest; undefined when the plan binds none. */
export async function checkBoundEvidence(
  plan: Plan | undefined,
  commit: string,
  source: PlanSource,
  checker: EvidenceChecker,
): Promise<EvidenceReading | undefined> {
  const bound = boundManifest(plan);
  if (!bound) return undefined;
  for (const path of [`plans/${bound.path}`, bound.path]) {
    const bytes = await source.readFile(commit, path);
    if (bytes) return await checker.check({ path: bound.path, sha256: bound.sha256, bytes });
  }
  return await checker.check({ path: bound.path, sha256: bound.sha256 });
}

/** A reading that must refuse the plan (the manifest changed after the plan bound it). */
export function evidenceRefusal(r: EvidenceReading | undefined): ReasonNote | undefined {
  if (r?.status !== "unread" || r.reason !== "EvidenceManifestDigestMismatch") return undefined;
  return { reason: r.reason, message: r.message, where: r.file };
}

/** True only when every tuple, assertion and control behaved as declared. */
export function evidencePassed(r: EvidenceReading): boolean {
  return r.status === "checked" && r.outcome.status === "checked" && r.outcome.result.ok;
}

/** What the journal keeps of an evidence reading: the verdict and every per-item verdict. */
export function evidenceJournalEntry(
  r: EvidenceReading,
  bound: { path: string; sha256: string },
): {
  manifestPath: string;
  manifestSha256: string;
  verdict: Verdict;
  detail: Record<string, unknown>;
} {
  const base = { manifestPath: bound.path, manifestSha256: bound.sha256 };
  if (r.status === "unread") {
    return { ...base, verdict: r.verdict, detail: { reason: r.reason, message: r.message } };
  }
  if (r.outcome.status !== "checked") {
    // Refused for secret-looking content: keep the reason, never the content.
    return { ...base, verdict: "unreadable", detail: { reason: r.outcome.problem.reason } };
  }
  const res = r.outcome.result;
  const unread = res.sources.some((s) => s.cachedSha256 === undefined);
  return {
    ...base,
    verdict: res.ok ? "pass" : unread ? "unreadable" : "fail",
    detail: {
      mode: res.mode,
      counts: res.counts,
      sources: res.sources.map((s) => ({ id: s.id, verdict: s.verdict, reason: s.reason ?? null })),
      assertions: res.assertions.map((a) => ({ name: a.name, verdict: a.verdict })),
      controls: res.controls.map((c) => ({
        name: c.name,
        verdict: c.verdict,
        observed: c.observed,
      })),
    },
  };
}
