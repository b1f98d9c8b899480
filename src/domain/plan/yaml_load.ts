/**
 * Safe YAML loading for untrusted, reviewed files (plans, catalogue snapshots): size checked on
 * the bytes before parsing, strict UTF-8, one document only, duplicate keys refused, alias
 * expansion bounded, and every problem located as line:column.
 */
import type { Document, LineCounter, Node as YamlNode, YAMLError } from "yaml";
import { generalYaml } from "../yaml_general.ts";
import { isAliasBudgetError } from "../yaml_error_summary.ts";
import type { Problem } from "../errors.ts";
import type { Reason } from "../reasons.ts";
import { CONTROL_CHARACTER, fastLoadPlainYaml, MAX_YAML_BYTES } from "./yaml_fast.ts";

export { MAX_YAML_BYTES };
/** Default alias budget passed to the `yaml` package's expansion check. */
export const MAX_ALIAS_COUNT = 16;

/** A successfully loaded single YAML document. */
export interface LoadedYaml {
  readonly file: string;
  readonly text: string;
  readonly value: unknown;
  readonly doc: Document.Parsed;
  readonly lineCounter: LineCounter;
}

/** Result of {@link loadYaml}. */
export type LoadYamlResult =
  | { readonly ok: true; readonly loaded: LoadedYaml }
  | { readonly ok: false; readonly problems: readonly Problem[] };

/** Options of {@link loadYaml}. */
export interface LoadYamlOptions {
  readonly file: string;
  readonly maxBytes?: number;
  readonly maxAliasCount?: number;
}

/** A field path as zod and the `yaml` package spell it. */
export type FieldPath = readonly PropertyKey[];

/** Renders `["spec", "nodes", 2, "name"]` as `spec.nodes[2].name`. */
export function formatPath(path: FieldPath): string {
  let out = "";
  for (const p of path) {
    if (typeof p === "number") out += `[${p}]`;
    else out += out === "" ? String(p) : `.${String(p)}`;
  }
  return out;
}

function problem(
  reason: Reason,
  message: string,
  at: { file: string; line: number; column: number; path?: string },
): Problem {
  return { reason, message, location: at };
}

function decodeStrict(bytes: Uint8Array, file: string): string | Problem {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    const at = firstInvalidUtf8Line(bytes);
    return problem("PlanEncodingInvalid", "File is not valid UTF-8", { file, ...at });
  }
  const bad = CONTROL_CHARACTER.exec(text);
  if (bad) {
    const before = text.slice(0, bad.index).split("\n");
    return problem("PlanEncodingInvalid", "File contains a control character", {
      file,
      line: before.length,
      column: before[before.length - 1]!.length + 1,
    });
  }
  return text;
}

function firstInvalidUtf8Line(bytes: Uint8Array): { line: number; column: number } {
  const dec = new TextDecoder("utf-8", { fatal: true });
  let line = 1, column = 1;
  for (let i = 0; i < bytes.length; i++) {
    let chars: string;
    try {
      chars = dec.decode(bytes.subarray(i, i + 1), { stream: true });
    } catch {
      return { line, column };
    }
    for (const ch of chars) {
      if (ch === "\n") {
        line++;
        column = 1;
      } else column++;
    }
  }
  return { line, column };
}

/** Syntax problems listed per file; the rest are counted in one more line. */
const MAX_SYNTAX_PROBLEMS = 10;
/** A message quoting a long stretch of the file is cut: the location already points at it. */
const MAX_MESSAGE_CHARS = 160;

function yamlErrorProblem(e: YAMLError, file: string): Problem {
  const reason: Reason = e.code === "DUPLICATE_KEY" ? "DuplicateKey" : "PlanSyntaxInvalid";
  const pos = e.linePos?.[0] ?? { line: 1, col: 1 };
  const first = (e.message.split("\n")[0] ?? e.message).replace(/ at line \d+, column \d+:?$/, "");
  const message = first.length > MAX_MESSAGE_CHARS
    ? `${first.slice(0, MAX_MESSAGE_CHARS - 1)}…`
    : first;
  return problem(reason, message, {
    file,
    line: pos.line,
    column: pos.col,
  });
}

function firstAliasOffset(doc: Document.Parsed): number {
  const { visit } = generalYaml();
  let offset = 0;
  visit(doc, {
    Alias(_key, node) {
      offset = node.range?.[0] ?? 0;
      return visit.BREAK;
    },
  });
  return offset;
}

/**
 * Loads exactly one YAML document from `bytes`. Never throws for bad input: every problem is
 * returned with its reason and location.
 */
