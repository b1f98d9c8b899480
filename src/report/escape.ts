/**
 * Escaping for every string that reaches a report from the cluster, the plan or git. Reports
 * are read on a forge that renders markdown and some HTML, so an object named
 * `<img src=x onerror=…>`, `| evil |`, "```" or `[click](javascript:…)` must render as inert
 * text. Our own fixed strings are written directly; anything else goes through here.
 */

/** Characters that have no business in a one-line report field. */
// deno-lint-ignore no-control-regex
const INVISIBLE = new RegExp(
  // C0/C1 controls, bidi overrides and isolates, zero-width characters, BOM.
  "[\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u2069\\ufeff]",
  "g",
);

const ENTITIES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "|": "&#124;",
  "`": "&#96;",
  "@": "&#64;",
  "#": "&#35;",
  "$": "&#36;",
};

/** Markdown punctuation that can open emphasis, links, images, strike-through or escapes. */
const BACKSLASHED = new Set(["\\", "*", "_", "[", "]", "!", "~", "{", "}"]);

/**
 * Escapes text for inline use in a paragraph, list item, heading, summary or table cell: one
 * line, no markdown structure, no HTML, no autolink, no mention.
 */
export function escapeText(raw: string): string {
  const oneLine = raw.replace(/\r\n|\r|\n/g, "\u21b5").replace(/\t/g, " ").replace(
    INVISIBLE,
    "\ufffd",
  );
  let out = "";
  for (const ch of oneLine) {
    const entity = ENTITIES[ch];
    if (entity) out += entity;
    else if (BACKSLASHED.has(ch)) out += `\\${ch}`;
    else out += ch;
  }
  // Break bare-URL autolinks (`scheme://`, `www.`) without changing what a reader sees.
  return out.replace(/:(?=\/\/)/g, "&#58;").replace(/\b(www)\./gi, "$1&#46;");
}

/** Shortens to `max` characters (by code point) with an ellipsis; applied before escaping. */
export function truncate(raw: string, max: number): string {
  const chars = [...raw];
  return chars.length <= max ? raw : `${chars.slice(0, Math.max(0, max - 1)).join("")}\u2026`;
}

/** An identifier as inline code when it is plainly safe, else as escaped text. */
export function codeSpan(raw: string): string {
  return /^[A-Za-z0-9._:+=,/-]{1,200}$/.test(raw) ? `\`${raw}\`` : escapeText(raw);
}

const MERMAID_KEYWORDS =
  /^(title|section|dateformat|axisformat|tickinterval|excludes|includes|todaymarker|weekday|weekend|inclusiveenddates|topaxis|accTitle|accDescr|click|gantt|displaymode)\b/i;

/**
 * A label safe inside a Mermaid gantt chart (section title or task name): only letters,
 * digits, space and `._-()/`, never starting with a chart keyword, at most `max` characters.
 * `:` (ends a task name), `;` (statement separator), `#` and `%%` (comments), `,` and quotes
 * are all replaced.
 */
export function ganttLabel(raw: string, max = 60): string {
  let label = raw.replace(/[^A-Za-z0-9 ._()/-]/g, "_").replace(/\s+/g, " ").trim();
  label = truncate(label, max - 1).replace(/\u2026$/, "..");
  if (label.length === 0) return "_";
  return MERMAID_KEYWORDS.test(label) ? `_${label}` : label;
}

/** A table row from already-escaped cells. */
export function tableRow(cells: readonly string[]): string {
  return `| ${cells.map((c) => (c.length === 0 ? " " : c)).join(" | ")} |`;
}

/** A table header plus delimiter row from fixed column titles. */
export function tableHead(titles: readonly string[]): string[] {
  return [tableRow(titles), `|${titles.map(() => "---").join("|")}|`];
}
