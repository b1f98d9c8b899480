/**
 * The preview report: what reviewers decide on before signing. Read-only evidence only; the
 * verdict says whether the plan can be approved as it stands, and why not.
 */
import { operatingSection } from "./beside_section.ts";
import { codeSpan, escapeText, tableHead, tableRow } from "./escape.ts";
import { iso, omittedLine, pick } from "./format.ts";
import {
  DEFAULT_LIMITS,
  type PlannedStep,
  type PreviewReportModel,
  type PreviewVerdict,
  type RenderLimits,
} from "./model.ts";
import { collapseBlankLines } from "./render_execution.ts";
import {
  caveatSection,
  gapList,
  gapSentence,
  identitySection,
  journalSection,
  reasonList,
  safeguardSection,
  sourceSection,
} from "./sections.ts";
import { healthSection } from "./health_section.ts";

const HEADLINE: Readonly<Record<PreviewVerdict, string>> = {
  ready:
    "READY FOR APPROVAL: every plan-time (P) safeguard row was evaluated on current evidence and passed.",
  "not-ready":
    "NOT READY: the plan's checks passed, but not every plan-time (P) safeguard row was seen to pass:",
  refused: "REFUSED: this plan cannot be executed as written.",
  held: "HELD: evidence is missing or unreadable; the plan waits until it can be checked.",
};

/** Renders a plan's preview on one branch (`reports/<plan>/preview/<branch>.md`). */
export function renderPreviewReport(
  model: PreviewReportModel,
  limits: RenderLimits = DEFAULT_LIMITS,
): string {
  const writes = model.writes.count === 0
    ? `The preview made no writes to the cluster (${escapeText(model.writes.evidence)}).`
    : model.writes.count === null
    ? `**The preview's write count is unknown** (${escapeText(model.writes.evidence)}).`
    : `**The preview attempted ${model.writes.count} writes to the cluster** (${
      escapeText(model.writes.evidence)
    }); a preview must attempt none.`;
  const gaps = gapSentence(model.gaps);
  const words = HEADLINE[model.verdict];
  const verdict = !gaps
    ? words
    : words.endsWith(":")
    ? `${words} ${gaps}.`
    : `${words} Plan-time safeguard ${gaps}.`;
  const lines = [
    `# Preview report: ${escapeText(model.plan.name)}`,
    "",
    `**Verdict: ${verdict}**`,
    "",
    ...(gaps ? [...gapList(model.gaps, limits), ""] : []),
    ...(model.reasons.length ? [...reasonList(model.reasons, limits), ""] : []),
    writes,
    "Approval authorises exactly the plan digest below; any change to the file is a new plan.",
    "",
    ...identitySection(model.plan),
    "",
    ...safeguardSection(model.safeguards, limits, "preview"),
    "",
    ...sourceSection(model.sourceChecks, model.assertions, limits),
    "",
    ...rolloutSection(model.rollout, limits),
    "",
    ...operatingSection(model.operating),
    "",
    ...healthSection(model.healthRounds, limits),
    "",
    ...caveatSection(model.components, model.extraCaveats ?? [], limits),
    "",
    ...journalSection(model.journal),
    "",
    `_Rendered by cairn at ${iso(model.generatedAt)} at commit ${codeSpan(model.plan.commit)}._`,
  ];
  return `${collapseBlankLines(lines).join("\n")}\n`;
}

function rolloutSection(steps: readonly PlannedStep[], lim: RenderLimits): string[] {
  if (steps.length === 0) return ["## Rollout order", "", "_The plan names no node steps._"];
  const p = pick(steps, lim.tableRows, () => false);
  const workers = steps.filter((s) => s.role === "worker").length;
  return [
    "## Rollout order",
    "",
    `${steps.length} node steps, one at a time: ${workers} workers first, then ${
      steps.length - workers
    } control planes. Each step waits for a fresh passing gate.`,
    "",
    ...tableHead(["#", "Node", "Role", "From", "To"]),
    ...p.shown.map((s, i) =>
      tableRow([String(i + 1), codeSpan(s.node), s.role, codeSpan(s.from), codeSpan(s.to)])
    ),
    ...omittedLine(p, "steps"),
  ];
}
