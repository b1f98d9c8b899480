import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { celUint, isCelList, isCelMap, isCelUint } from "@bufbuild/cel";
import { tests as conformance } from "@bufbuild/cel-spec/testdata/conformance.js";
import { compileCel, evalCel } from "../../../src/domain/health/cel.ts";

/**
 * Runs the CEL conformance cases (cel-spec testdata shipped in @bufbuild/cel-spec) for the
 * operators our predicates use through cairn's own evaluation wrapper. Cases that need
 * protobuf messages, type values, bytes or a type-checked container are outside what a
 * predicate over JSON objects can meet and are not selected.
 */
const SECTIONS: Record<string, string[] | "all"> = {
  basic: ["self_eval_zeroish", "self_eval_nonzeroish", "variables", "functions"],
  comparisons: "all",
  logic: "all",
  // quoted_map_fields (backtick identifiers, cel-spec 0.25) is not parsed by @bufbuild/cel 0.6.1:
  // its 6 cases fail to compile, so a policy cannot use that syntax; not selected.
  fields: ["map_fields", "map_has", "in"],
  lists: "all",
  macros: ["exists", "all", "exists_one", "map", "filter", "nested"],
  string: ["size", "starts_with", "ends_with", "matches", "concatenation", "contains"],
  conversions: ["int", "double", "string", "bool"],
};

type Json = Record<string, unknown>;
interface Case {
  section: string;
  name: string;
  expr: string;
  bindings: Record<string, unknown>;
  expect: { value: unknown } | { error: true };
}

const UNSUPPORTED = /objectValue|typeValue|bytesValue|enumValue|"@type"/;

function fromValue(v: Json): unknown {
  if ("nullValue" in v) return null;
  if ("boolValue" in v) return v["boolValue"];
  if ("int64Value" in v) return BigInt(v["int64Value"] as string);
  if ("uint64Value" in v) return celUint(BigInt(v["uint64Value"] as string));
  if ("doubleValue" in v) return Number(v["doubleValue"]);
  if ("stringValue" in v) return v["stringValue"];
  if ("listValue" in v) return ((v["listValue"] as Json)["values"] as Json[] ?? []).map(fromValue);
  if ("mapValue" in v) {
    const entries = ((v["mapValue"] as Json)["entries"] as Json[] | undefined) ?? [];
    return new Map(
      entries.map((e) => [fromValue(e["key"] as Json), fromValue(e["value"] as Json)]),
    );
  }
  if (Object.keys(v).length === 0) return undefined;
  throw new Error(`value kind ${Object.keys(v).join()}`);
}

/** Normalises an evaluation result into the same shape as `fromValue` output. */
function normal(v: unknown): unknown {
  if (isCelUint(v)) return { uint: v.value };
  if (isCelList(v)) return [...v].map(normal);
  if (isCelMap(v)) return new Map([...v.entries()].map(([k, x]) => [normal(k), normal(x)]));
  return v;
}

function* cases(): Generator<Case> {
  for (const suite of conformance.suites ?? []) {
    const pick = SECTIONS[suite.name];
    if (!pick) continue;
    for (const sub of suite.suites ?? []) {
      if (pick !== "all" && !pick.includes(sub.name)) continue;
      for (const t of sub.tests ?? []) {
        const o = t.original as Json;
        if (UNSUPPORTED.test(JSON.stringify(o)) || o["container"] || o["checkOnly"]) continue;
        if (o["disableMacros"] || o["typedResult"] || o["unknown"] || o["anyEvalErrors"]) continue;
        const bindings = Object.fromEntries(
          Object.entries((o["bindings"] as Record<string, Json> | undefined) ?? {})
            .map(([k, b]) => [k, fromValue(b["value"] as Json)]),
        );
        const expect = o["evalError"]
          ? { error: true as const }
          : { value: fromValue((o["value"] as Json) ?? { boolValue: true }) };
        yield {
          section: `${suite.name}/${sub.name}`,
          name: String(o["name"]),
          expr: String(o["expr"]),
          bindings,
          expect,
        };
      }
    }
  }
}

function same(a: unknown, b: unknown): boolean {
  if (typeof a === "number" && typeof b === "number") {
    return Object.is(a, b) || a === b || (isNaN(a) && isNaN(b));
  }
  try {
    assertEquals(a, b);
    return true;
  } catch {
    return false;
  }
}

Deno.test("the CEL wrapper passes the cel-spec conformance cases for the operators predicates use", () => {
  const all = [...cases()];
  const failures: string[] = [];
  const perSection = new Map<string, number>();
  for (const c of all) {
    perSection.set(c.section.split("/")[0]!, (perSection.get(c.section.split("/")[0]!) ?? 0) + 1);
    let out;
    try {
      out = evalCel(compileCel(c.expr, Object.keys(c.bindings)), c.bindings);
    } catch (e) {
      failures.push(`${c.section}/${c.name}: compile ${(e as Error).message}`);
      continue;
    }
    const ok = "error" in c.expect
      ? !out.ok
      : out.ok && same(normal(out.value), normal(c.expect.value));
    if (!ok) {
      failures.push(
        `${c.section}/${c.name}: ${c.expr} => ${out.ok ? String(out.value) : out.error}`,
      );
    }
  }
  // deno-lint-ignore no-console
  console.log(
    `CEL conformance: ${all.length - failures.length}/${all.length} cases pass`,
    Object.fromEntries(perSection),
  );
  assert(all.length >= 300, `only ${all.length} cases selected`);
  assertEquals(failures, []);
});
