/**
 * `jsonEqual` answers exactly what comparing the two values' JSON text answers: checked on the
 * edge values by name, and on random JSON-ish values (key orders, omitted values, near misses)
 * against `JSON.stringify` itself.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { jsonEqual } from "../../../src/sim/kube/json_equal.ts";
import { seededRandom } from "../../../src/sim/seeded_random.ts";

const byText = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

Deno.test("jsonEqual: edge values answer as their JSON text compares", () => {
  const date = new Date(0);
  const cases: [unknown, unknown][] = [
    [{ a: 1, b: 2 }, { b: 2, a: 1 }],
    [{ a: 1, b: undefined }, { a: 1 }],
    [{ a: 1, f: () => 1 }, { a: 1 }],
    [[undefined], [null]],
    [[() => 1], [null]],
    [[1, , 3], [1, null, 3]],
    [NaN, null],
    [Infinity, null],
    [-0, 0],
    [{ x: -0 }, { x: 0 }],
    [undefined, undefined],
    [undefined, () => 1],
    [undefined, null],
    [1, "1"],
    [true, "true"],
    [null, "null"],
    [{}, []],
    [{ "1": 1, a: 2 }, { a: 2, "1": 1 }],
    [date, date.toISOString()],
    [{ at: date }, { at: date.toISOString() }],
    [{ toJSON: () => "x" }, "x"],
    [new Map([[1, 2]]), {}],
    [Object.create(null), {}],
    [{ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] }],
    [{ a: [1, { b: 2 }] }, { a: [1, { b: 3 }] }],
    [{ a: [1, { b: 2 }] }, { a: [1, { b: 2 }, 3] }],
  ];
  cases.forEach(([a, b], i) => {
    assertEquals(jsonEqual(a, b), byText(a, b), `case ${i}`);
    assertEquals(jsonEqual(b, a), byText(b, a), `case ${i}, reversed`);
  });
});

Deno.test("jsonEqual: random values and their near copies answer as JSON.stringify", () => {
  const rnd = seededRandom(16);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const leaves = [null, undefined, 0, -0, 1, 2.5, NaN, Infinity, "", "a", "b", true, false];
  const keys = ["a", "b", "c", "1", "spec", "status"];
  const value = (depth: number): unknown => {
    const r = rnd();
    if (depth === 0 || r < 0.4) return pick(leaves);
    if (r < 0.7) return Array.from({ length: Math.floor(rnd() * 4) }, () => value(depth - 1));
    const o: Record<string, unknown> = {};
    for (let i = Math.floor(rnd() * 4); i > 0; i--) o[pick(keys)] = value(depth - 1);
    return o;
  };
  // A copy with, sometimes, one change: a leaf swapped, a key moved to the end, a key added.
  const near = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(near);
    if (v !== null && typeof v === "object") {
      const o: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) o[k] = near(x);
      const r = rnd();
      const ks = Object.keys(o);
      if (r < 0.1 && ks.length > 1) {
        const k = ks[0]!, x = o[k];
        delete o[k];
        o[k] = x;
      } else if (r < 0.2) o[pick(keys)] = pick(leaves);
      return o;
    }
    return rnd() < 0.1 ? pick(leaves) : v;
  };
  let equal = 0;
  for (let i = 0; i < 20_000; i++) {
    const a = value(4), b = rnd() < 0.8 ? near(a) : value(4);
    const want = byText(a, b);
    if (want) equal++;
    assertEquals(jsonEqual(a, b), want, `${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
  }
  // Both answers were exercised.
  assertEquals(equal > 2_000 && equal < 18_000, true, `${equal} equal`);
});
