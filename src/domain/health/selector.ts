import type { LabelSelector } from "./policy_schema.ts";

/** Structural label selector (PDB specs use the same shape). */
export interface SelectorLike {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly {
    readonly key: string;
    readonly operator: string;
    readonly values?: readonly string[];
  }[];
}

/**
 * Kubernetes label-selector semantics: every matchLabels pair and every expression must hold.
 * An empty selector matches everything; an unknown operator matches nothing (fail closed).
 */
export function selectorMatches(
  sel: SelectorLike | LabelSelector,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  const l = labels ?? {};
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) if (l[k] !== v) return false;
  for (const e of sel.matchExpressions ?? []) {
    const has = Object.hasOwn(l, e.key);
    const inValues = has && (e.values ?? []).includes(l[e.key]!);
    switch (e.operator) {
      case "In":
        if (!inValues) return false;
        break;
      case "NotIn":
        if (inValues) return false;
        break;
      case "Exists":
        if (!has) return false;
        break;
      case "DoesNotExist":
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

/** Renders a selector the way the API's `labelSelector` query parameter expects it. */
export function selectorToQuery(sel: LabelSelector): string {
  const parts = Object.entries(sel.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const e of sel.matchExpressions ?? []) {
    const vals = (e.values ?? []).join(",");
    if (e.operator === "In") parts.push(`${e.key} in (${vals})`);
    else if (e.operator === "NotIn") parts.push(`${e.key} notin (${vals})`);
    else if (e.operator === "Exists") parts.push(e.key);
    else parts.push(`!${e.key}`);
  }
  return parts.join(",");
}
