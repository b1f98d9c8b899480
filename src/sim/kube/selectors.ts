/**
 * Label and field selectors as the API server evaluates them: the query-string syntax
 * (`a=b,c!=d,e in (x,y),!f`) and the object form used by PDBs and workloads.
 */
import type { KubeLabelSelector } from "../../ports/kube.ts";

type Requirement = (labels: Readonly<Record<string, string>>) => boolean;

/** Splits on commas that are not inside parentheses. */
function splitTerms(expr: string): string[] {
  const out: string[] = [];
  let depth = 0, cur = "";
  for (const ch of expr) {
    if (ch === "(") depth++;
    if (ch === ")") depth--;
    if (ch === "," && depth === 0) {
      out.push(cur.trim());
      cur = "";
    } else cur += ch;
  }
  if (cur.trim() !== "") out.push(cur.trim());
  return out.filter((t) => t !== "");
}

function parseTerm(term: string): Requirement {
  const set = /^([^\s!=]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(term);
  if (set) {
    const key = set[1]!, values = set[3]!.split(",").map((v) => v.trim());
    return set[2] === "in"
      ? (l) => l[key] !== undefined && values.includes(l[key]!)
      : (l) => l[key] === undefined || !values.includes(l[key]!);
  }
  const neq = /^([^\s!=]+)\s*!=\s*(.*)$/.exec(term);
  if (neq) return (l) => l[neq[1]!] !== neq[2]!.trim();
  const eq = /^([^\s!=]+)\s*==?\s*(.*)$/.exec(term);
  if (eq) return (l) => l[eq[1]!] === eq[2]!.trim();
  if (term.startsWith("!")) return (l) => l[term.slice(1).trim()] === undefined;
  if (/^[^\s!=()]+$/.test(term)) return (l) => l[term] !== undefined;
  throw new SelectorError(`unable to parse requirement: ${term}`);
}

export class SelectorError extends Error {}

/** Compiles a label selector string; empty matches everything. */
export function parseLabelSelector(expr: string | null | undefined): Requirement {
  const reqs = splitTerms(expr ?? "").map(parseTerm);
  return (labels) => reqs.every((r) => r(labels));
}

/** Evaluates an object-form selector. `undefined`/null matches nothing; `{}` matches all. */
export function matchesSelector(
  selector: KubeLabelSelector | null | undefined,
  labels: Readonly<Record<string, string>>,
): boolean {
  if (!selector) return false;
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) {
    if (labels[k] !== v) return false;
  }
  for (const e of selector.matchExpressions ?? []) {
    const has = labels[e.key] !== undefined;
    const inValues = has && (e.values ?? []).includes(labels[e.key]!);
    const ok = e.operator === "In"
      ? inValues
      : e.operator === "NotIn"
      ? !inValues
      : e.operator === "Exists"
      ? has
      : e.operator === "DoesNotExist"
      ? !has
      : false;
    if (!ok) return false;
  }
  return true;
}

/** Reads a dotted path such as `spec.nodeName` or `metadata.name` from an object. */
export function fieldValue(obj: unknown, path: string): string {
  let cur: unknown = obj;
  for (const part of path.split(".")) {
    if (cur === null || typeof cur !== "object") return "";
    cur = (cur as Record<string, unknown>)[part];
  }
  if (cur === undefined || cur === null) return "";
  return typeof cur === "string" ? cur : String(cur);
}

/** Compiles a field selector (`spec.nodeName=x,status.phase!=Failed`). */
export function parseFieldSelector(expr: string | null | undefined): (obj: unknown) => boolean {
  const terms = splitTerms(expr ?? "").map((term) => {
    const m = /^([^!=]+?)\s*(!=|==|=)\s*(.*)$/.exec(term);
    if (!m) throw new SelectorError(`invalid field selector: ${term}`);
    const [, path, op, value] = m;
    return (o: unknown) => (fieldValue(o, path!) === value) === (op !== "!=");
  });
  return (obj) => terms.every((t) => t(obj));
}
