/**
 * A fast reader for the plain block YAML that plans are written in (nested block mappings and
 * sequences, one `key: value` per line, plain or simply quoted scalars, one-line flow mappings of plain
 * scalars, whole-line comments).
 * The general `yaml` parser spends most of a cold `cairn plan check` on a 500-node plan building
 * its concrete syntax tree and document; this reader does one pass over the lines.
 *
 * It never decides anything the general parser would decide differently: it answers only for
 * text inside a deliberately small subset and returns `undefined` for everything else (flow
 * collections, anchors, tags, block scalars, multi-line scalars, escapes, tabs, CR, document
 * markers, duplicate keys, empty values, any number other than a short decimal integer, odd
 * indentation…), and the caller then runs the general parser, which also reports every error.
 * For text it accepts, the value equals the general parser's (YAML 1.2 core schema) `toJS()`;
 * test/domain/plan/yaml_fast_test.ts checks that on seeded random documents and scalars.
 */

/** Default size limit of YAML files: plans are small; a 500-node plan is well under 200 KiB. */
export const MAX_YAML_BYTES = 1024 * 1024;

/** Control characters refused in YAML files (PlanEncodingInvalid). */
// deno-lint-ignore no-control-regex
export const CONTROL_CHARACTER = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

/** One significant line: its indentation and its text after the indentation. */
interface Line {
  readonly indent: number;
  readonly text: string;
}

/** Thrown inside the reader when the text leaves the subset; never escapes this module. */
class OutsideSubset {}
const OUTSIDE = new OutsideSubset();

function outside(): never {
  throw OUTSIDE;
}

/** A plain key: no scalar of the core schema other than a string, never `__proto__`. */
const KEY = /^[A-Za-z_][A-Za-z0-9_-]*$/;
const NOT_STRING_KEYS = new Set([
  "true",
  "True",
  "TRUE",
  "false",
  "False",
  "FALSE",
  "null",
  "Null",
  "NULL",
  "__proto__",
]);
/** `key:` alone, or `key: value` (value without spaces, or simply quoted). */
const PAIR = /^([A-Za-z_][A-Za-z0-9_-]*):(?: +(\S.*))?$/;
const PLAIN = /^[A-Za-z0-9][A-Za-z0-9._/:@+=-]*$/;
const QUOTED = /^(?:"([A-Za-z0-9 ._/:@+=,-]*)"|'([A-Za-z0-9 ._/:@+=,-]*)')$/;
/** The core schema's non-string plain scalars (the `yaml` package's resolvers' tests). */
const CORE_NULL = /^(?:~|[Nn]ull|NULL)?$/;
const CORE_TRUE = /^(?:[Tt]rue|TRUE)$/;
const CORE_FALSE = /^(?:[Ff]alse|FALSE)$/;
const CORE_NUMBER = [
  /^[-+]?[0-9]+$/,
  /^0o[0-7]+$/,
  /^0x[0-9a-fA-F]+$/,
  /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/,
  /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/,
  /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/,
];
/** Decimal integers read exactly by `Number` (no precision question to answer). */
const SHORT_DECIMAL = /^[0-9]{1,15}$/;

/**
 * A plain scalar of several words after `key: ` (block context, one line): a description, a
 * CEL expression. It starts with a letter, a digit or `(`, so no indicator opens it; it holds
 * no `#` (a comment), no tab or control character, no `:` before a space or at its end (a
 * mapping), no trailing space. With a space inside, no core-schema tag but string resolves it.
 */
