/**
 * Enforces the layer rules of docs/architecture.md with a test rather than a review comment:
 * which folders may import which (on the module graph Deno resolves, test/_helpers/layers.ts),
 * and which globals the pure core may not touch.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { dirname, join, normalize, relative } from "node:path";
import { pathToFileURL } from "node:url";
import {
  checkDynamicSites,
  checkGraph,
  dynamicImportSites,
  type Edge,
  layerOf,
  moduleGraph,
} from "./_helpers/layers.ts";

const ROOT = normalize(join(dirname(new URL(import.meta.url).pathname), ".."));
const SRC = join(ROOT, "src");

function* walk(dir: string): Generator<string> {
  for (const e of Deno.readDirSync(dir)) {
    const p = join(dir, e.name);
    if (e.isDirectory) yield* walk(p);
    else if (e.name.endsWith(".ts")) yield p;
  }
}

Deno.test("src/ layers import only what docs/architecture.md allows (Deno's module graph)", async () => {
  const graph = await moduleGraph(ROOT);
  assertEquals([...graph.keys()].length, [...walk(SRC)].length, "every src module is in the graph");
  assertEquals(checkGraph(ROOT, graph), []);
  assertEquals(checkDynamicSites(ROOT, graph), []);
});

Deno.test("the layer test fails on a deliberately wrong import (static, dynamic, computed)", async () => {
  // A throwaway tree with the repository's layout: each file breaks the rule one way.
  const root = await Deno.makeTempDir({ prefix: "cairn-layers-bad-" });
  try {
    const write = async (rel: string, text: string) => {
      await Deno.mkdir(dirname(join(root, rel)), { recursive: true });
      await Deno.writeTextFile(join(root, rel), text);
    };
    await write("src/adapters/kube/client.ts", "export const client = 1;\n");
    await write("src/adapters/kube/watch.ts", "export const watch = 1;\n");
    await write("src/cli/command.ts", "export const frame = 1;\n");
    await write("src/domain/ok.ts", "export const ok = 1;\n");
    await write(
      "src/engine/step.ts",
      '// import("../adapters/kube/client.ts") in a comment is not an import.\n' +
        'import { ok } from "../domain/ok.ts";\n' +
        'import { client } from "../adapters/kube/client.ts";\n' +
        "export const step = ok + client;\n",
    );
    await write(
      "src/report/render.ts",
      'export const load = () => import("../adapters/kube/client.ts");\n' +
        'const name = "../cli/command.ts";\n' +
        "export const computed = () => import(name);\n",
    );
    await write("src/app/wiring.ts", 'export { frame } from "../cli/command.ts";\n');
    await write(
      "src/cli/status.ts",
      'import { client } from "../adapters/kube/client.ts";\n' +
        'export const open = () => import("../adapters/kube/watch.ts");\n' +
        "export const c = client;\n",
    );
    const graph = await moduleGraph(root);
    assertEquals(checkGraph(root, graph), [
      "src/app/wiring.ts:1:23: app may not import cli",
      "src/cli/status.ts:1:24: cli may not import adapters/kube (wire it in app/)",
      "src/cli/status.ts:2:34: cli may not import adapters/kube (wire it in app/)",
      "src/engine/step.ts:3:24: engine may not import adapters/kube",
      "src/report/render.ts:1:34: report may not import adapters/kube",
    ]);
    assertEquals(checkDynamicSites(root, graph), [
      "src/report/render.ts:3:38: computed import() the graph cannot see",
    ]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("the checker flags a forbidden edge of a synthetic graph (engine → adapters)", () => {
  const edge = (spec: string, target: string, typeOnly = false): Edge => ({
    spec,
    target,
    typeOnly,
    dynamic: false,
    line: 0,
    character: 0,
  });
  const file = (rel: string) => pathToFileURL(join(ROOT, rel)).href;
  const graph = new Map([
    ["src/engine/x.ts", [
      edge("../adapters/journal/libsql_journal.ts", file("src/adapters/journal/libsql_journal.ts")),
      edge("kysely", "npm:kysely@0.29.9"),
      edge("../ports/clock.ts", file("src/ports/clock.ts"), true),
    ]],
    ["src/ports/y.ts", [edge("../domain/version.ts", file("src/domain/version.ts"))]],
    ["src/app/z.ts", [edge("../engine/x.ts", file("src/engine/x.ts"))]],
  ]);
  assertEquals(checkGraph(ROOT, graph), [
    "src/engine/x.ts:1:1: engine may not import adapters/journal",
    "src/engine/x.ts:1:1: engine may not import kysely",
    "src/ports/y.ts:1:1: ports may only import types (../domain/version.ts)",
  ]);
});

Deno.test("the import() lexer skips comments, strings and regular expressions", () => {
  const text = [
    '// await import("./a.ts")',
    '/* import("./b.ts") */ const s = "import(\'./c.ts\')";',
    "const re = /import\\(\\s*[\"'`]/;",
    'const m = await import("./d.ts");',
    "const n = await import(`./e.ts`), c = await import(url);",
  ].join("\n");
  assertEquals(dynamicImportSites(text), [
    { line: 3, character: 23, literal: "./d.ts" },
    { line: 4, character: 23, literal: "./e.ts" },
    { line: 4, character: 51 },
  ]);
});

