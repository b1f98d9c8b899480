/**
 * Enforces the layer rules of docs/architecture.md with a test rather than a review comment:
 * which folders may import which, and which globals the pure core may not touch.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { dirname, join, normalize, relative } from "node:path";

const ROOT = normalize(join(dirname(new URL(import.meta.url).pathname), ".."));
const SRC = join(ROOT, "src");

function* walk(dir: string): Generator<string> {
  for (const e of Deno.readDirSync(dir)) {
    const p = join(dir, e.name);
    if (e.isDirectory) yield* walk(p);
    else if (e.name.endsWith(".ts")) yield p;
  }
}

/** The layer of a file under src/: domain, ports, engine, report, adapters/<x>, sim, app, cli, main. */
function layerOf(file: string): string {
  const rel = relative(SRC, file).split("/");
  if (rel[0] === "adapters") return `adapters/${rel[1]}`;
  return rel.length === 1 ? "main" : rel[0]!;
}

interface ImportEdge {
  readonly spec: string;
  readonly typeOnly: boolean;
}

function importsOf(text: string): ImportEdge[] {
  const edges: ImportEdge[] = [];
  const re = /(?:^|\n)\s*(import|export)\s+(type\s+)?[^'"]*?from\s+["']([^"']+)["']/g;
  for (const m of text.matchAll(re)) edges.push({ spec: m[3]!, typeOnly: Boolean(m[2]) });
  for (const m of text.matchAll(/import\(\s*["']([^"']+)["']\s*\)/g)) {
    edges.push({ spec: m[1]!, typeOnly: false });
  }
  for (const m of text.matchAll(/(?:^|\n)\s*import\s+["']([^"']+)["']/g)) {
    edges.push({ spec: m[1]!, typeOnly: false });
  }
  return edges;
}

const PURE_THIRD_PARTY = new Set(["zod", "yaml", "@bufbuild/cel", "@bufbuild/protobuf"]);

/** Returns a violation message, or undefined when the edge is allowed. */
function checkEdge(from: string, file: string, edge: ImportEdge): string | undefined {
  const { spec } = edge;
  if (!spec.startsWith(".")) {
    if (["domain", "engine", "report"].includes(from) && !PURE_THIRD_PARTY.has(spec)) {
      return `${from} may not import ${spec}`;
    }
    if (from === "ports" && !edge.typeOnly) return `ports may only import types (${spec})`;
    return undefined;
  }
  const target = layerOf(normalize(join(dirname(file), spec)));
  const allowed: Record<string, (t: string) => boolean> = {
    domain: (t) => t === "domain",
    ports: (t) => t === "domain" || t === "ports",
    engine: (t) => ["domain", "ports", "engine"].includes(t),
    report: (t) => ["domain", "ports", "report"].includes(t),
    sim: (t) => ["domain", "ports", "sim"].includes(t) || t.startsWith("adapters/"),
    app: (t) => t !== "cli" && t !== "main",
  };
  if (from.startsWith("adapters/")) {
    return ["domain", "ports", from].includes(target)
      ? undefined
      : `${from} may not import ${target}`;
  }
  if (from === "ports" && !edge.typeOnly) return `ports may only import types (${spec})`;
  const rule = allowed[from];
  if (rule && !rule(target)) return `${from} may not import ${target}`;
  return undefined;
}

Deno.test("src/ layers import only what docs/architecture.md allows", () => {
  const violations: string[] = [];
  for (const file of walk(SRC)) {
    const from = layerOf(file);
    for (const edge of importsOf(Deno.readTextFileSync(file))) {
      const v = checkEdge(from, file, edge);
      if (v) violations.push(`${relative(ROOT, file)}: ${v}`);
    }
  }
  assertEquals(violations, []);
});

const BANNED = [
  /\bDeno\./,
  /\bfetch\(/,
  /\bDate\.now\(/,
  /new Date\(\)/,
  /\bsetTimeout\(/,
  /\bsetInterval\(/,
  /\bMath\.random\(/,
  /\bprocess\./,
  /\bconsole\./,
];

Deno.test("the pure core (domain, engine, report) touches no I/O, wall clock or randomness", () => {
  const violations: string[] = [];
  for (const file of walk(SRC)) {
    if (!["domain", "engine", "report"].includes(layerOf(file))) continue;
    const lines = Deno.readTextFileSync(file).split("\n");
    lines.forEach((line, i) => {
      const code = line.replace(/\/\/.*$/, "");
      if (code.trim().startsWith("*")) return;
      for (const re of BANNED) {
        if (re.test(code)) violations.push(`${relative(ROOT, file)}:${i + 1}: ${re.source}`);
      }
    });
  }
  assertEquals(violations, []);
});

Deno.test("architecture checker flags a forbidden edge (the rule can fail)", () => {
  const file = join(SRC, "domain", "x.ts");
  assertEquals(
    checkEdge("domain", file, { spec: "../adapters/journal/libsql_journal.ts", typeOnly: false }),
    "domain may not import adapters/journal",
  );
  assertEquals(
    checkEdge("engine", file, { spec: "kysely", typeOnly: false }),
    "engine may not import kysely",
  );
  assertEquals(
    checkEdge("app", join(SRC, "app", "x.ts"), { spec: "../cli/command.ts", typeOnly: true }),
    "app may not import cli",
  );
  assertEquals(
    checkEdge("engine", join(SRC, "engine", "x.ts"), { spec: "../ports/clock.ts", typeOnly: true }),
    undefined,
  );
});
