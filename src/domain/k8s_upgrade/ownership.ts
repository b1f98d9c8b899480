/**
 * Field ownership of the bootstrap manifests (row 25, docs/safeguards.md#the-table): Talos's manifest
 * sync applies them with server-side apply and forces ownership, whatever `--manifests-force`
 * says, so a field another manager also owns would be taken over silently. cairn reads each
 * object's `metadata.managedFields` and refuses any field owned both by the bootstrap manager and
 * by anyone else, naming the object, the field path and both managers; an object whose ownership
 * cannot be established (no managedFields, no bootstrap entry) refuses too. Pure.
 *
 * `fieldsV1` is the apiserver's trie of owned fields (protocols.md B5): keys `f:<name>`,
 * `k:<json key fields>`, `v:<json value>`, `i:<index>`, and `.` for the node itself.
 */

/** Talos's field manager for bootstrap manifests (`constants.KubernetesFieldManagerName`). */
export const BOOTSTRAP_FIELD_MANAGER = "talos";

/** One `metadata.managedFields` entry, reduced to what ownership needs. */
export interface ManagedFieldsEntry {
  readonly manager: string;
  readonly operation: string;
  readonly subresource: string;
  readonly fieldsV1: unknown;
}

/** A bootstrap object as read: its identity and its ownership record. */
export interface BootstrapObject {
  /** `Kind namespace/name` (or `Kind name` when cluster-scoped). */
  readonly ref: string;
  readonly uid: string;
  readonly resourceVersion: string;
  readonly managedFields: readonly ManagedFieldsEntry[];
}

/** A field owned by the bootstrap manager and by another one. */
export interface OwnershipOverlap {
  readonly object: string;
  readonly path: string;
  readonly bootstrapManager: string;
  readonly otherManager: string;
  readonly otherOperation: string;
}

/** What the ownership check found for the whole inventory. */
export interface OwnershipJudgement {
  readonly overlaps: readonly OwnershipOverlap[];
  /** Objects whose ownership could not be established, with why. */
  readonly unknown: readonly { readonly object: string; readonly why: string }[];
}

/** Reads `metadata.managedFields` of an unstructured object; undefined when absent or malformed. */
export function managedFieldsOf(raw: unknown): ManagedFieldsEntry[] | undefined {
  if (!Array.isArray(raw)) return undefined;
  const out: ManagedFieldsEntry[] = [];
  for (const e of raw) {
    if (typeof e !== "object" || e === null) return undefined;
    const r = e as Record<string, unknown>;
    if (typeof r.manager !== "string") return undefined;
    out.push({
      manager: r.manager,
      operation: typeof r.operation === "string" ? r.operation : "",
      subresource: typeof r.subresource === "string" ? r.subresource : "",
      fieldsV1: r.fieldsV1,
    });
  }
  return out;
}

/** Renders one trie key as a path segment. */
function segment(key: string): string {
  const kind = key.slice(0, 2);
  const rest = key.slice(2);
  switch (kind) {
    case "f:":
      return `.${rest}`;
    case "i:":
      return `[${rest}]`;
    case "v:":
      return `[=${rest}]`;
    case "k:": {
      try {
        const fields = JSON.parse(rest) as Record<string, unknown>;
        return `[${Object.entries(fields).map(([k, v]) => `${k}=${String(v)}`).join(",")}]`;
      } catch {
        return `[${rest}]`;
      }
    }
    default:
      return `.${key}`;
  }
}

/** One owned field: its path, and whether it is owned whole (a leaf: nothing below is listed). */
export interface OwnedField {
  readonly path: string;
  readonly whole: boolean;
}

/**
 * Every owned field of a `fieldsV1` trie (`.spec.template.spec.containers[name=x].image`). A leaf
 * is owned whole, everything below it included; a node marked `.` with children is owned as a
 * member (its existence), its children each by their own entries.
 */
export function ownedFields(fields: unknown, prefix = ""): OwnedField[] {
  if (typeof fields !== "object" || fields === null) {
    return prefix ? [{ path: prefix, whole: true }] : [];
  }
  const entries = Object.entries(fields as Record<string, unknown>);
  const children = entries.filter(([k]) => k !== ".");
  const out: OwnedField[] = [];
  if (prefix && children.length === 0) out.push({ path: prefix, whole: true });
  else if (prefix && entries.some(([k]) => k === ".")) out.push({ path: prefix, whole: false });
  for (const [k, v] of children) out.push(...ownedFields(v, prefix + segment(k)));
  return out;
}

/** The owned paths of a trie (see {@link ownedFields}). */
export function ownedPaths(fields: unknown): string[] {
  return ownedFields(fields).map((f) => f.path);
}

/** True when `inner` lies below `outer` (`.a.b` below `.a`, `.a[0]` below `.a`). */
function below(inner: string, outer: string): boolean {
  return inner.startsWith(outer) && (inner[outer.length] === "." || inner[outer.length] === "[");
}

/**
 * The path two managers both own, if any: the same field, or a field below one the other owns
 * whole. The deeper path is named.
 */
function shared(a: OwnedField, b: OwnedField): string | undefined {
  // Two members of one map or list item (`.` only) share its existence, never its value.
  if (a.path === b.path) return a.whole || b.whole ? a.path : undefined;
  if (a.whole && below(b.path, a.path)) return b.path;
  if (b.whole && below(a.path, b.path)) return a.path;
  return undefined;
}

/**
 * Judges every bootstrap object: the bootstrap manager's owned leaves against every other
 * manager's on the main resource (status and other subresources are separate field sets the
 * manifest sync does not write).
 */
export function judgeOwnership(objects: readonly BootstrapObject[]): OwnershipJudgement {
  const overlaps: OwnershipOverlap[] = [];
  const unknown: { object: string; why: string }[] = [];
  for (const o of objects) {
    const main = o.managedFields.filter((e) => e.subresource === "");
    const mine = main.filter((e) => e.manager === BOOTSTRAP_FIELD_MANAGER);
    if (mine.length === 0) {
      unknown.push({
        object: o.ref,
        why: o.managedFields.length === 0
          ? "it has no managedFields"
          : `no managedFields entry of ${BOOTSTRAP_FIELD_MANAGER}`,
      });
      continue;
    }
    const owned = mine.flatMap((e) => ownedFields(e.fieldsV1));
    for (const other of main.filter((e) => e.manager !== BOOTSTRAP_FIELD_MANAGER)) {
      const seen = new Set<string>();
      for (const theirs of ownedFields(other.fieldsV1)) {
        const hit = owned.map((m) => shared(m, theirs)).find((p) => p !== undefined);
        if (hit === undefined || seen.has(hit)) continue;
        seen.add(hit);
        const path = hit;
        overlaps.push({
          object: o.ref,
          path,
          bootstrapManager: BOOTSTRAP_FIELD_MANAGER,
          otherManager: other.manager,
          otherOperation: other.operation,
        });
      }
    }
  }
  return { overlaps, unknown };
}

/** One overlap in words: object, field path and both managers. */
export function describeOverlap(o: OwnershipOverlap): string {
  return `${o.object} field ${o.path} is owned by ${o.bootstrapManager} and by ${o.otherManager} ` +
    `(${o.otherOperation || "unknown operation"})`;
}
