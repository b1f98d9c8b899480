/**
 * The reconcile loop's ReportRenderer: maps what the loop established (plan facts, signature
 * verdicts, journal rows) onto the report models and renders them. Pure; the only time it sees is
 * `generatedAt`. Previews are built from plan checks and signature verdicts alone: they read no
 * cluster, so they make zero writes by construction.
 */
import type { Plan } from "../domain/plan/schema.ts";
import type { PolicyVerdict } from "../domain/trust/policy.ts";
import type {
  ExecutionFacts,
  PlanFacts,
  PreviewFacts,
  ReportRenderer,
} from "../ports/reconcile.ts";
import { executionReportFromJournal, type PlanNode } from "./from_journal.ts";
import { journalRows } from "./journal_rows.ts";
import type {
  ExecutionReportModel,
  PlanIdentity,
  PlannedStep,
  PreviewReportModel,
  SafeguardResult,
  SignerEvidence,
  SourceCheck,
} from "./model.ts";
import { renderExecutionReport } from "./render_execution.ts";
import { renderPreviewReport } from "./render_preview.ts";
import type { Component } from "./rollback_caveats.ts";
import type { SafeguardId } from "./safeguards.ts";

/** Plan-check reason codes behind each plan-time safeguard row. */
const PLAN_ROWS: ReadonlyArray<readonly [SafeguardId, readonly string[]]> = [
  ["NoDowngradeNoSkippedMinor", ["VersionDowngrade", "SkippedMinor", "VersionUnchanged"]],
  ["LatestPatchBeforeMinor", ["MissingIntermediatePatch", "CatalogueStale", "CatalogueMissing"]],
  ["KubeletInSupportWindow", ["KubeletOutsideWindow", "KubernetesUnsupported"]],
  ["InstallerDigestResolved", ["InstallerImageMismatch"]],
  ["ClientMatchesServer", ["RpcPathMismatch", "HopChainBroken"]],
  ["RolloutOrdered", ["NodeListInvalid", "ParallelismUnsupported"]],
];

/** Creates the renderer. */
export function reconcileReports(): ReportRenderer {
  return {
    preview: (f) => renderPreviewReport(previewModel(f)),
    execution: (f) => renderExecutionReport(executionModel(f)),
    outcome: (f) => executionModel(f).outcome,
  };
}

/** The preview model of a plan as it stands on a branch. */
export function previewModel(f: PreviewFacts): PreviewReportModel {
  const { facts } = f;
  return {
    plan: identity(facts),
    generatedAt: f.generatedAt,
    verdict: f.verdict,
    reasons: facts.refusals.map((r) => ({ ...r })),
    safeguards: [...planSafeguards(facts), {
      id: "PreviewReadOnly",
      verdict: "pass",
      evidence: "built from Git, plan checks and the trust root only; no cluster was contacted",
    }],
    sourceChecks: boundEvidence(facts),
    assertions: [],
    healthRounds: [],
    components: components(facts.plan),
    rollout: rollout(facts.plan),
    writes: {
      count: 0,
      evidence: "it reads Git and the trust root only; no cluster connection is opened",
    },
  };
}

/** The execution model of a bound plan from journal rows. */
export function executionModel(f: ExecutionFacts): ExecutionReportModel {
  const model = executionReportFromJournal({
    rows: journalRows(f.journal),
    identity: identity(f.facts),
    nodes: planNodes(f.facts.plan),
    head: { headHash: f.head.hash, eventCount: f.head.events },
    generatedAt: f.generatedAt,
    ...(f.end ? { end: f.end } : {}),
    planSafeguards: planSafeguards(f.facts),
    components: components(f.facts.plan),
  });
  return { ...model, sourceChecks: boundEvidence(f.facts) };
}

/**
 * A plan that binds a pinned-evidence manifest is never reported as binding none: until the
 * loop runs the offline source check, the bound manifest shows as unread, not as passing.
 */
function boundEvidence(facts: PlanFacts): SourceCheck[] {
  const p = facts.plan;
  const bound = p && (p.kind === "TalosUpgrade" || p.kind === "KubernetesUpgrade")
    ? p.spec.evidence
    : undefined;
  if (!bound) return [];
  return [{
    repository: "evidence manifest (bound by the plan)",
    revision: "-",
    path: bound.path,
    expectedSha256: bound.sha256,
    verdict: "unreadable",
    reason: "EvidenceFileMissing",
  }];
}

function identity(facts: PlanFacts): PlanIdentity {
  const p = facts.plan;
  const expires = p ? Date.parse(p.metadata.expires) : NaN;
  return {
    name: facts.name,
    kind: p?.kind ?? "unknown",
    cluster: p?.metadata.cluster ?? "unknown",
    digest: facts.digest,
    author: p?.metadata.author ?? "unknown",
    commit: facts.commit,
    branch: facts.branch,
    signers: facts.policy ? signers(facts.policy) : [],
    approvals: {
      required: facts.requiredApprovals,
      valid: facts.policy?.approvers.length ?? 0,
    },
    ...(Number.isFinite(expires) ? { expiresAt: expires } : {}),
  };
}

function signers(policy: PolicyVerdict): SignerEvidence[] {
  return policy.signatures.map((s): SignerEvidence => ({
    principal: s.principals.join(",") || "untrusted key",
    role: s.role === "author" ? "author" : "approver",
    keyFingerprint: s.fingerprint ?? "unreadable",
    verdict: s.ok ? "valid" : "invalid",
    ...(s.reason ? { reason: s.reason } : {}),
  }));
}

function planSafeguards(facts: PlanFacts): SafeguardResult[] {
  if (!facts.plan) return [];
  const found = new Set(facts.problems.map((p) => p.reason as string));
  return PLAN_ROWS.map(([id, reasons]): SafeguardResult => {
    const hit = reasons.filter((r) => found.has(r));
    return hit.length
      ? { id, verdict: "fail", evidence: `plan checks found ${hit.join(", ")}`, reason: hit[0]! }
      : { id, verdict: "pass", evidence: `plan checks found none of ${reasons.join(", ")}` };
  });
}

function planNodes(plan: Plan | undefined): PlanNode[] {
  if (!plan || plan.kind === "ComponentUpgrade") return [];
  return plan.spec.nodes.map((n) => ({ name: n.name, role: n.role }));
}

function rollout(plan: Plan | undefined): PlannedStep[] {
  if (!plan || plan.kind !== "TalosUpgrade") {
    return planNodes(plan).map((n) => ({ node: n.name, role: n.role, from: "-", to: "-" }));
  }
  const from = plan.spec.hops[0]?.from ?? "?";
  const to = plan.spec.hops.at(-1)?.to ?? "?";
  return plan.spec.nodes.map((n) => ({ node: n.name, role: n.role, from, to }));
}

function components(plan: Plan | undefined): Component[] {
  if (plan?.kind === "KubernetesUpgrade") return ["kubernetes"];
  return ["talos"];
}
