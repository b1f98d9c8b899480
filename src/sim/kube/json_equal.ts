/**
 * `JSON.stringify(a) === JSON.stringify(b)` without building either string. The twin compares a
 * stored object with its next version on every write (is it a change, does the spec move the
 * generation, is a recomputed status new), and serialising both sides twice was most of a store
 * write's CPU (issue 16).
 *
 * The answer is exactly the two strings' equality, key order included (`{a, b}` and `{b, a}`
 * differ, as their JSON does): plain objects compare key by key in their own order, skipping the
 * values JSON leaves out (undefined, functions, symbols); arrays element by element, those values
 * standing for `null`. Anything else that is not a string, boolean, finite number or null (a
 * `toJSON` method, a Date, a Map, a class instance, a NaN) is compared by its JSON, so such a
 * value answers as before.
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b && simpleLeaf(a)) return true;
  const pa = plainObject(a), pb = plainObject(b);
  if (pa && pb) return objectsEqual(a, b);
  const aa = plainArray(a), ab = plainArray(b);
  if (aa && ab) return arraysEqual(a, b);
  if ((simpleLeaf(a) || pa || aa) && (simpleLeaf(b) || pb || ab)) {
    // Two different kinds of JSON value (or two different leaves): never the same text.
    return false;
  }
  return JSON.stringify(a) === JSON.stringify(b);
}

/** A value whose JSON is itself compared with `===`: its text is equal iff it is. */
function simpleLeaf(v: unknown): boolean {
  return v === null || typeof v === "string" || typeof v === "boolean" ||
    (typeof v === "number" && Number.isFinite(v) && !Object.is(v, -0));
}

/** Values an object's JSON leaves out and an array's writes as `null`. */
function omitted(v: unknown): boolean {
  return v === undefined || typeof v === "function" || typeof v === "symbol";
}

function plainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return (proto === Object.prototype || proto === null) &&
    typeof (v as { toJSON?: unknown }).toJSON !== "function";
}

function plainArray(v: unknown): v is unknown[] {
  return Array.isArray(v) && Object.getPrototypeOf(v) === Array.prototype &&
    typeof (v as { toJSON?: unknown }).toJSON !== "function";
}

function objectsEqual(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const ka = Object.keys(a), kb = Object.keys(b);
  let i = 0, j = 0;
  for (;;) {
    while (i < ka.length && omitted(a[ka[i]!])) i++;
    while (j < kb.length && omitted(b[kb[j]!])) j++;
    if (i === ka.length || j === kb.length) return i === ka.length && j === kb.length;
    const k = ka[i]!;
    if (k !== kb[j] || !jsonEqual(a[k], b[k])) return false;
    i++;
    j++;
  }
}

function arraysEqual(a: unknown[], b: unknown[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = omitted(a[i]) ? null : a[i], y = omitted(b[i]) ? null : b[i];
    if (!jsonEqual(x, y)) return false;
  }
  return true;
}
