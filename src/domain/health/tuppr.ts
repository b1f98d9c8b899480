import { LineCounter, parseDocument, stringify } from "yaml";
import { isAliasBudgetError, yamlMessageBesideLocation } from "../yaml_error_summary.ts";
import type { Problem } from "../errors.ts";
import { TupprHealthCheckSchema } from "./policy_schema.ts";

export type ImportTupprResult =
  | { readonly ok: true; readonly yaml: string; readonly count: number }
  | { readonly ok: false; readonly problems: readonly Problem[] };

/** `10m`, `1h30m`, `45s` → seconds. */
function durationSeconds(d: string): number {
  let total = 0;
  for (const m of d.matchAll(/(\d+)([smh])/g)) {
    total += Number(m[1]) * (m[2] === "h" ? 3600 : m[2] === "m" ? 60 : 1);
  }
  return total;
}

/**
 * Converts a tuppr TalosUpgrade's `spec.healthChecks` into a cairn HealthPolicy: one
 * `kube-object` binding per entry, the entry carried unchanged under `healthCheck` (its
 * `timeout` also becomes the binding's `timeoutSeconds`, capped at the policy maximum).
 */
export function importTuppr(text: string, file: string, cluster: string): ImportTupprResult {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, uniqueKeys: true });
  const at = (offset: number) => {
    const p = lc.linePos(offset);
    return { file, line: p.line, column: p.col };
  };
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    return {
      ok: false,
      problems: [{
        reason: "HealthPolicySyntaxInvalid",
        message: yamlMessageBesideLocation(e.message),
        location: at(e.pos[0]),
      }],
    };
  }
  type TupprDoc = {
    kind?: unknown;
    metadata?: { name?: string };
    spec?: { healthChecks?: unknown };
  };
  let raw: TupprDoc;
  try {
    raw = doc.toJS({ maxAliasCount: 100 }) as TupprDoc;
  } catch (e) {
    // The alias budget throws (a "billion laughs" manifest): a problem, never an exception.
    if (!isAliasBudgetError(e)) throw e;
    return {
      ok: false,
      problems: [{
        reason: "AliasBudgetExceeded",
        message: "YAML aliases expand beyond the allowed budget",
        location: at(0),
      }],
    };
  }
  if (raw?.kind !== "TalosUpgrade" || !Array.isArray(raw.spec?.healthChecks)) {
    return {
      ok: false,
      problems: [{
        reason: "HealthPolicyInvalid",
        message: "expected a TalosUpgrade with spec.healthChecks",
        location: at(0),
      }],
    };
  }
  const problems: Problem[] = [];
  const bindings = raw.spec.healthChecks.map((entry, i) => {
    const parsed = TupprHealthCheckSchema.safeParse(entry);
    if (!parsed.success) {
      const node = doc.getIn(["spec", "healthChecks", i], true) as {
        range?: [number, number, number];
      } | undefined;
      problems.push({
        reason: "HealthPolicyInvalid",
        message: `healthChecks[${i}]: ${parsed.error.issues.map((x) => x.message).join("; ")}`,
        location: { ...at(node?.range?.[0] ?? 0), path: `spec.healthChecks[${i}]` },
      });
      return undefined;
    }
    const h = parsed.data;
    const slug = `${h.kind}-${h.name ?? "all"}`.toLowerCase().replace(/[^a-z0-9-]+/g, "-");
    return {
      name: `tuppr-${i}-${slug}`.slice(0, 63).replace(/-+$/, ""),
      ...(h.description ? { description: h.description } : {}),
      reader: "kube-object",
      ...(h.timeout
        ? { timeoutSeconds: Math.min(3600, Math.max(1, durationSeconds(h.timeout))) }
        : {}),
      healthCheck: entry,
    };
  });
  if (problems.length > 0) return { ok: false, problems };
  const policy = {
    apiVersion: "cairn.dev/v1alpha1",
    kind: "HealthPolicy",
    metadata: { name: `${raw.metadata?.name ?? "tuppr"}-imported`, cluster },
    spec: { bindings },
  };
  return { ok: true, yaml: stringify(policy, { lineWidth: 0 }), count: bindings.length };
}