export function loadYaml(bytes: Uint8Array, options: LoadYamlOptions): LoadYamlResult {
  const file = options.file;
  const maxBytes = options.maxBytes ?? MAX_YAML_BYTES;
  if (bytes.length > maxBytes) {
    return {
      ok: false,
      problems: [
        problem("PlanTooLarge", `File is ${bytes.length} bytes; the limit is ${maxBytes}`, {
          file,
          line: 1,
          column: 1,
        }),
      ],
    };
  }
  const text = decodeStrict(bytes, file);
  if (typeof text !== "string") return { ok: false, problems: [text] };
  // Plans are plain block YAML: read in one pass, and build the general parser's document (for
  // locating problems) only when someone asks for it. Anything else goes the general way.
  const fast = fastLoadPlainYaml(text);
  if (fast !== undefined) return { ok: true, loaded: lazilyParsed(file, text, fast) };
  const { LineCounter, parseAllDocuments } = generalYaml();
  const lineCounter = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter, uniqueKeys: true, prettyErrors: true });
  const list = Array.isArray(docs) ? docs : [];
  const loc = (offset: number) => {
    const p = lineCounter.linePos(offset);
    return { file, line: p.line, column: p.col };
  };
  if (list.length > 1) {
    const second = list[1]!;
    return {
      ok: false,
      problems: [problem("MultipleDocuments", "File holds more than one YAML document", {
        ...loc(second.range[0]),
      })],
    };
  }
  const doc = list[0];
  if (!doc || doc.contents === null) {
    return {
      ok: false,
      problems: [problem("PlanSyntaxInvalid", "File holds no YAML document", loc(0))],
    };
  }
  const errors = [...doc.errors, ...doc.warnings];
  if (errors.length > 0) {
    const kept = withoutCascade(errors);
    const shown = kept.slice(0, MAX_SYNTAX_PROBLEMS).map((e) => yamlErrorProblem(e, file));
    const rest = kept.slice(MAX_SYNTAX_PROBLEMS);
    if (rest.length > 0) {
      // A file that is not YAML at all (a README given by mistake) would list every line.
      const at = rest[0]!.linePos?.[0] ?? { line: 1, col: 1 };
      shown.push(problem(
        "PlanSyntaxInvalid",
        `${rest.length} more YAML syntax errors not shown (is this file YAML?)`,
        { file, line: at.line, column: at.col },
      ));
    }
    return { ok: false, problems: shown };
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: options.maxAliasCount ?? MAX_ALIAS_COUNT });
  } catch (e) {
    if (isAliasBudgetError(e)) {
      return {
        ok: false,
        problems: [problem(
          "AliasBudgetExceeded",
          "YAML aliases expand beyond the allowed budget",
          loc(firstAliasOffset(doc)),
        )],
      };
    }
    return {
      ok: false,
      problems: [problem("PlanSyntaxInvalid", e instanceof Error ? e.message : String(e), loc(0))],
    };
  }
  return { ok: true, loaded: { file, text, value, doc, lineCounter } };
}

/**
 * A loaded document whose value came from the fast reader; `doc` and `lineCounter` come from the
 * general parser on first use (once), for text the general parser reads without error.
 */
function lazilyParsed(file: string, text: string, value: unknown): LoadedYaml {
  const full: { doc?: Document.Parsed; lineCounter?: LineCounter } = {};
  const parse = () => {
    if (full.doc === undefined) {
      const { LineCounter, parseAllDocuments } = generalYaml();
      const lineCounter = new LineCounter();
      const docs = parseAllDocuments(text, { lineCounter, uniqueKeys: true, prettyErrors: true });
      full.doc = (docs as Document.Parsed[])[0]!;
      full.lineCounter = lineCounter;
    }
    return full as { doc: Document.Parsed; lineCounter: LineCounter };
  };
  return {
    file,
    text,
    value,
    get doc() {
      return parse().doc;
    },
    get lineCounter() {
      return parse().lineCounter;
    },
  };
}

/**
 * The 1-based line:column of the node at `path`, or of its nearest existing ancestor when the
 * path does not exist (a missing field is reported where its parent is). With `key`, the
 * location of that key inside the mapping at `path` (unknown fields point at the key).
 */
export function locate(
  loaded: LoadedYaml,
  path: FieldPath,
  key?: string,
): { line: number; column: number } {
  const { isMap, isScalar } = generalYaml();
  const at = (offset: number) => {
    const p = loaded.lineCounter.linePos(offset);
    return { line: p.line, column: p.col };
  };
  for (let n = path.length; n >= 0; n--) {
    const node = n === 0
      ? loaded.doc.contents
      : loaded.doc.getIn(path.slice(0, n) as unknown[], true) as YamlNode | undefined;
    if (!node || typeof node !== "object" || !("range" in node) || !node.range) continue;
    if (key !== undefined && n === path.length && isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === key);
      const k = pair?.key;
      if (isScalar(k) && k.range) return at(k.range[0]);
    }
    return at(node.range[0]);
  }
  return { line: 1, column: 1 };
}

/**
 * A tab in indentation leaves the parser misreading every line after it, so one tab used to
 * yield ten errors about compact mappings and implicit keys. Errors after a tab error are its
 * echoes: only the tab is reported. Other errors are all kept (each is worth fixing).
 */
function withoutCascade<E extends { code: string }>(errors: readonly E[]): E[] {
  const tab = errors.findIndex((e) => e.code === "TAB_AS_INDENT");
  return tab === -1 ? [...errors] : errors.slice(0, tab + 1);
}
