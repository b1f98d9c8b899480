/**
 * A small well-formedness checker for the reports we render: fences balanced, every table row
 * has the header's column count, the Mermaid gantt block follows our grammar, `<details>` and
 * `<summary>` balanced, and no raw HTML beyond those tags outside code.
 */

const GANTT_LINE = [
  /^gantt$/,
  /^ {4}title [A-Za-z0-9 ()._-]+$/,
  /^ {4}dateFormat YYYY-MM-DD HH:mm:ss$/,
  /^ {4}axisFormat %H:%M$/,
  /^ {4}section [A-Za-z0-9 ._()/-]+$/,
  // task: label :[tags, ]id, start, duration
  /^ {4}[A-Za-z0-9 ._()/-]+ :((done|active|crit), )*t\d+, \d{4}-\d\d-\d\d \d\d:\d\d:\d\d, \d+s$/,
];
const ALLOWED_TAG = /^<\/?(details|summary)>/;

/** Splits a table row into cells; `\|` does not split (we never emit it, but be correct). */
export function cells(row: string): string[] {
  const inner = row.trim().replace(/^\|/, "").replace(/\|$/, "");
  return inner.split(/(?<!\\)\|/);
}

/** Problems found; empty when well formed. */
export function checkMarkdown(md: string): string[] {
  const problems: string[] = [];
  const lines = md.split("\n");
  let fence: string | undefined;
  let tableCols = 0;
  let depth = 0;
  let ganttSeen = 0;
  lines.forEach((line, i) => {
    const at = `line ${i + 1}`;
    if (fence !== undefined) {
      if (line === "```") fence = undefined;
      else if (fence === "mermaid" && !GANTT_LINE.some((re) => re.test(line))) {
        problems.push(`${at}: not valid gantt: ${line}`);
      }
      return;
    }
    const open = /^```(\w*)$/.exec(line);
    if (open) {
      fence = open[1] ?? "";
      if (fence === "mermaid") ganttSeen++;
      return;
    }
    if (line.startsWith("|")) {
      const n = cells(line).length;
      if (tableCols === 0) {
        tableCols = n;
        const delim = lines[i + 1] ?? "";
        if (!/^\|(---\|)+$/.test(delim) || cells(delim).length !== n) {
          problems.push(`${at}: table header without a matching delimiter row`);
        }
      } else if (n !== tableCols) {
        problems.push(`${at}: ${n} cells, header has ${tableCols}`);
      }
    } else {
      tableCols = 0;
    }
    for (const tag of line.match(/<[^>]*>?/g) ?? []) {
      if (!ALLOWED_TAG.test(tag)) problems.push(`${at}: raw HTML ${tag}`);
    }
    depth += (line.match(/<details>/g) ?? []).length - (line.match(/<\/details>/g) ?? []).length;
    if (depth < 0) problems.push(`${at}: </details> without <details>`);
    if (line.includes("<summary>") !== line.includes("</summary>")) {
      problems.push(`${at}: <summary> not closed on its line`);
    }
  });
  if (fence !== undefined) problems.push("unclosed code fence");
  if (depth !== 0) problems.push(`${depth} <details> left open`);
  if (ganttSeen > 1) problems.push("more than one mermaid block");
  return problems;
}
