/**
 * The fast plain-YAML reader against the general `yaml` parser: whatever the fast reader
 * accepts, the general parser reads as exactly one document, without errors or warnings, to the
 * same value (YAML 1.2 core schema); everything else is left to the general parser. Seeded
 * random scalars and documents (near-misses included: duplicate keys, odd indentation, comments,
 * numbers, quotes, compact sequences) probe the boundary; real plans show the subset covers them.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { parseAllDocuments } from "yaml";
import {
  fastLoadPlainYaml,
  fastLoadPlainYamlBytes,
  fastScalar,
} from "../../../src/domain/plan/yaml_fast.ts";
import { loadYaml } from "../../../src/domain/plan/yaml_load.ts";
import { buildTalosUpgradePlanYaml } from "../../../src/domain/plan/example.ts";
import { Prng } from "../../../src/app/dst/prng.ts";

const PLANS = new URL("../../../plans/", import.meta.url);

/** The general parser's reading: the value, or undefined when it is not one clean document. */
function general(text: string): { value: unknown } | undefined {
  const docs = parseAllDocuments(text, { uniqueKeys: true });
  if (!Array.isArray(docs) || docs.length !== 1) return undefined;
  const doc = docs[0]!;
  if (doc.errors.length > 0 || doc.warnings.length > 0) return undefined;
  return { value: doc.toJS({ maxAliasCount: 16 }) };
}

/** Asserts the fast reading (if any) agrees with the general one; true when fast accepted. */
function agrees(text: string): boolean {
  const fast = fastLoadPlainYaml(text);
  if (fast === undefined) return false;
  const full = general(text);
  ok(full !== undefined, `fast reader accepted what the general parser refuses:\n${text}`);
  assertEquals(fast, full.value, `different values for:\n${text}`);
  return true;
}

const SCALAR_CHARS = "0123456789abcdefxoEeINFnaNtrueTRUEl.+-_:/@~ #\"'=,{}[]&*!|>%`";

Deno.test("every scalar the fast reader types, the core schema types the same way", () => {
  const rng = new Prng(18);
  const known = [
    "v1.14.2",
    "10.5.0.6",
    "2026-12-20T00:00:00Z",
    "3",
    "007",
    "true",
    "False",
    "alice@example.com",
    "factory.talos.dev/metal-installer/abc:v1.14.2@sha256:0123",
    "893baeaa579b024ce6066106c83aefcda03c09145f2a0d794bbeae9f9cd26c51",
    '"1.13"',
    "'x y'",
  ];
  for (const v of known) ok(agrees(`k: ${v}\n`), `the subset covers ${v}`);
  // Near misses the general parser reads as numbers, null, or not at all: left to it.
  const near = ["1e5", "123e456", "0x1F", "0o17", "1.5", ".inf", "~", "null", "12345678901234567"];
  for (const v of near) assertEquals(fastLoadPlainYaml(`k: ${v}\n`), undefined, v);
  let accepted = 0;
  for (let i = 0; i < 20_000; i++) {
    const len = rng.int(1, 10);
    let v = "";
    for (let j = 0; j < len; j++) v += rng.pick([...SCALAR_CHARS]);
    if (agrees(`k: ${v}\n`)) accepted++;
  }
  ok(accepted > 2_000, `${accepted} random scalars inside the subset`);
});

/** A random tree of mappings, sequences and scalars (the plan's shapes and then some). */
function tree(rng: Prng, depth: number, safe: boolean): unknown {
  const roll = depth > 3 ? 0 : rng.int(0, 5);
  if (roll <= 2) {
    return rng.pick(safe ? SAFE : [...SAFE, "a:b", '"q r"', "1e3", "a,b", "~", "0x1", "-1"]);
  }
  if (roll === 3) return Array.from({ length: rng.int(1, 3) }, () => tree(rng, depth + 1, safe));
  return mapping(rng, depth, safe);
}

/** Scalars inside the subset wherever they stand (block or flow). */
const SAFE = ["v1.2.3", "10.0.0.1", "3", "true", "x-y", "alice@example.com", "2026-12-20"];

function mapping(rng: Prng, depth: number, safe: boolean): Map<string, unknown> {
  const m = new Map<string, unknown>();
  for (let i = rng.int(1, 4); i > 0; i--) {
    m.set(rng.pick(["a", "b", "name", "role", "c_d"]), tree(rng, depth + 1, safe));
  }
  return m;
}

