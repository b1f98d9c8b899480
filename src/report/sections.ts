/** Report sections both renderers share. Each returns lines; strings from outside are escaped. */
import { codeSpan, escapeText, tableHead, tableRow } from "./escape.ts";
import { countBy, iso, omittedLine, pick, text } from "./format.ts";
import type {
  AssertionResult,
  JournalHead,
  PlanIdentity,
  RenderLimits,
  SafeguardResult,
  SafeguardVerdict,
  SourceCheck,
} from "./model.ts";
import type { ReasonNote } from "../domain/reasons.ts";
import type { RowGap, RowGaps } from "../domain/safeguards/verdict.ts";
import {
  provenanceSummary,
  provenanceText,
  type SourceProvenance,
} from "../domain/evidence/provenance.ts";

const UNRECORDED: SourceProvenance = { kind: "unrecorded" };
import { type Component, ROLLBACK_CAVEATS } from "./rollback_caveats.ts";
import { SAFEGUARDS } from "../domain/safeguards/table.ts";

const VERDICT_WORD: Readonly<Record<SafeguardVerdict | "missing", string>> = {
  pass: "pass",
  fail: "**FAIL**",
  unreadable: "**unreadable**",
  "not-evaluated": "**not evaluated**",
  "not-applicable": "not applicable",
  missing: "**not evaluated**",
};

const COUNT_WORD: Readonly<Record<SafeguardVerdict, string>> = {
  pass: "pass",
  fail: "fail",
  unreadable: "unreadable",
  "not-evaluated": "not evaluated",
  "not-applicable": "not applicable",
};

/** `rows 10, 17 and 18` (or `row 10`). */
function rowNumbers(gaps: readonly RowGap[]): string {
  const n = gaps.map((g) => String(g.number));
  const list = n.length > 1 ? `${n.slice(0, -1).join(", ")} and ${n.at(-1)}` : (n[0] ?? "");
  return `${n.length > 1 ? "rows" : "row"} ${list}`;
}

/** What stands between the rows and a clean verdict: `rows 6 failed; rows 10 and 17 not evaluated`. */
export function gapSentence(g: RowGaps): string {
  return [
    ...(g.failed.length ? [`${rowNumbers(g.failed)} failed`] : []),
    ...byWord(g.unevaluated, "unreadable", "unreadable"),
    ...byWord(g.unevaluated, "not-evaluated", "not evaluated"),
  ].join("; ");
}

function byWord(gaps: readonly RowGap[], verdict: RowGap["verdict"], word: string): string[] {
  const mine = gaps.filter((x) => x.verdict === verdict);
  return mine.length ? [`${rowNumbers(mine)} ${word}`] : [];
}

/** The gap rows, one line each with the evidence that keeps them from passing. */
export function gapList(g: RowGaps, lim: RenderLimits): string[] {
  return [...g.failed, ...g.unevaluated].sort((a, b) => a.number - b.number).map((x) =>
    `- Row ${x.number} ${codeSpan(x.id)} ${verdictWord(x.verdict)}: ${
      text(x.evidence, lim.textMax)
    }`
  );
}

/** Verdict word for tables; failures and gaps stand out. */
export function verdictWord(v: SafeguardVerdict | "missing"): string {
  return VERDICT_WORD[v];
}

/** The reasons behind a verdict, as a list. */
export function reasonList(reasons: readonly ReasonNote[], lim: RenderLimits): string[] {
  const p = pick(reasons, lim.tableRows, () => true);
  return [
    ...p.shown.map((r) => {
      const where = r.where ? ` (${text(r.where, lim.textMax)})` : "";
      return `- ${codeSpan(r.reason)}: ${text(r.message, lim.textMax)}${where}`;
    }),
    ...omittedLine(p, "reasons"),
  ];
}

/** Plan identity: name, kind, digest, signers, approvals, commit. */
export function identitySection(plan: PlanIdentity): string[] {
  const signers = plan.signers.map((s) => {
    const why = s.reason ? ` (${codeSpan(s.reason)})` : "";
    return tableRow([
      text(s.principal, 120),
      s.role,
      codeSpan(s.keyFingerprint),
      s.verdict === "valid" ? "valid" : `**invalid**${why}`,
    ]);
  });
  const approvals = `${plan.approvals.valid} valid of ${plan.approvals.required} required`;
  return [
    "## Plan",
    "",
    ...tableHead(["Field", "Value"]),
    tableRow(["Name", codeSpan(plan.name)]),
    tableRow(["Kind", codeSpan(plan.kind)]),
    tableRow(["Cluster", codeSpan(plan.cluster)]),
    tableRow(["Digest (SHA-256 of the file)", codeSpan(plan.digest)]),
    tableRow(["Author", text(plan.author, 120)]),
    tableRow(["Commit", `${codeSpan(plan.commit)} on ${codeSpan(plan.branch)}`]),
    tableRow(["Approvals", approvals]),
    tableRow(["Expires", plan.expiresAt === undefined ? "never" : iso(plan.expiresAt)]),
    "",
    "### Signatures",
    "",
    ...(signers.length === 0
      ? ["_No signature file beside the plan._"]
      : [...tableHead(["Principal", "Role", "Key", "Verdict"]), ...signers]),
  ];
}

