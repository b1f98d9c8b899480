/**
 * The three patch formats the API server accepts, plus the field-set helpers server-side apply
 * needs. Strategic merge knows the merge keys of the lists cairn and kubectl touch (containers,
 * conditions, taints, ...); other lists are replaced, as with a JSON merge patch.
 */
type Json = unknown;
type JsonObject = Record<string, unknown>;

export class PatchError extends Error {}

const isObject = (v: unknown): v is JsonObject =>
  v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * A deep copy of stored or received data. The twin's objects are JSON-shaped (plain objects,
 * arrays, primitives), which a recursive copy takes about eight times faster than
 * `structuredClone` (a serialise and deserialise): the in-process twin copies every object it
 * hands out, and that copy was a tenth of a simulated seed's CPU (issue 16). Anything that is not
 * a plain object or array (a Date, a Map, a typed array, a class instance) still goes through
 * `structuredClone`, so such a value is copied as before. Unlike `structuredClone`, an object
 * referenced twice is copied twice, as a JSON body read off the wire would be.
 */
export function clone<T>(v: T): T {
  if (typeof v !== "object" || v === null) return v;
  if (Array.isArray(v)) {
    const out = new Array(v.length);
    for (let i = 0; i < v.length; i++) out[i] = clone(v[i]);
    return out as T;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return structuredClone(v);
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) out[k] = clone((v as Record<string, unknown>)[k]);
  return out as T;
}

/** RFC 7386 JSON merge patch. */
export function mergePatch(target: Json, patch: Json): Json {
  if (!isObject(patch)) return clone(patch);
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** List fields merged by key under strategic merge (field name → merge key). */
const MERGE_KEYS: Readonly<Record<string, string>> = {
  containers: "name",
  initContainers: "name",
  volumes: "name",
  volumeMounts: "mountPath",
  env: "name",
  ports: "containerPort",
  conditions: "type",
  taints: "key",
  tolerations: "key",
  ownerReferences: "uid",
  addresses: "type",
  imagePullSecrets: "name",
};

function mergeList(field: string, target: unknown[], patch: unknown[]): unknown[] {
  const key = MERGE_KEYS[field];
  if (!key) return clone(patch);
  const out = target.map((x) => clone(x));
  for (const item of patch) {
    if (!isObject(item)) continue;
    const i = out.findIndex((t) => isObject(t) && t[key] === item[key]);
    if (item["$patch"] === "delete") {
      if (i >= 0) out.splice(i, 1);
    } else if (i >= 0) out[i] = strategicMerge(out[i], item);
    else out.push(strategicMerge({}, item));
  }
  return out;
}

/** Strategic merge patch (the subset of directives kubectl emits). */
export function strategicMerge(target: Json, patch: Json): Json {
  if (!isObject(patch)) return clone(patch);
  if (patch["$patch"] === "replace") {
    const { $patch: _, ...rest } = patch;
    return clone(rest);
  }
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith("$")) continue; // $setElementOrder, $retainKeys: ordering hints only
    if (v === null) delete out[k];
    else if (Array.isArray(v) && Array.isArray(out[k])) out[k] = mergeList(k, out[k], v);
    else if (Array.isArray(v)) out[k] = mergeList(k, [], v);
    else out[k] = strategicMerge(out[k], v);
  }
  return out;
}

function pointer(path: string): string[] {
  if (path === "") return [];
  if (!path.startsWith("/")) throw new PatchError(`invalid JSON pointer ${path}`);
  return path.slice(1).split("/").map((s) => s.replaceAll("~1", "/").replaceAll("~0", "~"));
}

function parentOf(doc: Json, parts: string[]): { parent: JsonObject | unknown[]; key: string } {
  let cur: unknown = doc;
  for (const p of parts.slice(0, -1)) {
    cur = Array.isArray(cur) ? cur[Number(p)] : isObject(cur) ? cur[p] : undefined;
    if (cur === undefined) throw new PatchError(`path not found: /${parts.join("/")}`);
  }
  if (!Array.isArray(cur) && !isObject(cur)) {
    throw new PatchError(`path not found: /${parts.join("/")}`);
  }
  return { parent: cur, key: parts[parts.length - 1] ?? "" };
}

function getAt(doc: Json, parts: string[]): Json {
  const { parent, key } = parentOf(doc, parts);
  const v = Array.isArray(parent) ? parent[Number(key)] : parent[key];
  if (v === undefined) throw new PatchError(`path not found: /${parts.join("/")}`);
  return v;
}

