/**
 * The layer rule of docs/architecture.md, checked on the module graph Deno itself resolves
 * (`deno info --json`): static imports, type-only imports, re-exports, string-literal dynamic
 * imports and `import("…").T` type references all come from Deno's parser, so a comment or a
 * string that mentions `import` never counts and a re-formatted import is never missed.
 *
 * `deno info` cannot resolve a computed dynamic import (`import(url)`), so every `import(` token
 * in the code (found by a small lexer that skips comments, strings and regular expressions) must
 * match a dynamic dependency Deno reported at that exact position; a token that matches none is a
 * computed import and is a violation unless the file is listed in `COMPUTED_IMPORTS` with why.
 * The lexer is checked against Deno in both directions: a literal dynamic import Deno reports
 * that the lexer did not find is a violation too.
 */
import { join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** One import edge, as Deno resolved it. */
export interface Edge {
  /** The specifier as written. */
  readonly spec: string;
  /** The resolved target: a `file:` URL, `npm:…`, `node:…`. */
  readonly target: string;
  /** No value is imported (`import type`, `import("…").T`). */
  readonly typeOnly: boolean;
  readonly dynamic: boolean;
  /** Zero-based position of the specifier in the importing file. */
  readonly line: number;
  readonly character: number;
}

/** The modules under `src/` and their edges, keyed by path relative to the root (`src/…`). */
export type ModuleGraph = ReadonlyMap<string, readonly Edge[]>;

/** Files allowed a computed `import(…)`, with why the edge cannot climb a layer. */
export const COMPUTED_IMPORTS: Readonly<Record<string, string>> = {
  "src/cli/registry.ts":
    'lazy("./x.ts") loads the command modules of src/cli/ (cli may import everything); a ' +
    "literal specifier would put every command's graph into each cold start",
};

/** The layer of `src/…`: domain, ports, engine, report, adapters/<x>, sim, app, cli, main. */
export function layerOf(rel: string): string {
  const parts = rel.split("/");
  if (parts[0] !== "src") return "outside";
  if (parts[1] === "adapters") return `adapters/${parts[2]}`;
  return parts.length === 2 ? "main" : parts[1]!;
}

/** Third-party packages the pure core may use: parsers and validators without effects. */
const PURE_THIRD_PARTY = new Set(["zod", "yaml", "@bufbuild/cel", "@bufbuild/protobuf"]);

/**
 * Node built-ins single pure-core files may import, each with why it stays pure. Hashing is
 * deterministic computation; the random half of node:crypto is banned by the globals test.
 */
export const PURE_BUILTIN_IMPORTS: Readonly<Record<string, { spec: string; why: string }>> = {
  "src/domain/plan/digest_sync.ts": {
    spec: "node:crypto",
    why: "createHash is synchronous, deterministic SHA-256 (WebCrypto's digest hops through a " +
      "worker: about 90 µs a call against 1.5 µs)",
  },
};

/** Which layers a layer may import (module files under src/). Missing: any. */
const MAY_IMPORT: Readonly<Record<string, (target: string, from: string) => boolean>> = {
  domain: (t) => t === "domain",
  ports: (t) => t === "domain" || t === "ports",
  engine: (t) => ["domain", "ports", "engine"].includes(t),
  report: (t) => ["domain", "ports", "report"].includes(t),
  sim: (t) => ["domain", "ports", "sim"].includes(t) || t.startsWith("adapters/"),
  app: (t) => t !== "cli" && t !== "main",
};

/**
 * cli/ holds commands only: what they wire (adapters, clocks, the journal) lives in app/. The
 * files below may still import an adapter, each with why; every other cli file may not.
 */
export const CLI_ADAPTER_IMPORTS: Readonly<Record<string, string>> = {
  "src/cli/phase_output.ts":
    "the redrawn status line (adapters/terminal/progress) is the CLI's own display, chosen by " +
    "io.tty; it renders, it wires nothing",
};

/** Checks one edge of `from` (a `src/…` path); returns the violation or undefined. */
export function checkEdge(root: string, from: string, e: Edge): string | undefined {
  const layer = layerOf(from);
  if (!e.target.startsWith("file:")) {
    // A package or a Node built-in.
    const builtin = PURE_BUILTIN_IMPORTS[from];
    if (
      ["domain", "engine", "report"].includes(layer) && !PURE_THIRD_PARTY.has(e.spec) &&
      builtin?.spec !== e.spec
    ) {
      return `${layer} may not import ${e.spec}`;
    }
    if (layer === "ports" && !e.typeOnly) return `ports may only import types (${e.spec})`;
    return undefined;
  }
  const target = layerOf(relative(root, fileURLToPath(e.target)).split("\\").join("/"));
  if (layer === "ports" && !e.typeOnly) return `ports may only import types (${e.spec})`;
  if (layer.startsWith("adapters/")) {
    return ["domain", "ports", layer].includes(target)
      ? undefined
      : `${layer} may not import ${target}`;
  }
  if (layer === "cli" && target.startsWith("adapters/") && !(from in CLI_ADAPTER_IMPORTS)) {
    return `cli may not import ${target} (wire it in app/)`;
  }
  const rule = MAY_IMPORT[layer];
  if (rule && !rule(target, layer)) return `${layer} may not import ${target}`;
  return undefined;
}

/** Every violation of the rule in `graph`, as `file:line:column: message`. */
export function checkGraph(root: string, graph: ModuleGraph): string[] {
  const out: string[] = [];
  for (const [file, edges] of graph) {
    for (const e of edges) {
      const v = checkEdge(root, file, e);
      if (v) out.push(`${file}:${e.line + 1}:${e.character + 1}: ${v}`);
    }
  }
  return out.sort();
}

function* tsFiles(dir: string): Generator<string> {
  for (const e of [...Deno.readDirSync(dir)].sort((a, b) => a.name.localeCompare(b.name))) {
    const p = join(dir, e.name);
    if (e.isDirectory) yield* tsFiles(p);
    else if (e.name.endsWith(".ts")) yield p;
  }
}

interface InfoDependency {
  readonly specifier: string;
  readonly isDynamic?: boolean;
  readonly code?: { readonly specifier?: string; readonly span: Span };
  readonly type?: { readonly specifier?: string; readonly span: Span };
}
interface Span {
  readonly start: { readonly line: number; readonly character: number };
}

/**
 * The module graph of every `.ts` file under `<root>/src`, from one `deno info --json` over a
 * generated entry that imports them all (so modules reached only through computed imports, such
 * as the commands, are in it too).
 */
export async function moduleGraph(root: string, deno = Deno.execPath()): Promise<ModuleGraph> {
  const files = [...tsFiles(join(root, "src"))];
  const dir = await Deno.makeTempDir({ prefix: "cairn-layers-" });
  try {
    const entry = join(dir, "entry.ts");
    await Deno.writeTextFile(
      entry,
      files.map((f) => `import ${JSON.stringify(pathToFileURL(f).href)};\n`).join(""),
    );
    const r = await new Deno.Command(deno, {
      args: ["info", "--json", entry],
      cwd: root,
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!r.success) throw new Error(`deno info failed: ${new TextDecoder().decode(r.stderr)}`);
    const info = JSON.parse(new TextDecoder().decode(r.stdout)) as {
      modules: { specifier: string; dependencies?: InfoDependency[] }[];
    };
    const graph = new Map<string, Edge[]>();
    for (const m of info.modules) {
      if (!m.specifier.startsWith("file:")) continue;
      const rel = relative(root, fileURLToPath(m.specifier)).split("\\").join("/");
      if (!rel.startsWith("src/")) continue;
      graph.set(rel, (m.dependencies ?? []).flatMap((d) => edgesOf(d)));
    }
    return graph;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function edgesOf(d: InfoDependency): Edge[] {
  // A specifier used both as a value and as a type is one edge with `code` and `type`; Deno
  // merges repeated imports of one specifier, keeping the first span of each kind.
  const out: Edge[] = [];
  const base = { spec: d.specifier, dynamic: false };
  if (d.code) {
    out.push({
      ...base,
      dynamic: d.isDynamic === true,
      target: d.code.specifier ?? d.specifier,
      typeOnly: false,
      ...d.code.span.start,
    });
  }
  if (d.type) {
    out.push({
      ...base,
      target: d.type.specifier ?? d.specifier,
      typeOnly: !d.code,
      ...d.type.span.start,
    });
  }
  return out;
}

/** Where an `import(` argument starts (zero-based), and its specifier when it is a literal. */
export interface ImportSite {
  readonly line: number;
  readonly character: number;
  readonly literal?: string;
}

/** Every `import(` in `text` outside comments, strings and regular expressions. */
export function dynamicImportSites(text: string): ImportSite[] {
  const sites: ImportSite[] = [];
  let i = 0;
  let lastSignificant = "";
  const n = text.length;
  const skipString = (q: string) => {
    i++;
    while (i < n && text[i] !== q) {
      if (text[i] === "\\") i++;
      else if (q === "`" && text[i] === "$" && text[i + 1] === "{") skipBraces();
      i++;
    }
    i++;
  };
  const skipBraces = () => {
    // Inside `${…}` of a template: skip to the matching brace, honouring nested strings.
    i += 2;
    let depth = 1;
    while (i < n && depth > 0) {
      const c = text[i]!;
      if (c === '"' || c === "'" || c === "`") {
        skipString(c);
        continue;
      }
      if (c === "{") depth++;
      if (c === "}") depth--;
      if (depth > 0) i++;
    }
  };
  while (i < n) {
    const c = text[i]!;
    if (c === "/" && text[i + 1] === "/") {
      while (i < n && text[i] !== "\n") i++;
      continue;
    }
    if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      i = end < 0 ? n : end + 2;
      continue;
    }
    if (c === '"' || c === "'" || c === "`") {
      skipString(c);
      lastSignificant = "a";
      continue;
    }
    if (c === "/" && (lastSignificant === "" || "(,=:[!&|?{};+-*%<>~^".includes(lastSignificant))) {
      // A regular expression literal: skip it (its body may hold quotes).
      i++;
      let inClass = false;
      while (i < n && (inClass || text[i] !== "/")) {
        if (text[i] === "\\") i++;
        else if (text[i] === "[") inClass = true;
        else if (text[i] === "]") inClass = false;
        i++;
      }
      i++;
      lastSignificant = "a";
      continue;
    }
    // `require(` too: Deno reports a createRequire call's literal argument as a dynamic edge.
    const keyword = ["import", "require"].find((k) => text.startsWith(k, i));
    if (
      keyword && !/[\w$.]/.test(text[i - 1] ?? "") && !/[\w$]/.test(text[i + keyword.length] ?? "")
    ) {
      let j = i + keyword.length;
      while (j < n && /\s/.test(text[j]!)) j++;
      if (text[j] === "(") {
        j++;
        while (j < n && /\s/.test(text[j]!)) j++;
        const before = text.slice(0, j);
        const line = before.split("\n").length - 1;
        const character = j - (before.lastIndexOf("\n") + 1);
        const lit = /^(["'`])([^"'`\\$]*)\1\s*\)/.exec(text.slice(j, j + 300));
        sites.push({ line, character, ...(lit ? { literal: lit[2]! } : {}) });
      }
      i += keyword.length;
      lastSignificant = "a";
      continue;
    }
    if (!/\s/.test(c)) lastSignificant = /[\w$]/.test(c) ? "a" : c;
    i++;
  }
  return sites;
}

/**
 * Cross-checks the lexer's `import(` sites with Deno's edges: a site whose argument is not a
 * string literal is a computed import the graph cannot see (allowed only in `COMPUTED_IMPORTS`);
 * a literal site must be one of Deno's edges of that file; a dynamic edge Deno reports where the
 * lexer saw no `import(` means the lexer is wrong, and is reported so the rule never weakens.
 */
export function checkDynamicSites(root: string, graph: ModuleGraph): string[] {
  const out: string[] = [];
  const at = (file: string, p: { line: number; character: number }) =>
    `${file}:${p.line + 1}:${p.character + 1}`;
  for (const [file, edges] of graph) {
    const sites = dynamicImportSites(Deno.readTextFileSync(join(root, file)));
    const specs = new Set(edges.map((e) => e.spec));
    for (const s of sites) {
      if (s.literal === undefined) {
        if (!COMPUTED_IMPORTS[file]) {
          out.push(`${at(file, s)}: computed import() the graph cannot see`);
        }
      } else if (!specs.has(s.literal)) {
        out.push(`${at(file, s)}: import("${s.literal}") is not in Deno's graph`);
      }
    }
    const found = new Set(sites.map((s) => `${s.line}:${s.character}`));
    for (const e of edges.filter((e) => e.dynamic)) {
      if (!found.has(`${e.line}:${e.character}`)) {
        out.push(`${at(file, e)}: dynamic import the lexer missed`);
      }
    }
  }
  return out.sort();
}
