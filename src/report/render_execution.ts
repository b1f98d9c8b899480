/**
 * The execution report: what happened, node by node, with the evidence behind each outcome.
 * Pure and deterministic: the same model renders to the same bytes.
 */
import { codeSpan, escapeText, tableHead, tableRow } from "./escape.ts";
import { countBy, duration, iso, omittedLine, pick, text } from "./format.ts";
import {
  type AttemptAccount,
  DEFAULT_LIMITS,
  type ExecutionReportModel,
  type RecoveryDecision,
  type RenderLimits,
} from "./model.ts";
import type { ExecutionVerdict } from "../domain/safeguards/verdict.ts";
import {
  caveatSection,
  gapList,
  gapSentence,
  healthSection,
  identitySection,
  journalSection,
  reasonList,
  safeguardSection,
  sourceSection,
} from "./sections.ts";
import { ganttChart, nodeDetails, nodeTable } from "./timeline.ts";

const HEADLINE: Readonly<Record<ExecutionVerdict, string>> = {
  running: "RUNNING: the rollout is in progress.",
  held:
    "HELD: the rollout stopped before the next node's commitment; nothing was sent to that node.",
  refused:
    "REFUSED: a check re-run at the point of dispatch did not pass; nothing was sent to the next node.",
  completed:
    "COMPLETED: every node step is accounted for, its postconditions hold, and every applicable safeguard row passed.",
  unverified:
    "COMPLETED, NOT VERIFIED: every node step is accounted for and its postconditions hold, but not every applicable safeguard row was seen to pass:",
  "safeguard-failed":
    "SAFEGUARD FAILED: every node step completed, but the journal shows a safeguard that did not hold:",
  failed: "FAILED: a completion observation contradicts the plan's postconditions.",
  unresolved:
    "UNRESOLVED: an attempt is unaccounted or evidence is missing; the scope stays held until someone resolves it.",
  rejected: "REJECTED: the target refused before any mutation.",
  cancelled: "CANCELLED: stopped before any attempt was made.",
};

/** Renders `reports/<plan>/execution.md`. */
export function renderExecutionReport(
  model: ExecutionReportModel,
  limits: RenderLimits = DEFAULT_LIMITS,
): string {
  const now = model.generatedAt;
  const gaps = gapSentence(model.gaps);
  const lines = [
    `# Execution report: ${escapeText(model.plan.name)}`,
    "",
    `**Verdict: ${headline(model.verdict, gaps)}**`,
    "",
    ...(gaps ? [...gapList(model.gaps, limits), ""] : []),
    ...(model.reasons.length ? [...reasonList(model.reasons, limits), ""] : []),
    ...summaryTable(model),
    "",
    ...identitySection(model.plan),
    "",
    ...safeguardSection(model.safeguards, limits),
    "",
    ...sourceSection(model.sourceChecks, model.assertions, limits),
    "",
    "## Node timeline",
    "",
    ...ganttChart(model.nodes, now, limits),
    "",
    ...nodeTable(model.nodes, now, limits),
    ...nodeDetails(model.nodes, now, limits),
    "",
    ...attemptSection(model.attempts, limits),
    "",
    ...healthSection(model.healthRounds, limits),
    "",
    ...recoverySection(model.recoveries, limits),
    "",
    ...caveatSection(model.components, model.extraCaveats ?? [], limits),
    "",
    ...journalSection(model.journal),
    "",
    `_Rendered by cairn at ${iso(now)} from the journal records named above._`,
  ];
  return `${collapseBlankLines(lines).join("\n")}\n`;
}

/** The verdict's words, naming the rows that keep it from a clean verdict. */
function headline(verdict: ExecutionVerdict, gaps: string): string {
  const words = HEADLINE[verdict];
  if (!gaps) return words;
  return words.endsWith(":") ? `${words} ${gaps}.` : `${words} Safeguard ${gaps}.`;
}

