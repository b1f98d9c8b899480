/**
 * The review report of a bump: the verdict and every finding first (with the file:line it rests
 * on and the playbook's required action), then per protected component what moved, every value
 * judged, what to read before merging, the breaking patterns and how each was dealt with, the
 * after-merge checks and the rollback caveats; changed files no playbook owns at the end. Every
 * string from the repository (file names, values, refs) and from the playbooks is escaped.
 */
import type {
  BranchReview,
  ComponentReview,
  JudgedValue,
  ReviewFinding,
  Where,
} from "../domain/review/model.ts";
import { codeSpan, escapeText, tableHead, tableRow, truncate } from "./escape.ts";

/** Caps that keep a report readable when a change is enormous. */
export interface ReviewRenderLimits {
  readonly judgedPerComponent: number;
  readonly unprotected: number;
}

export const REVIEW_LIMITS: ReviewRenderLimits = { judgedPerComponent: 400, unprotected: 200 };

/** Renders the review as markdown. */
export function renderReviewReport(r: BranchReview, limits = REVIEW_LIMITS): string {
  const res = r.result;
  const moved = res.components.filter((c) => c.moved);
  const blocking = res.findings.filter((f) => f.severity === "blocking").length;
  const verdict = res.verdict === "findings"
    ? `FINDINGS: ${count(res.findings.length, "finding")} in ${
      count(new Set(res.findings.map((f) => f.component)).size, "protected component")
    } (${blocking} blocking). Do not merge before each is resolved.`
    : res.verdict === "clean"
    ? `CLEAN: ${
      count(res.components.length, "protected component")
    } touched (${moved.length} moved); ` +
      "every moved pin set moved whole, every deviation is kept, no companion rides along, " +
      "no companion edit is missing. The after-merge checks below still apply."
    : "NO PROTECTED COMPONENT: the change touches no file a playbook owns.";
  const lines = [
    `# Review: ${escapeText(r.head.ref)} against ${escapeText(r.base.ref)}`,
    "",
    `**Verdict: ${verdict}**`,
    "",
    `Compared head ${codeSpan(r.head.commit)} with ${
      codeSpan(r.comparedWith)
    }, the merge base of ` +
    `base ${codeSpan(r.base.commit)} and head; ${count(res.changedFiles, "changed file")}. ` +
    `Companion versions from the bundled-versions snapshot ${escapeText(r.bundled.name)}` +
    `${r.bundled.date ? ` (${escapeText(r.bundled.date)})` : ""}.`,
    "",
  ];
  if (res.findings.length > 0) {
    lines.push("## Needs attention", "");
    for (const f of res.findings) lines.push(...findingLines(f));
    lines.push("");
  }
  for (const c of res.components) lines.push(...componentLines(c, limits), "");
  if (res.unprotected.length > 0) {
    const shown = res.unprotected.slice(0, limits.unprotected);
    lines.push(
      "## Other changed files",
      "",
      `<details><summary>${count(res.unprotected.length, "file")} no playbook owns</summary>`,
      "",
      ...shown.map((p) => `- ${codeSpan(p)}`),
      ...(res.unprotected.length > shown.length
        ? [`- … ${res.unprotected.length - shown.length} more not shown`]
        : []),
      "",
      "</details>",
      "",
    );
  }
  return lines.join("\n").replace(/\n{3,}/g, "\n\n").replace(/\n*$/, "\n");
}

function count(n: number, what: string): string {
  return `${n} ${what}${n === 1 ? "" : "s"}`;
}

function where(w: Where): string {
  return `${codeSpan(`${w.file}:${w.line}:${w.column}`)} (${w.side})`;
}

function findingLines(f: ReviewFinding): string[] {
  const out = [
    `- **${f.code}** (${escapeText(f.component)}, ${f.severity}): ${
      escapeText(truncate(f.message, 1200))
    }`,
    `  - at ${f.where.map(where).join(", ")}`,
  ];
  for (const a of f.actions) {
    out.push(`  - required action (${escapeText(a.pattern)}): ${escapeText(a.action)}`);
  }
  return out;
}

function componentLines(c: ComponentReview, limits: ReviewRenderLimits): string[] {
  const out = [
    `## ${escapeText(c.title)} (${codeSpan(c.name)}): ${
      c.moved ? "moved" : "files touched, no pin moved"
    }`,
    "",
    `Arrives as: ${escapeText(c.arrivesAs)}.`,
    "",
  ];
  if (c.moves.length > 0) {
    out.push(...tableHead(["pin set", "from", "to", "move", "pins moved"]));
    for (const m of c.moves) {
      out.push(tableRow([
        codeSpan(m.pinSet),
        codeSpan(m.from),
        codeSpan(m.to),
        m.kind,
        `${m.moved} of ${m.of}`,
      ]));
    }
    out.push("");
  }
  out.push(
    c.findings.length === 0 ? "No finding." : `${count(c.findings.length, "finding")} (above).`,
    "",
    `Changed files it owns: ${c.changedFiles.map(codeSpan).join(", ")}.`,
    "",
  );

  const judged = c.judged.slice(0, limits.judgedPerComponent);
  out.push(
    `<details><summary>${count(c.judged.length, "value")} judged</summary>`,
    "",
    ...tableHead(["subject", "where", "side", "value", "outcome"]),
    ...judged.map(judgedRow),
    ...(c.judged.length > judged.length
      ? ["", `… ${c.judged.length - judged.length} more not shown`]
      : []),
    "",
    "</details>",
    "",
    "### Read before merging",
    "",
    ...c.readBeforeMerge.map((l) =>
      `- ${escapeText(l.title)}${l.url ? ` (${escapeText(l.url)})` : ""}${
        l.note ? `: ${escapeText(l.note)}` : ""
      }`
    ),
    "",
  );
  if (c.patterns.length > 0) {
    const status = {
      detected: "**detected**",
      "not-seen": "checked, not seen in the diff",
      manual: "check by hand before merging",
      "after-merge": "after merge",
    } as const;
    out.push(
      "### Known breaking patterns",
      "",
      ...tableHead(["pattern", "status", "required action"]),
      ...c.patterns.map((p) =>
        tableRow([
          escapeText(p.pattern),
          `${status[p.status]}${p.check ? ` (${codeSpan(p.check)})` : ""}`,
          escapeText(p.action),
        ])
      ),
      "",
    );
  }
  out.push(
    "### After merge",
    "",
    ...c.afterMerge.map((a) =>
      `- ${codeSpan(a.id)} (${
        a.reader === "manual" ? "by hand: cairn cannot read it" : `reader ${codeSpan(a.reader)}`
      }): ${escapeText(a.summary)}`
    ),
    "",
    "### Rollback caveats",
    "",
    ...c.rollback.map((r) => `- ${escapeText(r.kind)}: ${escapeText(r.text)}`),
  );
  return out;
}

function judgedRow(j: JudgedValue): string {
  return tableRow([
    escapeText(j.subject),
    codeSpan(`${j.file}:${j.line}:${j.column}`),
    j.side,
    escapeText(truncate(j.value, 120)),
    escapeText(j.outcome),
  ]);
}
