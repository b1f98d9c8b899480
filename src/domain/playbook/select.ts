/**
 * Evaluates a playbook selector against one file of the GitOps repository: the value and the
 * line:column it was read at, "absent" (with where its nearest parent is), or "unreadable" (the
 * file is not YAML, too large, an alias bomb, holds a duplicate key). The files come from a
 * branch anyone can push to, so they get the plan loader's guards: size checked first, alias
 * expansion bounded, duplicate keys refused; several documents are allowed (Flux files often
 * hold more than one). Pure.
 */
import {
  type Document,
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  type Node as YamlNode,
  parseAllDocuments,
} from "yaml";
import type { Selector } from "./schema.ts";
import { isAliasBudgetError } from "../yaml_error_summary.ts";
import { compileCapture, parseYamlPath, type PathStep } from "./yaml_path.ts";

/** Largest GitOps file read (HelmRelease values files are a few KiB). */
export const MAX_GITOPS_FILE_BYTES = 1024 * 1024;
const MAX_ALIAS_COUNT = 64;
const MAX_DOCUMENTS = 64;

/** Where in a file a value was judged (1-based). */
export interface At {
  readonly line: number;
  readonly column: number;
}

/** What a selector found. */
export type Selected =
  | {
    readonly kind: "found";
    readonly value: unknown;
    /** The scalar as text (after the capture, when one is given); undefined for a mapping or list. */
    readonly text: string | undefined;
    readonly at: At;
  }
  | { readonly kind: "absent"; readonly why: string; readonly at: At }
  | { readonly kind: "unreadable"; readonly why: string; readonly at: At };

/** A parsed GitOps YAML file: its documents (as values and as nodes for locating). */
export interface GitOpsYaml {
  readonly docs: readonly { readonly value: unknown; readonly doc: Document.Parsed }[];
  readonly lineCounter: LineCounter;
}

/** Parses a GitOps YAML file under the guards; a string is the reason it cannot be read. */
export function parseGitOpsYaml(
  text: string,
): GitOpsYaml | { readonly why: string; readonly at: At } {
  if (text.length > MAX_GITOPS_FILE_BYTES) {
    return { why: `file exceeds ${MAX_GITOPS_FILE_BYTES} bytes`, at: { line: 1, column: 1 } };
  }
  const lineCounter = new LineCounter();
  const all = parseAllDocuments(text, { lineCounter, uniqueKeys: true });
  const list = Array.isArray(all) ? all : [];
  if (list.length > MAX_DOCUMENTS) {
    return { why: `file holds more than ${MAX_DOCUMENTS} documents`, at: { line: 1, column: 1 } };
  }
  const docs: { value: unknown; doc: Document.Parsed }[] = [];
  for (const doc of list) {
    const err = doc.errors[0];
    if (err) {
      const p = err.linePos?.[0] ?? { line: 1, col: 1 };
      const first = (err.message.split("\n")[0] ?? err.message).replace(
        / at line \d+, column \d+:?$/,
        "",
      );
      return { why: `not valid YAML: ${first}`, at: { line: p.line, column: p.col } };
    }
    try {
      docs.push({ value: doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT }), doc });
    } catch (e) {
      const why = isAliasBudgetError(e)
        ? "YAML aliases expand beyond the allowed budget"
        : `not valid YAML: ${(e as Error).message}`;
      return { why, at: { line: 1, column: 1 } };
    }
  }
  return { docs, lineCounter };
}

/** Evaluates `sel` on `text` (parsed YAML passed in when the caller already has it). */
export function selectValue(text: string, sel: Selector, parsed?: GitOpsYaml): Selected {
  if ("pattern" in sel) return selectPattern(text, sel.pattern);
  const yaml = parsed ?? parseGitOpsYaml(text);
  if ("why" in yaml) return { kind: "unreadable", why: yaml.why, at: yaml.at };
  const steps = parseYamlPath(sel.yaml);
  if (typeof steps === "string") throw new RangeError(`selector path ${sel.yaml}: ${steps}`);
  const pos = (offset: number): At => {
    const p = yaml.lineCounter.linePos(offset);
    return { line: p.line, column: p.col };
  };
  const chosen = chooseDocument(yaml, sel.document);
  if (!chosen) {
    const what = sel.document
      ? `no document of kind ${sel.document.kind}${
        sel.document.name ? ` named ${sel.document.name}` : ""
      }`
      : "the file holds no document";
    return { kind: "absent", why: what, at: { line: 1, column: 1 } };
  }
  let value: unknown = chosen.value;
  let node: unknown = chosen.doc.contents;
  let at = pos(rangeStart(node) ?? 0);
  for (const step of steps) {
    const next = stepInto(value, node, step);
    if (!next) {
      return { kind: "absent", why: `${sel.yaml} is not set`, at };
    }
    value = next.value;
    node = next.node;
    const start = rangeStart(node);
    if (start !== undefined) at = pos(start);
  }
  if (value === null || value === undefined) {
    return { kind: "absent", why: `${sel.yaml} is empty`, at };
  }
  const scalar = isScalarValue(value) ? String(value) : undefined;
  if (sel.capture === undefined) return { kind: "found", value, text: scalar, at };
  if (scalar === undefined) return { kind: "absent", why: `${sel.yaml} is not a scalar`, at };
  const re = compileCapture(sel.capture);
  if (typeof re === "string") throw new RangeError(`capture ${sel.capture}: ${re}`);
  const m = re.exec(scalar);
  if (!m || m[1] === undefined) {
    return { kind: "absent", why: `${sel.yaml} does not match ${sel.capture}`, at };
  }
  return { kind: "found", value: m[1], text: m[1], at };
}

