/**
 * The reconcile loop's ReportRenderer: maps what the loop established (plan facts, signature
 * verdicts, journal rows) onto the report models and renders them. Pure; the only time it sees is
 * `generatedAt`. Previews show plan checks, signature verdicts, the bound evidence manifest's
 * offline check and, when the loop has a cluster connection, the live zero-write findings (node
 * versions, drain planning, one health round); each row says what was actually seen.
 */
import type { BranchReview } from "../domain/review/model.ts";
import { renderReviewReport } from "./render_review.ts";
import type { Playbook } from "../domain/playbook/schema.ts";
import { componentOutcomeWord, renderComponentExecution } from "./component_execution.ts";
import { isOperatedPlan, type Plan } from "../domain/plan/schema.ts";
import { nextWindow } from "../domain/ops/window.ts";
import type { OperatingPlan, WindowLine } from "./beside_section.ts";
import { expectedStepMs } from "../domain/ops/expected_step.ts";
import type { PolicyVerdict } from "../domain/trust/policy.ts";
import type {
  ExecutionFacts,
  LiveFindings,
  PlanFacts,
  PreviewFacts,
  ReportRenderer,
} from "../ports/reconcile.ts";
import { evidenceReadingRows, evidenceReasonLines } from "./evidence_reading.ts";
import type { EvidenceRows } from "./from_evidence.ts";
import { executionReportFromJournal, type PlanNode } from "./from_journal.ts";
import type {
  ExecutionReportModel,
  HealthRound,
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
import type { PlannedHop } from "../domain/safeguards/judge_execution.ts";
import { judgePlanChecks } from "../domain/safeguards/judge_plan.ts";
import { judgePreview } from "../domain/safeguards/judge_preview.ts";
import { completeRows } from "../domain/safeguards/result.ts";
import { isSafeguardId } from "../domain/safeguards/table.ts";
import { previewVerdict } from "../domain/safeguards/verdict.ts";

/**
 * Creates the renderer; `playbooks` give a ComponentUpgrade's report its after-merge checks,
 * breaking patterns and rollback caveats.
 */
export function reconcileReports(
  o: { readonly playbooks?: readonly Playbook[] } = {},
): ReportRenderer {
  return {
    preview: (f) => withReviewSection(renderPreviewReport(previewModel(f)), f.facts.review),
    execution: (f) =>
      f.facts.plan?.kind === "ComponentUpgrade"
        ? renderComponentExecution(f, f.facts.plan, o.playbooks ?? [])
        : renderExecutionReport(executionModel(f)),
    outcome: (f) =>
      f.facts.plan?.kind === "ComponentUpgrade"
        ? componentOutcomeWord(f)
        : executionModel(f).outcome,
    previewVerdict: (f) => previewModel(f).verdict,
  };
}

/**
 * A ComponentUpgrade preview carries the review of its branch's change below the preview, its
 * headings one level down (the preview keeps the only top-level heading).
 */
function withReviewSection(preview: string, review: BranchReview | undefined): string {
  if (!review) return preview;
  const section = renderReviewReport(review).replace(/^(#+) /gm, "#$1 ");
  return `${preview.replace(/\n*$/, "\n")}\n${section}`;
}

/** The preview model of a plan as it stands on a branch; its verdict follows from the rows. */
export function previewModel(f: PreviewFacts): PreviewReportModel {
  const { facts, live } = f;
  const evidence = boundEvidence(facts);
  const reads = live
    ? `built from Git, plan checks, the trust root and the evidence cache; on the cluster ${live.reads}`
    : "built from Git, plan checks, the trust root and the evidence cache; no cluster was contacted";
  const writes = !live
    ? {
      count: 0,
      evidence: "it reads Git and the trust root only; no cluster connection is opened",
    }
    : live.writes === undefined
    ? undefined
    : {
      count: live.writes.count,
      evidence: live.writes.count === 0
        ? "the read-only guard around the Kubernetes and Talos clients counted 0 mutating calls"
        : `the read-only guard refused, before sending: ${live.writes.refused.join(", ")}`,
    };
  const safeguards = completeRows(
    planSafeguards(facts),
    judgePreview({
      connected: live !== undefined,
      ...(live?.installers ? { installers: live.installers } : {}),
      live: liveSafeguards(live),
      ...otherCluster(live),
      rounds: (live?.healthRounds ?? []).map((r) => ({
        verdict: r.verdict,
        results: r.results.map((x) => ({
          binding: x.binding,
          reader: x.reader ?? null,
          outcome: x.verdict,
        })),
      })),
      ...(writes
        ? { writes: { count: writes.count, evidence: `${writes.evidence}; ${reads}` } }
        : {}),
    }),
  );
  const { verdict, gaps } = previewVerdict(f.verdict, safeguards);
  const operating = operatingOf(facts.plan, f.generatedAt);
  return {
    ...(operating ? { operating } : {}),
    plan: identity(facts),
    generatedAt: f.generatedAt,
    verdict,
    gaps,
    reasons: [
      ...facts.refusals.map((r) => ({ ...r })),
      ...(live?.reasons ?? []).map((r) => ({ ...r })),
      ...(facts.evidence ? evidenceReasonLines(facts.evidence) : []).filter((l) =>
        !facts.refusals.some((r) => r.reason === l.reason)
      ),
    ],
    safeguards,
    sourceChecks: evidence.sourceChecks,
    assertions: [...(live?.checks ?? []), ...evidence.assertions],
    healthRounds: (live?.healthRounds ?? []).map((r, k): HealthRound => ({
      id: `preview-${k + 1}`,
      purpose: "preflight",
      startedAt: r.startedAt,
      endedAt: r.endedAt,
      verdict: r.verdict,
      results: r.results.map((x) => ({
        binding: x.binding,
        verdict: x.verdict,
        ...(x.reason !== undefined ? { reason: x.reason } : {}),
        evidence: x.evidence,
      })),
    })),
    components: components(facts.plan),
    rollout: rollout(facts.plan),
    writes: writes ?? {
      count: null,
      evidence: "the live preview failed before its read-only guard's count could be read",
    },
  };
}

/** The execution model of a bound plan from the journal's history of it. */
export function executionModel(f: ExecutionFacts): ExecutionReportModel {
  const model = executionReportFromJournal({
    history: f.history,
    identity: identity(f.facts),
    nodes: planNodes(f.facts.plan),
    hops: planHops(f.facts.plan),
    head: { headHash: f.head.hash, eventCount: f.head.events },
    generatedAt: f.generatedAt,
    ...(f.end ? { end: f.end } : {}),
    planSafeguards: planSafeguards(f.facts),
    components: components(f.facts.plan),
  });
  const evidence = boundEvidence(f.facts);
  const window = windowOf(f.facts.plan, f.generatedAt);
  return {
    ...model,
    sourceChecks: evidence.sourceChecks,
    assertions: [...model.assertions, ...evidence.assertions],
    ...(window ? { window } : {}),
  };
}

/** What a plan declares beside its steps, for the preview; undefined when nothing. */
function operatingOf(plan: Plan | undefined, atMs: number): OperatingPlan | undefined {
  if (!plan || !isOperatedPlan(plan)) return undefined;
  const s = plan.spec;
  if (!s.windows && !s.breakpoints && !s.hooks && !s.expectedNoise) return undefined;
  const window = windowOf(plan, atMs);
  return {
    ...(window ? { window } : {}),
    ...(s.windows ? { expectedStepMinutes: Math.round(expectedStepMs(plan) / 60_000) } : {}),
    breakpoints: (s.breakpoints ?? []).map((b) => `${b.name}: after ${b.after}`),
    hooks: (s.hooks ?? []).map((h) =>
      `${h.name} in ${h.namespace} (${h.image}, ${h.timeoutSeconds}s)` +
      (h.pre ? `; pre: ${h.pre.command.join(" ")}` : "") +
      (h.post ? `; post: ${h.post.command.join(" ")}` : "")
    ),
    noise: (s.expectedNoise ?? []).map((n) =>
      `${n.name}: ${
        n.matchers.map((m) => `${m.name}${m.isEqual ? "" : "!"}${m.isRegex ? "=~" : "="}${m.value}`)
          .join(", ")
      }, ${n.nodeLabel}=<node>`
    ),
  };
}

/** The plan's maintenance window in force at `atMs`, or its next one (docs/operating.md). */
function windowOf(plan: Plan | undefined, atMs: number): WindowLine | undefined {
  if (!plan || !isOperatedPlan(plan) || !plan.spec.windows) return undefined;
  const w = nextWindow(plan.spec.windows, atMs);
  if (!w) return { state: "none" };
  return {
    state: w.opensAtMs <= atMs ? "open" : "next",
    opensAtMs: w.opensAtMs,
    closesAtMs: w.closesAtMs,
  };
}

/** Rows the live preview evaluated (ids it does not know are dropped). */
/** The cluster-identity check's finding when the cluster read is not confirmed as the plan's. */
function otherCluster(live?: LiveFindings): { otherCluster?: string } {
  const check = live?.checks.find((c) => c.name === "cluster identity");
  if (!live || check?.verdict === "pass") return {};
  return { otherCluster: check ? check.detail : "the cluster's identity was not checked" };
}

function liveSafeguards(live?: LiveFindings): SafeguardResult[] {
  return (live?.safeguards ?? []).flatMap((r): SafeguardResult[] =>
    isSafeguardId(r.id)
      ? [{
        id: r.id,
        verdict: r.verdict,
        evidence: r.evidence,
        ...(r.reason ? { reason: r.reason } : {}),
      }]
      : []
  );
}

/**
 * The bound evidence manifest's rows: every tuple, assertion and control when the loop ran the
 * offline check; otherwise one honest row — never reported as binding none, never as passing.
 */
function boundEvidence(facts: PlanFacts): EvidenceRows {
  if (facts.evidence) return evidenceReadingRows(facts.evidence);
  const p = facts.plan;
  const bound = p && (p.kind === "TalosUpgrade" || p.kind === "KubernetesUpgrade")
    ? p.spec.evidence
    : undefined;
  if (!bound) return { sourceChecks: [], assertions: [] };
  const placeholder: SourceCheck = {
    repository: "evidence manifest (bound by the plan)",
    revision: "-",
    path: bound.path,
    expectedSha256: bound.sha256,
    verdict: "unreadable",
    reason: "EvidenceFileMissing",
  };
  return { sourceChecks: [placeholder], assertions: [] };
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

/** The plan-check rows (judged in the domain from what the checks found). */
function planSafeguards(facts: PlanFacts): SafeguardResult[] {
  return judgePlanChecks(facts.plan?.kind, new Set(facts.problems.map((p) => p.reason)));
}

function planHops(plan: Plan | undefined): PlannedHop[] {
  if (plan?.kind !== "TalosUpgrade") return [];
  return plan.spec.hops.map((h) => ({ to: h.to, schematic: h.installer.schematic }));
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