function summaryTable(m: ExecutionReportModel): string[] {
  const done = m.nodes.filter((n) => n.state === "completed").length;
  const unaccounted = m.attempts.filter((a) => a.accountedBy === null).length;
  const rounds = countBy(m.healthRounds, (r) => r.verdict).map(([v, n]) => `${n} ${v}`).join(", ");
  const end = m.finishedAt ?? m.generatedAt;
  return [
    ...tableHead(["Summary", ""]),
    tableRow(["Nodes completed", `${done} of ${m.nodes.length}`]),
    tableRow(["Attempts", `${m.attempts.length} (${unaccounted} unaccounted)`]),
    tableRow(["Health rounds", `${m.healthRounds.length}${rounds ? ` (${rounds})` : ""}`]),
    tableRow(["Started", iso(m.startedAt)]),
    tableRow([m.finishedAt === undefined ? "Elapsed so far" : "Took", duration(end - m.startedAt)]),
    tableRow(["Journal head", codeSpan(m.journal.headHash)]),
  ];
}

function isNotableAttempt(a: AttemptAccount): boolean {
  return a.accountedBy === null || a.responseClass !== "accepted";
}

function attemptSection(attempts: readonly AttemptAccount[], lim: RenderLimits): string[] {
  if (attempts.length === 0) return ["## Attempts", "", "_No mutation was attempted._"];
  const p = pick(attempts, lim.tableRows, isNotableAttempt);
  const byClass = countBy(attempts, (a) => a.responseClass ?? "none");
  const open = (c: string) =>
    attempts.filter((a) => (a.responseClass ?? "none") === c && a.accountedBy === null).length;
  return [
    "## Attempts",
    "",
    "Every external mutation: its durable intent, when it was sent, its deadlines, how the",
    "response was classified and what accounted for it. An attempt without accounting keeps",
    "its operation unresolved.",
    "",
    ...tableHead(["Response class", "Attempts", "Unaccounted"]),
    ...byClass.map(([c, n]) => {
      const u = open(c);
      return tableRow([c === "none" ? "**none yet**" : c, String(n), u ? `**${u}**` : "0"]);
    }),
    "",
    ...tableHead([
      "Node",
      "Phase",
      "#",
      "Intent",
      "Sent",
      "Transport deadline",
      "Verification deadline",
      "Response",
      "Accounted by",
    ]),
    ...p.shown.map((a) =>
      tableRow([
        codeSpan(a.node),
        escapeText(a.phase),
        String(a.attempt),
        iso(a.intentAt),
        a.sentAt === undefined ? "not sent" : iso(a.sentAt),
        iso(a.transportDeadline),
        iso(a.verificationDeadline),
        `${a.responseClass ?? "**none**"}${a.detail ? `: ${text(a.detail, lim.textMax)}` : ""}`,
        a.accountedBy ?? "**unaccounted**",
      ])
    ),
    ...omittedLine(p, "attempts"),
  ];
}

function recoverySection(recoveries: readonly RecoveryDecision[], lim: RenderLimits): string[] {
  if (recoveries.length === 0) return ["## Recovery decisions", "", "_None were needed._"];
  const p = pick(recoveries, lim.tableRows, () => true);
  return [
    "## Recovery decisions",
    "",
    ...tableHead(["At", "Node", "Decision", "Actor", "Evidence"]),
    ...p.shown.map((r) =>
      tableRow([
        iso(r.at),
        r.node === undefined ? "cluster" : codeSpan(r.node),
        `${text(r.decision, 160)}${r.reason ? ` ${codeSpan(r.reason)}` : ""}`,
        text(r.actor, 120),
        text(r.evidence, lim.textMax),
      ])
    ),
    ...omittedLine(p, "decisions"),
  ];
}

/** Drops runs of blank lines left by empty sections, so output stays tidy and stable. */
export function collapseBlankLines(lines: readonly string[]): string[] {
  const out: string[] = [];
  for (const l of lines) {
    if (l === "" && (out.length === 0 || out.at(-1) === "")) continue;
    out.push(l);
  }
  while (out.at(-1) === "") out.pop();
  return out;
}