function chooseDocument(
  yaml: GitOpsYaml,
  want: { readonly kind: string; readonly name?: string | undefined } | undefined,
): GitOpsYaml["docs"][number] | undefined {
  const nonEmpty = yaml.docs.filter((d) => d.value !== null && d.value !== undefined);
  if (!want) return nonEmpty[0];
  return nonEmpty.find((d) => {
    const v = d.value as Record<string, unknown>;
    if (typeof v !== "object" || v.kind !== want.kind) return false;
    if (want.name === undefined) return true;
    const meta = v.metadata as Record<string, unknown> | undefined;
    return typeof meta === "object" && meta !== null && meta.name === want.name;
  });
}

function stepInto(
  value: unknown,
  node: unknown,
  step: PathStep,
): { value: unknown; node: unknown } | undefined {
  if (typeof step === "string") {
    if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
    if (!Object.hasOwn(value, step)) return undefined;
    const child = isMap(node)
      ? node.items.find((p) => isScalar(p.key) && String(p.key.value) === step)?.value
      : undefined;
    return { value: (value as Record<string, unknown>)[step], node: child };
  }
  if (!Array.isArray(value)) return undefined;
  const items = isSeq(node) ? node.items : [];
  if (typeof step === "number") {
    if (step >= value.length) return undefined;
    return { value: value[step], node: items[step] };
  }
  const i = value.findIndex((item) => {
    let v: unknown = item;
    for (const k of step.field) {
      if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
      v = (v as Record<string, unknown>)[k];
    }
    return isScalarValue(v) && String(v) === step.value;
  });
  if (i === -1) return undefined;
  return { value: value[i], node: items[i] };
}

function rangeStart(node: unknown): number | undefined {
  const r = (node as YamlNode | undefined)?.range;
  return r ? r[0] : undefined;
}

function isScalarValue(v: unknown): v is string | number | boolean | bigint {
  return typeof v === "string" || typeof v === "number" || typeof v === "boolean" ||
    typeof v === "bigint";
}

function selectPattern(text: string, pattern: string): Selected {
  if (text.length > MAX_GITOPS_FILE_BYTES) {
    return {
      kind: "unreadable",
      why: `file exceeds ${MAX_GITOPS_FILE_BYTES} bytes`,
      at: { line: 1, column: 1 },
    };
  }
  const re = compileCapture(pattern);
  if (typeof re === "string") throw new RangeError(`pattern ${pattern}: ${re}`);
  const withIndices = new RegExp(re.source, "md");
  const m = withIndices.exec(text);
  if (!m || m[1] === undefined) {
    return { kind: "absent", why: "no line matches the pin's pattern", at: { line: 1, column: 1 } };
  }
  const start = m.indices?.[1]?.[0] ?? m.index;
  const before = text.slice(0, start).split("\n");
  return {
    kind: "found",
    value: m[1],
    text: m[1],
    at: { line: before.length, column: before[before.length - 1]!.length + 1 },
  };
}

/**
 * True when `actual` holds `expected`: scalars equal as text; every key of an expected mapping
 * held (recursively); every item of an expected list matched by some actual item.
 */
export function holds(actual: unknown, expected: unknown): boolean {
  if (isScalarValue(expected)) return isScalarValue(actual) && String(actual) === String(expected);
  if (Array.isArray(expected)) {
    return Array.isArray(actual) && expected.every((e) => actual.some((a) => holds(a, e)));
  }
  if (typeof expected === "object" && expected !== null) {
    if (typeof actual !== "object" || actual === null || Array.isArray(actual)) return false;
    return Object.entries(expected).every(([k, e]) =>
      Object.hasOwn(actual, k) && holds((actual as Record<string, unknown>)[k], e)
    );
  }
  return false;
}
