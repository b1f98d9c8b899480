/**
 * The path syntax of a playbook's YAML selector: `spec.values.drivers.rbd.name`, `a.list[0].b`,
 * `spec.values["app.kubernetes.io/name"]`. Parsed once at load so a typo in a shipped playbook is
 * a located load error, never a silent "value absent" at review time.
 */

/**
 * One step of a YAML path: a mapping key, a list index, or the first list item whose field (a
 * plain dotted key path) has a given scalar value: `healthCheckExprs[kind=ClusterIssuer]`.
 */
export type PathStep = string | number | {
  readonly field: readonly string[];
  readonly value: string;
};

/** Parses a selector path; returns a message when it is malformed. */
export function parseYamlPath(text: string): PathStep[] | string {
  const steps: PathStep[] = [];
  let i = 0;
  const plain = /[A-Za-z0-9_\-/:$]/;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === "[") {
      const close = text.indexOf("]", i);
      if (close === -1) return `unclosed "[" at character ${i + 1}`;
      const inner = text.slice(i + 1, close);
      if (/^\d{1,4}$/.test(inner)) steps.push(Number(inner));
      else if (/^"[^"\\]{1,200}"$/.test(inner)) steps.push(inner.slice(1, -1));
      else if (/^[A-Za-z0-9_-]{1,60}(\.[A-Za-z0-9_-]{1,60}){0,4}=[^\]"]{1,120}$/.test(inner)) {
        const eq = inner.indexOf("=");
        steps.push({ field: inner.slice(0, eq).split("."), value: inner.slice(eq + 1) });
      } else return `"[${inner}]" is neither an index, a quoted key nor a field=value filter`;
      i = close + 1;
      if (i < text.length && text[i] === ".") {
        i++;
        if (i >= text.length) return "path ends with '.'";
      }
      continue;
    }
    let j = i;
    while (j < text.length && plain.test(text[j]!)) j++;
    if (j === i) return `unexpected ${JSON.stringify(ch)} at character ${i + 1}`;
    steps.push(text.slice(i, j));
    i = j;
    if (i < text.length && text[i] === ".") {
      i++;
      if (i >= text.length) return "path ends with '.'";
    } else if (i < text.length && text[i] !== "[") {
      return `unexpected ${JSON.stringify(text[i])} at character ${i + 1}`;
    }
  }
  if (steps.length === 0) return "empty path";
  return steps;
}

/** Compiles a capture pattern; returns a message when it does not compile or captures nothing. */
export function compileCapture(source: string): RegExp | string {
  let re: RegExp;
  try {
    re = new RegExp(source, "m");
  } catch (e) {
    return `pattern does not compile: ${(e as Error).message}`;
  }
  // A pattern's capture groups, counted by matching it against the empty alternative.
  const groups = new RegExp(`${source}|`, "m").exec("")!.length - 1;
  if (groups < 1) return "pattern needs one capture group (the version)";
  return re;
}