const WORDS = /^[A-Za-z0-9(][A-Za-z0-9 ._/:@+=,;'"()[\]{}&|!<>*%?-]*$/;

/** A plain scalar inside a flow collection: no flow indicator, no `:`, no space. */
const FLOW_PLAIN = /^[A-Za-z0-9][A-Za-z0-9._/@+=-]*$/;
/** A key inside a flow mapping (label keys: `app.kubernetes.io/name`). */
const FLOW_KEY = /^[A-Za-z_][A-Za-z0-9_./-]*$/;

/**
 * One-line flow collections: `[a, b]`, `{ k: v, k: {k: v} }`, nested, of plain or simply quoted
 * scalars; at most one space inside each bracket, items separated by `,` and at most one space;
 * never empty. Anything else is OUTSIDE.
 */
class FlowReader {
  at = 0;
  constructor(private readonly text: string) {}

  /** The whole text as one flow collection, or OUTSIDE. */
  all(): unknown {
    const value = this.node();
    if (this.at !== this.text.length) outside();
    return value;
  }

  private node(): unknown {
    const c = this.text[this.at];
    if (c === "[") return this.collection("]", () => this.node());
    if (c === "{") {
      const out: Record<string, unknown> = {};
      this.collection("}", () => {
        const name = this.token(":");
        if (this.text[this.at] !== ":" || !FLOW_KEY.test(name) || NOT_STRING_KEYS.has(name)) {
          outside();
        }
        if (Object.hasOwn(out, name)) outside(); // the general parser reports the duplicate
        this.at++; // the colon
        if (this.text[this.at] !== " ") outside();
        this.at++;
        out[name] = this.node();
      });
      return out;
    }
    const raw = this.token(",]}");
    const quoted = QUOTED.exec(raw);
    if (quoted) return quoted[1] ?? quoted[2]!;
    if (!FLOW_PLAIN.test(raw)) outside();
    return scalar(raw);
  }

  /** `open item, item close` (the items read by `item`); returns the items read. */
  private collection(close: string, item: () => unknown): unknown[] {
    const items: unknown[] = [];
    this.at++; // the opening bracket
    this.space();
    for (;;) {
      items.push(item());
      this.space();
      const c = this.text[this.at];
      if (c === close) break;
      if (c !== ",") outside();
      this.at++;
      this.space();
    }
    this.at++;
    return items;
  }

  /** At most one space. */
  private space(): void {
    if (this.text[this.at] === " ") this.at++;
  }

  /** A quoted scalar whole, or the text up to a space or one of `stops`. */
  private token(stops: string): string {
    const start = this.at;
    const q = this.text[start];
    if (q === '"' || q === "'") {
      const endQuote = this.text.indexOf(q, start + 1);
      if (endQuote === -1) outside();
      this.at = endQuote + 1;
    } else {
      while (this.at < this.text.length) {
        const c = this.text[this.at]!;
        if (c === " " || stops.includes(c)) break;
        this.at++;
      }
    }
    return this.text.slice(start, this.at);
  }
}

/** The value after `key: `: a scalar, a one-line flow collection, or several plain words. */
function value(raw: string): unknown {
  const c = raw[0];
  if (c === "[" || c === "{") return new FlowReader(raw).all();
  return raw.includes(" ") && c !== '"' && c !== "'" ? words(raw) : scalar(raw);
}

/** Several plain words (see {@link WORDS}), a string; OUTSIDE otherwise. */
function words(raw: string): string {
  if (!WORDS.test(raw) || raw.endsWith(" ") || /:( |$)/.test(raw)) outside();
  return raw;
}

/** The value of one scalar as the core schema reads it; throws OUTSIDE beyond the subset. */
function scalar(raw: string): string | number | boolean {
  const quoted = QUOTED.exec(raw);
  if (quoted) return quoted[1] ?? quoted[2]!;
  if (!PLAIN.test(raw) || raw.endsWith(":")) outside();
  // A plain scalar starts with a letter or a digit (PLAIN): only `t`, `f` and `n` (any case) can
  // open a boolean or null, only a digit a number; most values (names, versions, addresses) are
  // strings without trying every core-schema pattern.
  const first = raw.charCodeAt(0);
  if (first >= 48 && first <= 57) {
    if (CORE_NUMBER.some((re) => re.test(raw))) {
      return SHORT_DECIMAL.test(raw) ? Number(raw) : outside();
    }
    return raw;
  }
  if (!MAY_OPEN_BOOL_OR_NULL.has(raw[0]!)) return raw;
  if (CORE_TRUE.test(raw)) return true;
  if (CORE_FALSE.test(raw)) return false;
  if (CORE_NULL.test(raw)) outside();
  return raw;
}

/** The first letters of the core schema's booleans and nulls (`~` and empty never pass PLAIN). */
const MAY_OPEN_BOOL_OR_NULL = new Set(["t", "T", "f", "F", "n", "N"]);

function key(name: string): string {
  if (!KEY.test(name) || NOT_STRING_KEYS.has(name)) outside();
  return name;
}

/**
 * The significant lines; `- rest` is split into an item marker at the dash and `rest` as its
 * own line two columns further, so a sequence item's mapping reads like any other mapping.
 */
function significantLines(text: string): Line[] {
  if (text.includes("\t") || text.includes("\r")) outside();
  const lines: Line[] = [];
  for (const raw of text.split("\n")) {
    let indent = 0;
    while (raw.charCodeAt(indent) === 32) indent++;
    let rest = raw.slice(indent);
    if (rest === "" || rest.startsWith("#")) continue;
    while (rest.startsWith("- ")) {
      lines.push({ indent, text: "-" });
      rest = rest.slice(2);
      indent += 2;
      if (rest.startsWith(" ") || rest.startsWith("#")) outside();
    }
    if (rest === "-" || rest.startsWith("---") || rest.startsWith("...")) outside();
    lines.push({ indent, text: rest });
  }
  return lines;
}

class Reader {
  private at = 0;
  constructor(private readonly lines: readonly Line[]) {}

  /** Reads everything: one block mapping at column 0. */
  document(): Record<string, unknown> {
    const first = this.lines[0];
    if (!first || first.indent !== 0 || first.text === "-") outside();
    const value = this.mapping(0);
    if (this.at !== this.lines.length) outside();
    return value;
  }

  /** The node whose first line is the current one, at its indentation. */
  private node(indent: number): unknown {
    return this.lines[this.at]!.text === "-" ? this.sequence(indent) : this.mapping(indent);
  }

  private mapping(indent: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    while (this.at < this.lines.length) {
      const line = this.lines[this.at]!;
      if (line.indent < indent) break;
      if (line.indent > indent || line.text === "-") outside();
      const pair = PAIR.exec(line.text) ?? outside();
      const name = key(pair[1]!);
      if (Object.hasOwn(out, name)) outside(); // the general parser reports the duplicate
      this.at++;
      out[name] = pair[2] === undefined ? this.nested(indent) : value(pair[2]);
    }
    return out;
  }

  /** The block under `key:`: deeper than the key (an empty value is left to the general parser). */
  private nested(parent: number): unknown {
    const next = this.lines[this.at];
    if (!next || next.indent <= parent) outside();
    return this.node(next.indent);
  }

  private sequence(indent: number): unknown[] {
    const out: unknown[] = [];
    while (this.at < this.lines.length) {
      const line = this.lines[this.at]!;
      if (line.indent < indent) break;
      if (line.indent > indent || line.text !== "-") outside();
      this.at++;
      const item = this.lines[this.at];
      if (!item || item.indent !== indent + 2) outside();
      if (item.text === "-" || PAIR.test(item.text)) out.push(this.node(indent + 2));
      else {
        out.push(scalar(item.text));
        this.at++; // a line continuing the scalar is deeper than the dash: refused below
      }
    }
    return out;
  }
}

/** One plain scalar's value as the core schema reads it, or `undefined` outside the subset. */
export function fastScalar(raw: string): string | number | boolean | undefined {
  try {
    return scalar(raw);
  } catch (e) {
    if (e === OUTSIDE) return undefined;
    throw e;
  }
}

/**
 * The value of `text` when it is inside the plain block subset, else `undefined` (then the
 * general parser must read it). Never throws.
 */
export function fastLoadPlainYaml(text: string): Record<string, unknown> | undefined {
  try {
    return new Reader(significantLines(text)).document();
  } catch (e) {
    if (e === OUTSIDE) return undefined;
    throw e;
  }
}

/**
 * The value of a YAML file's exact bytes when `loadYaml` (yaml_load.ts) would load them without a
 * problem and they are inside the plain block subset: at most `maxBytes`, strict UTF-8, no control
 * character. `undefined` otherwise: then `loadYaml` must read them and report what it finds. For
 * callers that need only the value and want to skip loading the general parser entirely.
 */
export function fastLoadPlainYamlBytes(
  bytes: Uint8Array,
  maxBytes = MAX_YAML_BYTES,
): Record<string, unknown> | undefined {
  if (bytes.length > maxBytes) return undefined;
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return undefined;
  }
  return CONTROL_CHARACTER.test(text) ? undefined : fastLoadPlainYaml(text);
}