/** The safeguard table: every row of the safety model, in order. */
export function safeguardSection(
  results: readonly SafeguardResult[],
  lim: RenderLimits,
  stage: "preview" | "execution" = "execution",
): string[] {
  const byId = new Map(results.map((r) => [r.id, r]));
  // A preview does not judge rows placed only at execution or observation: they are shown as
  // such, apart from the rows a preview should have evaluated and did not.
  const deferred = (s: (typeof SAFEGUARDS)[number]) =>
    stage === "preview" && !(s.placement as readonly string[]).includes("P") &&
    (byId.get(s.id)?.verdict ?? "not-evaluated") === "not-evaluated";
  const counts = countBy(
    SAFEGUARDS,
    (s) => deferred(s) ? "deferred" : byId.get(s.id)?.verdict ?? "not-evaluated",
  );
  const summary = counts.map(([v, n]) =>
    `${n} ${v === "deferred" ? "judged at execution" : COUNT_WORD[v as SafeguardVerdict]}`
  ).join(", ");
  const rows = SAFEGUARDS.map((s, i) => {
    const r = byId.get(s.id);
    const evidence = r
      ? `${r.reason ? `${codeSpan(r.reason)}: ` : ""}${text(r.evidence, lim.textMax)}`
      : "no result recorded";
    return tableRow([
      String(i + 1),
      escapeText(s.name),
      s.placement.join("/"),
      deferred(s) ? "at execution" : verdictWord(r?.verdict ?? "missing"),
      evidence,
    ]);
  });
  return [
    "## Safeguards",
    "",
    `${SAFEGUARDS.length} safeguards (P plan validation, E execution, O observation): ${summary}.`,
    "",
    ...tableHead(["#", "Safeguard", "Placement", "Verdict", "Evidence"]),
    ...rows,
  ];
}

/** Pinned-source hash checks and call-path assertions. */
export function sourceSection(
  checks: readonly SourceCheck[],
  assertions: readonly AssertionResult[],
  lim: RenderLimits,
): string[] {
  if (checks.length === 0 && assertions.length === 0) {
    return ["## Source-hash checks", "", "_No pinned sources are bound to this plan._"];
  }
  const pc = pick(checks, lim.tableRows, (c) => c.verdict !== "pass");
  const pa = pick(assertions, lim.tableRows, (a) => a.verdict !== "pass");
  const failing = checks.filter((c) => c.verdict !== "pass").length;
  // A hash match proves the bytes, not where they came from: every row says that too.
  const read = checks.filter((c) => c.actualSha256 !== undefined);
  const origin = provenanceSummary(read.map((c) => (c.provenance ?? UNRECORDED).kind));
  // When every check and assertion passed, the tables are folded: the sentence above them says
  // so, and a reviewer opens them only to see the hashes.
  const allPass = failing === 0 && assertions.every((a) => a.verdict === "pass");
  const fold = (body: string[]): string[] =>
    allPass
      ? [
        "<details>",
        `<summary>${checks.length} source checks and ${assertions.length} assertions, all passing</summary>`,
        "",
        ...body,
        "",
        "</details>",
      ]
      : body;
  return [
    "## Source-hash checks",
    "",
    `${checks.length - failing} of ${checks.length} pinned sources match their recorded ` +
    `SHA-256${escapeText(origin)}.`,
    "",
    ...fold([
      ...tableHead([
        "Repository",
        "Revision",
        "Path",
        "Expected",
        "Actual",
        "Verdict",
        "Bytes from",
      ]),
      ...pc.shown.map((c) =>
        tableRow([
          text(c.repository, 120),
          codeSpan(c.revision),
          text(c.path, 200),
          codeSpan(c.expectedSha256),
          c.actualSha256 === undefined ? "unread" : codeSpan(c.actualSha256),
          `${verdictWord(c.verdict)}${c.reason ? ` ${codeSpan(c.reason)}` : ""}`,
          c.actualSha256 === undefined
            ? "nothing read"
            : text(provenanceText(c.provenance ?? UNRECORDED), 200),
        ])
      ),
      ...omittedLine(pc, "source checks"),
      ...(assertions.length === 0 ? [] : [
        "",
        ...tableHead(["Assertion", "Verdict", "Detail"]),
        ...pa.shown.map((a) =>
          tableRow([text(a.name, 160), verdictWord(a.verdict), text(a.detail, lim.textMax)])
        ),
        ...omittedLine(pa, "assertions"),
      ]),
    ]),
  ];
}

/** Rollback caveats for the components the plan touches. */
export function caveatSection(
  components: readonly Component[],
  extra: readonly string[],
  lim: RenderLimits,
): string[] {
  const unique = [...new Set(components)];
  if (unique.length === 0 && extra.length === 0) return [];
  return [
    "## Rollback caveats",
    "",
    "Abort is not undo: any rollback is a separate, approved plan. Where going back is harder:",
    "",
    ...unique.map((c) => `- **${c}**: ${ROLLBACK_CAVEATS[c]}`),
    ...extra.map((e) => `- ${text(e, lim.textMax)}`),
  ];
}

/** The journal head, so anyone can check this report against the journal. */
export function journalSection(journal: JournalHead | undefined): string[] {
  if (!journal) return ["## Journal", "", "_Nothing was journaled for this report._"];
  return [
    "## Journal",
    "",
    `Journal head: ${codeSpan(journal.headHash)} after ${journal.eventCount} events. ` +
    "Each event's hash covers the previous one; recomputing the chain from the journal must end " +
    "at this hash, or the journal was rewritten after this report.",
  ];
}
