/**
 * The execution report: what happened, node by node, with the evidence behind each outcome.
 * Pure and deterministic: the same model renders to the same bytes.
 */
import { codeSpan, escapeText, tableHead, tableRow } from "./escape.ts";
import { clock, countBy, duration, iso, omittedLine, pick, text } from "./format.ts";
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
  identitySection,
  journalSection,
  reasonList,
  safeguardSection,
  sourceSection,
} from "./sections.ts";
import { ganttChart, isNotableNode, nodeDetails, nodeTable } from "./timeline.ts";
import { failureRuns, healthSection } from "./health_section.ts";
import { besideSection, hookSection } from "./beside_section.ts";

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
    ...attentionSection(model, limits),
    "",
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
    ...besideSection(model.beside ?? [], limits, model.window),
    "",
    ...hookSection(model.hooks ?? [], limits),
    "",
    ...attemptSection(model.attempts, model.startedAt, limits),
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
  ];
}

/**
 * What a reviewer should look at first, before any detail: the rows that did not pass, the
 * reasons behind a refusal, operations that did not complete, unaccounted attempts and health
 * rounds that never passed again. Rendering only: every item is a row or record already judged.
 */
function attentionSection(m: ExecutionReportModel, lim: RenderLimits): string[] {
  const nodes = m.nodes.filter(isNotableNode).map((n) =>
    `- Node ${codeSpan(n.node)} **${n.state}**${n.note ? `: ${text(n.note, lim.textMax)}` : ""}`
  );
  const open = m.attempts.filter((a) => a.accountedBy === null).map((a) =>
    `- Attempt ${a.attempt} (${escapeText(a.phase)}) on ${codeSpan(a.node)} **unaccounted**` +
    (a.sentAt === undefined ? ": intent recorded, not sent" : `: sent ${iso(a.sentAt)}`)
  );
  const runs = failureRuns(m.healthRounds);
  const stuck = runs.filter((r) => r.next === undefined).map((r) =>
    `- Health ${r.rounds[0]!.purpose}${
      r.rounds[0]!.node === undefined ? "" : ` on ${codeSpan(r.rounds[0]!.node)}`
    }: **no passing round followed** ${r.rounds.length} that did not pass (see Health rounds)`
  );
  const recovered = runs.length - stuck.length;
  const items = [
    ...gapList(m.gaps, lim),
    ...(m.reasons.length ? reasonList(m.reasons, lim) : []),
    ...cap(nodes, lim, "nodes"),
    ...cap(open, lim, "unaccounted attempts"),
    ...stuck,
    ...(recovered
      ? [
        `- ${recovered} run${recovered === 1 ? "" : "s"} of health rounds did not pass and ` +
        "then passed on a later round (explained under Health rounds)",
      ]
      : []),
  ];
  return [
    "## Needs attention",
    "",
    ...(items.length
      ? items
      : ["_Nothing: every applicable row passed, every operation completed, nothing refused._"]),
  ];
}

/** At most `tableRows` items, and a line saying how many more. */
function cap(items: readonly string[], lim: RenderLimits, what: string): string[] {
  if (items.length <= lim.tableRows) return [...items];
  return [
    ...items.slice(0, lim.tableRows),
    `- _${items.length - lim.tableRows} more ${what}; all are in the journal._`,
  ];
}

function isNotableAttempt(a: AttemptAccount): boolean {
  return a.accountedBy === null || a.responseClass !== "accepted";
}

function attemptSection(
  attempts: readonly AttemptAccount[],
  day: number,
  lim: RenderLimits,
): string[] {
  if (attempts.length === 0) return ["## Attempts", "", "_No mutation was attempted._"];
  const byClass = countBy(attempts, (a) => a.responseClass ?? "none");
  const open = (c: string) =>
    attempts.filter((a) => (a.responseClass ?? "none") === c && a.accountedBy === null).length;
  const notable = attempts.filter(isNotableAttempt);
  // Attempts that need a reader stay in sight; the routine ones are folded, never dropped.
  const p = pick(attempts, lim.tableRows, isNotableAttempt);
  return [
    "## Attempts",
    "",
    "Every external mutation: its durable intent, when it was sent, its deadlines, how the " +
    "response was classified and what accounted for it. An attempt without accounting keeps " +
    "its operation unresolved.",
    "",
    ...tableHead(["Response class", "Attempts", "Unaccounted"]),
    ...byClass.map(([c, n]) => {
      const u = open(c);
      return tableRow([c === "none" ? "**none yet**" : c, String(n), u ? `**${u}**` : "0"]);
    }),
    ...(notable.length
      ? ["", ...attemptTable(pick(notable, lim.tableRows, () => true).shown, lim, NaN)]
      : []),
    "",
    "<details>",
    `<summary>All ${attempts.length} attempts (times UTC on ${
      iso(day).slice(0, 10)
    } unless dated)</summary>`,
    "",
    ...attemptTable(p.shown, lim, day),
    ...omittedLine(p, "attempts"),
    "",
    "</details>",
  ];
}

/** Attempts as a table; times on `day` are shown as clock times (NaN: always dated). */
function attemptTable(
  attempts: readonly AttemptAccount[],
  lim: RenderLimits,
  day: number,
): string[] {
  const t = (ms: number) => clock(ms, day);
  // The attempts needing attention keep absolute deadlines (when they can be resolved); the
  // folded list gives them as spans after the send, which is what row 12 bounds.
  const absolute = !Number.isFinite(day);
  return [
    ...tableHead([
      "Node",
      "Phase",
      "#",
      "Sent",
      absolute
        ? "Deadlines (transport / verification)"
        : "Deadlines after send (transport / verification)",
      "Response",
      "Accounted by",
    ]),
    ...attempts.map((a) => {
      const from = a.sentAt ?? a.intentAt;
      return tableRow([
        codeSpan(a.node),
        escapeText(a.phase),
        String(a.attempt),
        // The intent's time only when it differs from the send: a gap between them matters.
        a.sentAt === undefined
          ? `not sent (intent ${t(a.intentAt)})`
          : a.sentAt === a.intentAt
          ? t(a.sentAt)
          : `${t(a.sentAt)} (intent ${t(a.intentAt)})`,
        absolute
          ? `${t(a.transportDeadline)} / ${t(a.verificationDeadline)}`
          : `${duration(a.transportDeadline - from)} / ${duration(a.verificationDeadline - from)}`,
        `${a.responseClass ?? "**none**"}${a.detail ? `: ${text(a.detail, lim.textMax)}` : ""}`,
        a.accountedBy ?? "**unaccounted**",
      ]);
    }),
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