const BANNED = [
  /\bDeno\./,
  /\bfetch\(/,
  /\bDate\.now\(/,
  /new Date\(\)/,
  /\bsetTimeout\(/,
  /\bsetInterval\(/,
  /\bMath\.random\(/,
  /\brandom(Bytes|UUID|Int|Fill)\b/,
  /\bgetRandomValues\(/,
  /\bprocess\./,
  /\bconsole\./,
];

/**
 * Named exceptions to BANNED, one pattern for one file each, with why the file stays pure.
 * domain/yaml_general.ts loads the yaml package on first use through the global `process`'s
 * synchronous require: loading the library's code, as a static import would, without reading,
 * writing, timing or drawing anything.
 */
const BANNED_EXCEPTIONS: Readonly<Record<string, RegExp>> = {
  "src/domain/yaml_general.ts": /\bprocess\./,
};

Deno.test("the pure core (domain, engine, report) touches no I/O, wall clock or randomness", () => {
  const violations: string[] = [];
  for (const file of walk(SRC)) {
    const rel = relative(ROOT, file);
    if (!["domain", "engine", "report"].includes(layerOf(rel))) continue;
    const lines = Deno.readTextFileSync(file).split("\n");
    lines.forEach((line, i) => {
      const code = line.replace(/\/\/.*$/, "");
      if (code.trim().startsWith("*")) return;
      for (const re of BANNED) {
        if (BANNED_EXCEPTIONS[rel]?.source === re.source) continue;
        if (re.test(code)) violations.push(`${rel}:${i + 1}: ${re.source}`);
      }
    });
  }
  assertEquals(violations, []);
});

Deno.test("docs/architecture.md walks a plan from git to report in at most five hops, none in cli/", () => {
  const text = Deno.readTextFileSync(join(ROOT, "docs", "architecture.md"));
  const start = text.indexOf("## From git to report");
  assert(start >= 0, "the walk's section is missing");
  const section = text.slice(start, text.indexOf("\n## ", start + 1));
  // The hops are the numbered items; each may run over several lines until the next one.
  const hops = section.split(/\n(?=\d+\. \*\*)/).slice(1).map((h) => h.split("\n\n")[0]!);
  assert(hops.length >= 1 && hops.length <= 5, `${hops.length} hops`);
  for (const hop of hops) assert(!hop.includes("cli/"), `a hop climbs back into cli/: ${hop}`);
  // Every file the walk names by its path exists: the walk is kept current with the code.
  const named = [...section.matchAll(/`((?:[a-z_]+\/)+[a-z_]+\.ts)`/g)].map((m) => m[1]!);
  assert(named.length > 10, "the walk names too few files to be a walk");
  // Paths are relative to src/ (`engine/…`) or, for tools and tests, to the repository root.
  assertEquals(named.filter((f) => !exists(join(SRC, f)) && !exists(join(ROOT, f))), []);
});

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

Deno.test("zod's runtime is reached only through src/domain/zod.ts, which sets its parsing mode once", () => {
  // A module importing `z` from "zod" itself would parse with compiled parsers or not depending
  // on the import order; every schema goes through the one module that configures zod.
  const direct = [...walk(SRC)]
    .map((file) => relative(ROOT, file))
    .filter((rel) => rel !== "src/domain/zod.ts")
    .filter((rel) =>
      /^import\s+(?!type\b)[^;]*from\s+"zod(\/[^"]*)?";/m.test(
        Deno.readTextFileSync(join(ROOT, rel)),
      )
    );
  assertEquals(direct, []);
});
