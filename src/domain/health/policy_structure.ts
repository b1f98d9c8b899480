import type { Document } from "yaml";
import { generalYaml, lazyDocument } from "../yaml_general.ts";
import { CONTROL_CHARACTER, fastLoadPlainYaml } from "../plan/yaml_fast.ts";
import { isAliasBudgetError, yamlMessageBesideLocation } from "../yaml_error_summary.ts";
import type { z } from "zod";
import { sha256Hex } from "../plan/digest.ts";
import type { Problem, SourceLocation } from "../errors.ts";
import {
  type Binding,
  type HealthPolicyDoc,
  HealthPolicySchema,
  type KubeObjectSel,
} from "./policy_schema.ts";

/** A validated health policy. */
export interface HealthPolicy {
  readonly name: string;
  readonly cluster: string;
  readonly bindings: readonly Binding[];
  readonly doc: HealthPolicyDoc;
}

export type ParseHealthPolicyResult =
  | { readonly ok: true; readonly policy: HealthPolicy }
  | { readonly ok: false; readonly problems: readonly Problem[] };

const MAX_BYTES = 1024 * 1024;

/**
 * Parses and validates a health policy file's structure; CEL predicates are compiled only when a
 * compiler is passed (`parseHealthPolicy` does; `cairn plan check` does not, to stay fast — the
 * reconciler and preview always parse with the compiler before any round). Every problem carries a `file:line:column`, the
 * field path and a stable reason (`HealthPolicySyntaxInvalid` or `HealthPolicyInvalid`).
 */
export function parseHealthPolicyStructure(
  text: string,
  file: string,
  compile?: (expr: string) => unknown,
): ParseHealthPolicyResult {
  if (text.length > MAX_BYTES) {
    return fail([{ reason: "HealthPolicyInvalid", message: "policy file exceeds 1 MiB" }]);
  }
  // A policy in plain YAML (yaml_fast.ts: the value the general parser would give, no error) is
  // read without the general parser; its document is parsed only to locate a problem.
  const fast = CONTROL_CHARACTER.test(text) ? undefined : fastLoadPlainYaml(text);
  const parsedText = lazyDocument(text, { prettyErrors: true });
  const at = (offset: number, path?: string): SourceLocation => {
    const p = parsedText().lc.linePos(offset);
    return { file, line: p.line, column: p.col, ...(path ? { path } : {}) };
  };
  let raw: unknown = fast;
  if (fast === undefined) {
    const { doc } = parsedText();
    if (doc.errors.length > 0) {
      // Ten at most: a file that is not YAML at all would list every line.
      const shown = doc.errors.slice(0, 10).map((e) => ({
        reason: "HealthPolicySyntaxInvalid" as const,
        message: yamlMessageBesideLocation(e.message),
        location: at(e.pos[0]),
      }));
      const rest = doc.errors.slice(10);
      if (rest.length > 0) {
        shown.push({
          reason: "HealthPolicySyntaxInvalid",
          message: `${rest.length} more YAML syntax errors not shown (is this file YAML?)`,
          location: at(rest[0]!.pos[0]),
        });
      }
      return fail(shown);
    }
    try {
      raw = doc.toJS({ maxAliasCount: 100 });
    } catch (e) {
      // The alias budget throws (a "billion laughs" policy): a problem, never an exception.
      if (!isAliasBudgetError(e)) throw e;
      return fail([{
        reason: "AliasBudgetExceeded" as const,
        message: "YAML aliases expand beyond the allowed budget",
        location: at(0),
      }]);
    }
  }
  const parsed = HealthPolicySchema.safeParse(raw);
  const locate = (path: readonly PropertyKey[]): SourceLocation => {
    const node = nearestNode(parsedText().doc, path);
    return at(node?.range?.[0] ?? 0, formatPath(path));
  };
  if (!parsed.success) return fail(parsed.error.issues.map((i) => issueProblem(i, locate)));
  const problems = semanticProblems(parsed.data, locate, compile);
  if (problems.length > 0) return fail(problems);
  const d = parsed.data;
  return {
    ok: true,
    policy: {
      name: d.metadata.name,
      cluster: d.metadata.cluster,
      bindings: d.spec.bindings,
      doc: d,
    },
  };
}

/** The policy's identity: SHA-256 of the exact file bytes, lower-case hex. */
export function healthPolicyDigest(bytes: Uint8Array): Promise<string> {
  return sha256Hex(bytes);
}

/** A kube-object binding reduced to what the reader evaluates, whichever form it was written in. */
export function kubeObjectCheck(
  b: Extract<Binding, { reader: "kube-object" }>,
): { selection: KubeObjectSel; expr: string } {
  if (b.healthCheck) {
    const { expr, timeout: _t, description: _d, ...selection } = b.healthCheck;
    return { selection, expr };
  }
  return { selection: b.selection!, expr: b.predicate!.cel };
}

function semanticProblems(
  d: HealthPolicyDoc,
  locate: (p: readonly PropertyKey[]) => SourceLocation,
  compile: ((expr: string) => unknown) | undefined,
): Problem[] {
  const out: Problem[] = [];
  const seen = new Set<string>();
  d.spec.bindings.forEach((b, i) => {
    const here = ["spec", "bindings", i];
    if (seen.has(b.name)) out.push(bad(`duplicate binding name ${b.name}`, [...here, "name"]));
    seen.add(b.name);
    if (b.reader !== "kube-object") return;
    const tuppr = b.healthCheck !== undefined;
    const native = b.selection !== undefined || b.predicate !== undefined;
    if (tuppr === native || (!tuppr && (!b.selection || !b.predicate))) {
      out.push(bad("kube-object needs either healthCheck, or both selection and predicate", here));
      return;
    }
    const { selection, expr } = kubeObjectCheck(b);
    if (selection.name && selection.labelSelector) {
      out.push(bad("name and labelSelector are mutually exclusive", here));
    }
    try {
      compile?.(expr);
    } catch (e) {
      const where = tuppr ? [...here, "healthCheck", "expr"] : [...here, "predicate", "cel"];
      out.push(bad(`CEL expression does not parse: ${(e as Error).message}`, where));
    }
  });
  return out;

  function bad(message: string, path: readonly PropertyKey[]): Problem {
    return { reason: "HealthPolicyInvalid", message, location: locate(path) };
  }
}

function issueProblem(
  i: z.core.$ZodIssue,
  locate: (p: readonly PropertyKey[]) => SourceLocation,
): Problem {
  const keys = i.code === "unrecognized_keys" ? ` (${i.keys.join(", ")})` : "";
  return { reason: "HealthPolicyInvalid", message: i.message + keys, location: locate(i.path) };
}

/** The YAML node at `path`, or the deepest existing ancestor (for missing fields). */
function nearestNode(doc: Document.Parsed, path: readonly PropertyKey[]) {
  const { isMap, isSeq } = generalYaml();
  for (let n = path.length; n >= 0; n--) {
    const node = doc.getIn(path.slice(0, n) as unknown[], true) as
      | { range?: [number, number, number] }
      | undefined;
    if (node && (typeof node === "object") && (node.range || isMap(node) || isSeq(node))) {
      return node;
    }
  }
  return undefined;
}

function formatPath(path: readonly PropertyKey[]): string {
  return path.map((p, i) => typeof p === "number" ? `[${p}]` : (i === 0 ? "" : ".") + String(p))
    .join("");
}

function fail(problems: Problem[]): ParseHealthPolicyResult {
  return { ok: false, problems };
}
