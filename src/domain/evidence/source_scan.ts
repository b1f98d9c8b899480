/**
 * Lexical scanning of Go-like and JavaScript-like source text, just enough for call-path
 * assertions. This is deliberately a heuristic, not a parser:
 *
 * - Comments and string/rune/template literals are masked to spaces first (offsets are kept), so
 *   a call named only in a comment or a string never counts.
 * - A function body is found from the first `func F(` / `func (recv) F(` / `function F(` header:
 *   after the parameter list closes, the first `{` at parenthesis depth 0 opens the body, and
 *   braces are matched to its end.
 * - A call `A` is an occurrence of `A` with identifier boundaries on both sides followed by `(`;
 *   a dotted name (`c.pullImage`) matches literally.
 */

/** Text with comments and literal contents replaced by spaces; newlines and offsets kept. */
export function maskCommentsAndStrings(src: string): string {
  const out = src.split("");
  let i = 0;
  const blank = (from: number, to: number) => {
    for (let k = from; k < to && k < out.length; k++) if (out[k] !== "\n") out[k] = " ";
  };
  while (i < src.length) {
    const c = src[i];
    const next = src[i + 1];
    if (c === "/" && next === "/") {
      const end = src.indexOf("\n", i);
      const stop = end === -1 ? src.length : end;
      blank(i, stop);
      i = stop;
    } else if (c === "/" && next === "*") {
      const end = src.indexOf("*/", i + 2);
      const stop = end === -1 ? src.length : end + 2;
      blank(i, stop);
      i = stop;
    } else if (c === '"' || c === "'" || c === "`") {
      const stop = literalEnd(src, i);
      blank(i + 1, stop - 1);
      i = stop;
    } else {
      i++;
    }
  }
  return out.join("");
}

/** Index just past the literal opened at `start`; backquoted literals may span lines. */
function literalEnd(src: string, start: number): number {
  const q = src[start];
  for (let i = start + 1; i < src.length; i++) {
    const c = src[i];
    if (c === "\\" && q !== "`") i++;
    else if (c === q) return i + 1;
    else if (c === "\n" && q !== "`") return i;
  }
  return src.length;
}

/** The language family of a function header, which decides how `if` conditions end. */
export type Dialect = "go" | "js";

/** A located function body: `[open, close]` are the offsets of its braces. */
export interface FunctionBody {
  readonly dialect: Dialect;
  readonly open: number;
  readonly close: number;
}

/** Finds the body of function `name` in masked text, or undefined when absent or unbalanced. */
export function findFunctionBody(masked: string, name: string): FunctionBody | undefined {
  const header = new RegExp(
    `\\b(func)\\s*(?:\\([^)]*\\)\\s*)?${escape(name)}\\s*(?:\\[[^\\]]*\\]\\s*)?\\(|` +
      `\\b(function)\\s*\\*?\\s*${escape(name)}\\s*\\(`,
  );
  const m = header.exec(masked);
  if (!m) return undefined;
  const dialect: Dialect = m[1] ? "go" : "js";
  const paramsClose = matchClose(masked, m.index + m[0].length - 1, "(", ")");
  if (paramsClose === undefined) return undefined;
  let depth = 0;
  for (let i = paramsClose + 1; i < masked.length; i++) {
    const c = masked[i];
    if (c === "(" || c === "[") depth++;
    else if (c === ")" || c === "]") depth--;
    else if (c === "{" && depth === 0) {
      const close = matchClose(masked, i, "{", "}");
      return close === undefined ? undefined : { dialect, open: i, close };
    }
  }
  return undefined;
}

/** Offset of the bracket closing the one at `open`, or undefined when unbalanced. */
export function matchClose(
  text: string,
  open: number,
  o: string,
  c: string,
): number | undefined {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === o) depth++;
    else if (text[i] === c && --depth === 0) return i;
  }
  return undefined;
}

/** Offsets of every occurrence of `name` with identifier boundaries, within `[from, to)`. */
export function occurrences(text: string, name: string, from: number, to: number): number[] {
  const re = new RegExp(`(?<![\\w$])${escape(name)}(?![\\w$])`, "g");
  re.lastIndex = from;
  const found: number[] = [];
  for (let m = re.exec(text); m && m.index < to; m = re.exec(text)) found.push(m.index);
  return found;
}

/** Offset of the first call `name(` within `[from, to)`, or undefined. */
export function firstCall(
  text: string,
  name: string,
  from: number,
  to: number,
): number | undefined {
  for (const at of occurrences(text, name, from, to)) {
    if (/^\s*\(/.test(text.slice(at + name.length, at + name.length + 40))) return at;
  }
  return undefined;
}

/** A conditional region: the text of its condition and the span of the code it guards. */
export interface GuardedRegion {
  readonly condition: string;
  readonly from: number;
  readonly to: number;
}

/**
 * Every `if` region inside `[from, to)`. An `else`/`else if` branch is guarded by the same
 * condition as its `if`, so its span is folded into the region.
 */
export function ifRegions(masked: string, body: FunctionBody): GuardedRegion[] {
  const regions: GuardedRegion[] = [];
  const re = /(?<![\w$])if(?![\w$])/g;
  re.lastIndex = body.open + 1;
  for (let m = re.exec(masked); m && m.index < body.close; m = re.exec(masked)) {
    if (/else\s*$/.test(masked.slice(Math.max(0, m.index - 12), m.index))) continue;
    const region = ifRegionAt(masked, m.index + 2, body.dialect);
    if (region) regions.push(region);
  }
  return regions;
}

function ifRegionAt(masked: string, start: number, dialect: Dialect): GuardedRegion | undefined {
  const cond = conditionSpan(masked, start, dialect);
  if (!cond) return undefined;
  let end = branchEnd(masked, cond.bodyStart);
  if (end === undefined) return undefined;
  const condition = masked.slice(start, cond.condEnd);
  for (;;) {
    const rest = /^\s*else\b\s*/.exec(masked.slice(end + 1));
    if (!rest) break;
    let branch = end + 1 + rest[0].length;
    if (masked.startsWith("if", branch)) {
      const inner = conditionSpan(masked, branch + 2, dialect);
      if (!inner) break;
      branch = inner.bodyStart;
    }
    const next = branchEnd(masked, branch);
    if (next === undefined) break;
    end = next;
  }
  return { condition, from: start, to: end + 1 };
}

/** Go: the condition runs to the first `{` at depth 0. JS: it is the parenthesised group. */
function conditionSpan(
  masked: string,
  start: number,
  dialect: Dialect,
): { condEnd: number; bodyStart: number } | undefined {
  if (dialect === "js") {
    const open = masked.indexOf("(", start);
    if (open === -1) return undefined;
    const close = matchClose(masked, open, "(", ")");
    if (close === undefined) return undefined;
    const ws = /^\s*/.exec(masked.slice(close + 1))?.[0].length ?? 0;
    return { condEnd: close + 1, bodyStart: close + 1 + ws };
  }
  let depth = 0;
  for (let i = start; i < masked.length; i++) {
    const c = masked[i];
    if (c === "(" || c === "[") depth++;
    else if (c === ")" || c === "]") depth--;
    else if (c === "{" && depth === 0) return { condEnd: i, bodyStart: i };
  }
  return undefined;
}

/** End offset (inclusive) of a branch: a braced block, or a single statement up to `;`/newline. */
function branchEnd(masked: string, at: number): number | undefined {
  if (masked[at] === "{") return matchClose(masked, at, "{", "}");
  const semi = masked.slice(at).search(/[;\n]/);
  return semi === -1 ? masked.length - 1 : at + semi;
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
