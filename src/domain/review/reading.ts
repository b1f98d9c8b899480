/**
 * Reading one selector on one side of a change, and how a reading is shown in findings and in
 * the judged-values table (file:line:column, a short value or why there is none).
 */
import { stringify } from "yaml";
import type { Selector } from "../playbook/schema.ts";
import { type Selected, selectValue } from "../playbook/select.ts";
import type { Side, Where } from "./model.ts";

/** A file as one commit has it. */
export type FileContent =
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "missing" }
  | { readonly kind: "unreadable"; readonly why: string };

/** Reads a repository-relative path on one side. */
export type FileSnapshot = (path: string) => FileContent;

/** A value as one short line: scalars as they are, mappings and lists in YAML flow style. */
export function shorten(v: unknown): string {
  const text = typeof v === "string"
    ? v
    : typeof v === "object" && v !== null
    ? stringify(v, { collectionStyle: "flow", lineWidth: 0 }).trim()
    : String(v);
  return text.length > 240 ? `${text.slice(0, 239)}\u2026` : text;
}

export interface Reading {
  readonly side: Side;
  readonly file: string;
  readonly sel: Selected;
}

export function read(snapshot: FileSnapshot, side: Side, file: string, select: Selector): Reading {
  const content = snapshot(file);
  if (content.kind === "missing") {
    return {
      side,
      file,
      sel: { kind: "absent", why: "the file does not exist", at: { line: 1, column: 1 } },
    };
  }
  if (content.kind === "unreadable") {
    return {
      side,
      file,
      sel: { kind: "unreadable", why: content.why, at: { line: 1, column: 1 } },
    };
  }
  return { side, file, sel: selectValue(content.text, select) };
}

export function whereOf(r: Reading): Where {
  return { file: r.file, side: r.side, line: r.sel.at.line, column: r.sel.at.column };
}

export function shown(r: Reading): string {
  return r.sel.kind === "found" ? shorten(r.sel.text ?? r.sel.value) : `(${r.sel.why})`;
}

export function selectorText(s: Selector): string {
  if ("pattern" in s) return "the pinned version";
  return s.document
    ? `${s.yaml} (in the ${s.document.kind}${s.document.name ? ` ${s.document.name}` : ""})`
    : s.yaml;
}