function removeAt(doc: Json, parts: string[]): Json {
  const v = getAt(doc, parts);
  const { parent, key } = parentOf(doc, parts);
  if (Array.isArray(parent)) parent.splice(Number(key), 1);
  else delete parent[key];
  return v;
}

function addAt(doc: Json, parts: string[], value: Json, replace: boolean): void {
  const { parent, key } = parentOf(doc, parts);
  if (Array.isArray(parent)) {
    const i = key === "-" ? parent.length : Number(key);
    if (replace) parent[i] = value;
    else parent.splice(i, 0, value);
  } else parent[key] = value;
}

/** RFC 6902 JSON patch; a failed `test` throws. */
export function jsonPatch(target: Json, ops: Json): Json {
  if (!Array.isArray(ops)) throw new PatchError("JSON patch must be an array");
  let doc = clone(target);
  for (const op of ops as JsonObject[]) {
    const parts = pointer(String(op.path ?? ""));
    if (parts.length === 0 && (op.op === "add" || op.op === "replace")) {
      doc = clone(op.value);
      continue;
    }
    switch (op.op) {
      case "add":
        addAt(doc, parts, clone(op.value), false);
        break;
      case "replace":
        getAt(doc, parts);
        addAt(doc, parts, clone(op.value), true);
        break;
      case "remove":
        removeAt(doc, parts);
        break;
      case "test":
        if (JSON.stringify(getAt(doc, parts)) !== JSON.stringify(op.value)) {
          throw new PatchError(`test failed at ${String(op.path)}`);
        }
        break;
      case "move":
        addAt(doc, parts, removeAt(doc, pointer(String(op.from))), false);
        break;
      case "copy":
        addAt(doc, parts, clone(getAt(doc, pointer(String(op.from)))), false);
        break;
      default:
        throw new PatchError(`unknown JSON patch op ${String(op.op)}`);
    }
  }
  return doc;
}

/** A FieldsV1 trie: `{"f:spec": {"f:unschedulable": {}}}`. Lists are owned atomically. */
export type FieldSet = Record<string, unknown>;

const SERVER_FIELDS = new Set([
  "apiVersion",
  "kind",
  "name",
  "namespace",
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "managedFields",
]);

/** The fields an applied configuration (or a patch body) sets. */
export function fieldSetOf(obj: Json, top = true): FieldSet {
  const out: FieldSet = {};
  if (!isObject(obj)) return out;
  for (const [k, v] of Object.entries(obj)) {
    if (k.startsWith("$") || (top && (k === "apiVersion" || k === "kind"))) continue;
    if (top === false && SERVER_FIELDS.has(k) && k !== "name") continue;
    out[`f:${k}`] = isObject(v) && Object.keys(v).length > 0
      ? { ".": {}, ...fieldSetOf(v, k === "metadata" ? false : false) }
      : {};
  }
  return out;
}

/** Leaf paths of a field set, e.g. `["spec","unschedulable"]`. */
export function leafPaths(set: FieldSet, prefix: string[] = []): string[][] {
  const out: string[][] = [];
  for (const [k, v] of Object.entries(set)) {
    if (k === ".") continue;
    const path = [...prefix, k.slice(2)];
    const sub = leafPaths(v as FieldSet, path);
    if (sub.length === 0) out.push(path);
    else out.push(...sub);
  }
  return out;
}

/** Whether `set` owns `path` or any field below or above it. */
export function owns(set: FieldSet, path: readonly string[]): boolean {
  let cur: FieldSet = set;
  for (const p of path) {
    const next = cur[`f:${p}`] as FieldSet | undefined;
    if (!next) return false;
    const children = Object.keys(next).filter((k) => k !== ".");
    if (children.length === 0) return true;
    cur = next;
  }
  return true;
}

/** Removes `path` from a field set (ownership transferred to another manager). */
export function removePath(set: FieldSet, path: readonly string[]): void {
  const [head, ...rest] = path;
  if (head === undefined) return;
  const key = `f:${head}`;
  const child = set[key] as FieldSet | undefined;
  if (!child) return;
  if (rest.length === 0) delete set[key];
  else {
    removePath(child, rest);
    if (Object.keys(child).filter((k) => k !== ".").length === 0) delete set[key];
  }
}

/** Reads the value at a path of plain keys. */
export function valueAt(obj: Json, path: readonly string[]): Json {
  let cur: unknown = obj;
  for (const p of path) cur = isObject(cur) ? cur[p] : undefined;
  return cur;
}