/** Renders block YAML; `noise` perturbs it (indentation, duplicates, comments, compact forms). */
function render(
  node: unknown,
  indent: number,
  rng: Prng,
  noise: number,
  flowAllowed = false,
): string[] {
  const pad = (n: number) => " ".repeat(Math.max(0, n + (rng.chance(noise) ? rng.int(-1, 1) : 0)));
  const scalars = node instanceof Map && [...node.values()].every((v) => typeof v === "string");
  if (scalars && flowAllowed && rng.chance(0.3)) {
    const inner = [...node.entries()].map(([k, v]) => `${k}: ${v}`);
    if (rng.chance(noise)) inner.push(inner[0]!); // a duplicate key
    const [open, close] = rng.chance(noise) ? ["{", " }"] : ["{ ", " }"];
    return [`${pad(indent)}${open}${inner.join(rng.chance(noise) ? "," : ", ")}${close}`];
  }
  if (node instanceof Map) {
    const out: string[] = [];
    const entries = [...node.entries()];
    if (rng.chance(noise) && entries.length > 0) entries.push(entries[0]!); // a duplicate key
    for (const [k, v] of entries) {
      if (rng.chance(noise)) out.push(`${pad(indent)}# a comment`, "");
      const flow = v instanceof Map ? render(v, 1, rng, noise, true).map((l) => l.trimStart()) : [];
      if (flow.length === 1 && flow[0]!.startsWith("{")) out.push(`${pad(indent)}${k}: ${flow[0]}`);
      else if (v instanceof Map || Array.isArray(v)) {
        const compact = Array.isArray(v) && rng.chance(noise);
        out.push(`${pad(indent)}${k}:`, ...render(v, compact ? indent : indent + 2, rng, noise));
      } else out.push(`${pad(indent)}${k}: ${v}${rng.chance(noise) ? " " : ""}`);
    }
    return out;
  }
  if (Array.isArray(node)) {
    const out: string[] = [];
    for (const item of node) {
      const inner = render(item, indent + 2, rng, noise);
      if (item instanceof Map || Array.isArray(item)) {
        const [first, ...rest] = inner;
        out.push(`${pad(indent)}- ${first!.trimStart()}`, ...rest);
      } else out.push(`${pad(indent)}- ${String(item)}`);
      if (rng.chance(noise)) out.push(`${pad(indent + 4)}continued`);
    }
    return out;
  }
  return [`${pad(indent)}${String(node)}`];
}

Deno.test("on random documents the fast reader agrees with the general parser or steps aside", () => {
  const rng = new Prng(4242);
  let clean = 0, noisyAccepted = 0, noisyRefused = 0;
  for (let i = 0; i < 1_500; i++) {
    const doc = mapping(rng, 0, i % 2 === 0);
    // Clean renderings are inside the subset unless a key repeats (the Map already refuses it).
    if (agrees(render(doc, 0, rng, 0).join("\n") + "\n") && i % 2 === 0) clean++;
    const noisy = render(doc, 0, rng, 0.08).join("\n") + "\n";
    if (agrees(noisy)) noisyAccepted++;
    else noisyRefused++;
  }
  ok(clean === 750, `${clean} of 750 clean documents of safe scalars read fast`);
  ok(
    noisyAccepted > 50 && noisyRefused > 50,
    `${noisyAccepted} noisy accepted, ${noisyRefused} left`,
  );
});

Deno.test("near misses are left to the general parser, which refuses or reads them its own way", () => {
  const near = [
    "a: x\n  b: y\n", // a deeper key after a scalar value
    "a:\n  - x\n    more\n", // a continued item scalar
    "a:\n  - b: 1\n   c: 2\n", // a misindented key in an item
    "a: 1\na: 2\n", // a duplicate key
    "a: { b: 1, b: 2 }\n", // a duplicate key in a flow mapping
    "a:\n- x\n", // a compact sequence
    "a:\n", // an empty value
    "a: x # note\n", // a trailing comment
    "---\na: 1\n", // a document marker
    "a: &x 1\nb: *x\n", // an alias
  ];
  for (const text of near) {
    assertEquals(fastLoadPlainYaml(text), undefined, text);
    agrees(text);
  }
});

Deno.test("the repository's plans and a 500-node plan read fast, to the general parser's value", async () => {
  const texts: [string, string][] = [[
    "500-node",
    buildTalosUpgradePlanYaml({
      catalogueSha256: "a".repeat(64),
      nodes: 500,
      name: "talos-v1.14.2-500",
    }),
  ]];
  for (const e of Deno.readDirSync(PLANS)) {
    if (e.name.endsWith(".yaml")) {
      texts.push([e.name, await Deno.readTextFile(new URL(e.name, PLANS))]);
    }
  }
  for (const [name, text] of texts) {
    const fast = fastLoadPlainYaml(text);
    if (fast === undefined) continue; // outside the subset: the general parser reads it
    assertEquals(fast, general(text)?.value, name);
  }
  ok(fastLoadPlainYaml(texts[0]![1]) !== undefined, "the 500-node plan is inside the subset");
  ok(fastLoadPlainYaml(await Deno.readTextFile(new URL("talos-v1.14.2.yaml", PLANS))));
});

