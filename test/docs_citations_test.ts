/**
 * Every document the code cites is in the repository and every citation opens: a
 * `docs/<file>.md#<anchor>` in src/ or test/ names an existing file and one of its headings, and
 * the links between the documents in docs/ resolve the same way. Citations of documents that are
 * not in the repository ("ER §5.2", "seed 000 §5", "design §4") are refused.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { dirname, join, normalize, relative } from "node:path";

const ROOT = normalize(join(dirname(new URL(import.meta.url).pathname), ".."));
/** This file names bad citations on purpose. */
const SELF = new URL(import.meta.url).pathname;

function* files(dir: string, ext: string): Generator<string> {
  for (const e of Deno.readDirSync(dir)) {
    const p = join(dir, e.name);
    if (e.isDirectory) yield* files(p, ext);
    else if (e.name.endsWith(ext)) yield p;
  }
}

/** GitHub's heading anchor: lower case, punctuation dropped, spaces as hyphens. */
export function slug(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, "").replace(/ /g, "-");
}

const anchorCache = new Map<string, Set<string> | undefined>();

/** The anchors of a markdown file's headings, or undefined when the file does not exist. */
function anchorsOf(path: string): Set<string> | undefined {
  if (!anchorCache.has(path)) {
    let text: string | undefined;
    try {
      text = Deno.readTextFileSync(path);
    } catch {
      text = undefined;
    }
    const inFence = { on: false };
    const anchors = text === undefined ? undefined : new Set(
      text.split("\n").filter((l) => {
        if (l.startsWith("```")) inFence.on = !inFence.on;
        return !inFence.on && /^#{1,6} /.test(l);
      }).map((l) => slug(l.replace(/^#+ /, ""))),
    );
    anchorCache.set(path, anchors);
  }
  return anchorCache.get(path);
}

/** Checks one citation of `file#anchor` (a path relative to the root) made at `where`. */
function check(where: string, file: string, anchor: string | undefined): string | undefined {
  const anchors = anchorsOf(join(ROOT, file));
  if (!anchors) return `${where}: ${file} does not exist`;
  if (anchor !== undefined && !anchors.has(anchor)) return `${where}: ${file} has no #${anchor}`;
  return undefined;
}

Deno.test("every docs/…md#anchor cited in src/ and test/ opens a heading that exists", () => {
  const bad: string[] = [];
  let cited = 0;
  for (const dir of ["src", "test"]) {
    for (const f of files(join(ROOT, dir), ".ts")) {
      if (f === SELF) continue;
      Deno.readTextFileSync(f).split("\n").forEach((line, i) => {
        for (const m of line.matchAll(/\bdocs\/([\w./-]+?\.md)(?:#([\w-]+))?/g)) {
          cited++;
          const v = check(`${relative(ROOT, f)}:${i + 1}`, `docs/${m[1]}`, m[2]);
          if (v) bad.push(v);
        }
      });
    }
  }
  assertEquals(bad, []);
  assert(cited > 20, `only ${cited} citations found: the scan is broken`);
});

Deno.test("links between the documents in docs/ resolve to a file and a heading", () => {
  const bad: string[] = [];
  for (const f of files(join(ROOT, "docs"), ".md")) {
    const rel = relative(ROOT, f);
    Deno.readTextFileSync(f).split("\n").forEach((line, i) => {
      for (const m of line.matchAll(/\]\(([\w./-]*?\.md)?(?:#([\w-]+))?\)/g)) {
        if (m[1] === undefined && m[2] === undefined) continue;
        const target = m[1] ? relative(ROOT, join(dirname(f), m[1])) : rel;
        if (!target.startsWith("docs/")) continue;
        const v = check(`${rel}:${i + 1}`, target, m[2]);
        if (v) bad.push(v);
      }
    });
  }
  assertEquals(bad, []);
});

Deno.test("the code cites no document outside the repository (ER §, seed §, design §)", () => {
  const bad: string[] = [];
  for (const dir of ["src", "test"]) {
    for (const f of files(join(ROOT, dir), ".ts")) {
      if (f === SELF) continue;
      Deno.readTextFileSync(f).split("\n").forEach((line, i) => {
        if (/\b(ER|[Ss]eed(?: \d+)?|[Dd]esign) §/.test(line)) {
          bad.push(`${relative(ROOT, f)}:${i + 1}`);
        }
      });
    }
  }
  assertEquals(
    bad,
    [],
    "cite the repository's own documents instead: docs/operation-model.md#…, " +
      "docs/safeguards.md#…, docs/recovery.md#…, docs/plans.md#…, docs/architecture.md#…",
  );
});

Deno.test("the checker refuses a missing file and a missing heading", () => {
  assertEquals(slug("Accounting and the settle floor"), "accounting-and-the-settle-floor");
  assertEquals(slug("`cairn recover`: decisions"), "cairn-recover-decisions");
  assertEquals(
    check("x.ts:1", "docs/no-such-file.md", "a"),
    "x.ts:1: docs/no-such-file.md does not exist",
  );
  assertEquals(
    check("x.ts:1", "docs/operation-model.md", "no-such-heading"),
    "x.ts:1: docs/operation-model.md has no #no-such-heading",
  );
  assertEquals(check("x.ts:1", "docs/operation-model.md", "comparisons"), undefined);
});

Deno.test("docs/safeguards.md lists the code's 26 rows with the same numbers, ids and placement", async () => {
  const { SAFEGUARDS } = await import("../src/domain/safeguards/table.ts");
  const text = Deno.readTextFileSync(join(ROOT, "docs", "safeguards.md"));
  const rows = [...text.matchAll(/^\| (\d+) +\| `(\w+)` +\|[^|]*\| ([PEO ]+?) +\|/gm)]
    .map((m) => `${m[1]} ${m[2]} ${m[3]!.replace(/ /g, "")}`);
  assertEquals(
    rows,
    SAFEGUARDS.map((s, i) => `${i + 1} ${s.id} ${s.placement.join("")}`),
  );
});
