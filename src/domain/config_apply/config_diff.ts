/**
 * The effective change of a machine-configuration patch: the patch merged onto the configuration
 * the node runs now, and every path where the result differs from it. The classification covers
 * this whole effective diff, not only the fields the patch names (docs/config-apply.md#the-activation-table).
 *
 * Values are compared, never reported: a machine configuration holds keys and tokens, so the diff
 * carries paths and a kind of change only.
 */

/** A parsed YAML value. */
export type ConfigValue =
  | string
  | number
  | boolean
  | null
  | readonly ConfigValue[]
  | { readonly [k: string]: ConfigValue };

/** One changed path and what kind of change it is. */
export interface ConfigChange {
  /** Dotted path in the document (`machine.time.servers`). */
  readonly path: string;
  readonly change: "added" | "removed" | "modified";
  /** For `machine.kernel.modules`: which module names were added, removed or changed. */
  readonly modules?: {
    readonly added: readonly string[];
    readonly removed: readonly string[];
    readonly changed: readonly string[];
  };
}

/** Why a patch cannot be merged (located by its path inside the patch). */
export class PatchInvalid extends Error {
  constructor(readonly path: string, message: string) {
    super(message);
  }
}

function isMap(v: ConfigValue | undefined): v is { readonly [k: string]: ConfigValue } {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * Merges a patch onto a document: mappings merge key by key, every other value (lists included)
 * replaces. Directives (`$patch`, keys starting with `$`) are refused rather than guessed at.
 */
export function mergePatch(base: ConfigValue, patch: ConfigValue, at = ""): ConfigValue {
  if (!isMap(patch)) return patch;
  const out: Record<string, ConfigValue> = isMap(base) ? { ...base } : {};
  for (const [k, v] of Object.entries(patch)) {
    const path = at ? `${at}.${k}` : k;
    if (k.startsWith("$")) {
      throw new PatchInvalid(path, `patch directive "${k}" at ${path} is not supported`);
    }
    out[k] = mergePatch(out[k] ?? null, v, path);
  }
  return out;
}

const MODULES = "machine.kernel.modules";

/**
 * Every leaf path where `after` differs from `before`. Mappings are walked; a list is one value
 * (a changed element changes the list), except the kernel module list, whose change is described
 * per module name because removal and addition activate differently.
 */
export function diffConfigs(before: ConfigValue, after: ConfigValue): ConfigChange[] {
  const out: ConfigChange[] = [];
  walk(before, after, "", out);
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

function walk(
  a: ConfigValue | undefined,
  b: ConfigValue | undefined,
  at: string,
  out: ConfigChange[],
) {
  if (at === MODULES) {
    const modules = moduleChange(a, b);
    if (modules.added.length + modules.removed.length + modules.changed.length > 0) {
      out.push({ path: at, change: kindOf(a, b), modules });
    }
    return;
  }
  if (isMap(a) && isMap(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) walk(a[k], b[k], at ? `${at}.${k}` : k, out);
    return;
  }
  if (isMap(a) && b === undefined) {
    for (const k of Object.keys(a)) walk(a[k], undefined, at ? `${at}.${k}` : k, out);
    return;
  }
  if (a === undefined && isMap(b)) {
    for (const k of Object.keys(b)) walk(undefined, b[k], at ? `${at}.${k}` : k, out);
    return;
  }
  if (!sameValue(a, b)) out.push({ path: at, change: kindOf(a, b) });
}

function kindOf(a: ConfigValue | undefined, b: ConfigValue | undefined): ConfigChange["change"] {
  if (a === undefined || a === null) return "added";
  if (b === undefined || b === null) return "removed";
  return "modified";
}

/** Structural equality (key order ignored, list order kept). */
export function sameValue(a: ConfigValue | undefined, b: ConfigValue | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => sameValue(x, (b as readonly ConfigValue[])[i]));
  }
  if (isMap(a) && isMap(b)) {
    const ka = Object.keys(a), kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k) => sameValue(a[k], b[k]));
  }
  return false;
}

function moduleList(v: ConfigValue | undefined): Map<string, ConfigValue> {
  const m = new Map<string, ConfigValue>();
  if (!Array.isArray(v)) return m;
  for (const item of v as readonly ConfigValue[]) {
    const name = isMap(item) && typeof item["name"] === "string"
      ? item["name"]
      : JSON.stringify(item);
    m.set(name, item);
  }
  return m;
}

function moduleChange(a: ConfigValue | undefined, b: ConfigValue | undefined) {
  const before = moduleList(a), after = moduleList(b);
  const added = [...after.keys()].filter((k) => !before.has(k)).sort();
  const removed = [...before.keys()].filter((k) => !after.has(k)).sort();
  const changed = [...after.keys()].filter((k) =>
    before.has(k) && !sameValue(before.get(k), after.get(k))
  )
    .sort();
  return { added, removed, changed };
}

/** The value at a dotted path, or undefined. */
export function valueAt(doc: ConfigValue | undefined, path: string): ConfigValue | undefined {
  let cur: ConfigValue | undefined = doc;
  for (const seg of path.split(".")) {
    if (!isMap(cur)) return undefined;
    cur = cur[seg];
  }
  return cur;
}