Deno.test("a fast-read plan still locates problems through the general parser's document", () => {
  const text = "apiVersion: a\nmetadata:\n  name: x\n  extra: 1\nspec:\n  nodes:\n    - name: n1\n";
  ok(fastLoadPlainYaml(text) !== undefined);
  const r = loadYaml(new TextEncoder().encode(text), { file: "p.yaml" });
  ok(r.ok);
  const node = r.loaded.doc.getIn(["spec", "nodes", 0, "name"], true) as { range: number[] };
  assertEquals(r.loaded.lineCounter.linePos(node.range[0]!), { line: 7, col: 13 });
});

Deno.test("fastScalar reads quoted text verbatim and leaves what it cannot type exactly", () => {
  assertEquals(fastScalar('"1.13"'), "1.13");
  assertEquals(fastScalar("42"), 42);
  assertEquals(fastScalar("1e3"), undefined);
  assertEquals(fastScalar("a #b"), undefined);
});

Deno.test("from bytes, the fast reader steps aside wherever loadYaml reports a problem", () => {
  const enc = (t: string) => new TextEncoder().encode(t);
  const cases: [string, Uint8Array, number?][] = [
    ["too large", enc("a: 1\nb: 2\n"), 8],
    ["not UTF-8", new Uint8Array([...enc("a: "), 0xff, 0x0a])],
    ["a control character", enc("a: x\u0007y\n")],
    ["a NUL in a comment", enc("# \u0000\na: 1\n")],
  ];
  for (const [what, bytes, max] of cases) {
    assertEquals(fastLoadPlainYamlBytes(bytes, max), undefined, what);
    const r = loadYaml(bytes, { file: "p.yaml", ...(max ? { maxBytes: max } : {}) });
    ok(!r.ok, `loadYaml reports ${what}`);
  }
  assertEquals(fastLoadPlainYamlBytes(enc("a: 1\n")), { a: 1 });
});

/** Flow collections as policies write them, and near misses (spacing, empty, colons, quotes). */
function flow(rng: Prng, depth: number): string {
  const sp = () => rng.pick(["", "", " ", " ", "  "]);
  if (depth > 2 || rng.chance(0.4)) {
    return rng.pick([
      ...["a", "x-y", "cp-1", "3", "007", "true", "nats", "8222", "'HEALTH_OK'", '"r s"'],
      ...["null", "~", "1e3", "a:b", "a b", "'it''s'", '"a,b"', "#c", "", "-1", "a]", "*x"],
    ]);
  }
  const items = Array.from({ length: rng.int(0, 3) }, () => flow(rng, depth + 1));
  if (rng.chance(0.5)) return `[${sp()}${items.join(`,${sp()}`)}${sp()}]`;
  const keys = ["a", "b", "app.kubernetes.io/name", "matchLabels", "null", "a b", "'k'", "x:y"];
  const pairs = items.map((v) => `${rng.pick(keys)}:${rng.pick([" ", " ", "", "  "])}${v}`);
  return `{${sp()}${pairs.join(`,${sp()}`)}${sp()}}`;
}

Deno.test("one-line flow collections and plain words read fast only as the general parser reads them", () => {
  const rng = new Prng(1818);
  let collections = 0, words = 0;
  for (let i = 0; i < 20_000; i++) {
    if (agrees(`k: ${flow(rng, 0)}\n`)) collections++;
  }
  const alphabet = [..."ab1( )._/:@+=,;'\"[]{}&|!<>*%?-#"];
  for (let i = 0; i < 20_000; i++) {
    let v = rng.pick(["a", "7", "(", "has("]);
    for (let j = rng.int(1, 14); j > 0; j--) v += rng.pick(alphabet);
    if (v.includes(" ") && agrees(`k: ${v}\n`)) words++;
  }
  ok(collections > 1_000, `${collections} random flow collections inside the subset`);
  ok(words > 1_000, `${words} random multi-word scalars inside the subset`);
});

Deno.test("the repository's health policies read fast, to the general parser's value", async () => {
  const dir = new URL("../../../policies/", import.meta.url);
  let fast = 0;
  for (const e of Deno.readDirSync(dir)) {
    if (!e.name.endsWith(".yaml")) continue;
    const text = await Deno.readTextFile(new URL(e.name, dir));
    if (agrees(text)) fast++;
  }
  ok(agrees(await Deno.readTextFile(new URL("home-ops.yaml", dir))), "home-ops reads fast");
  ok(fast > 0);
});
