import { deepStrictEqual as assertEquals } from "node:assert/strict";
import * as node from "node:path/posix";
import * as mine from "../../src/domain/posix_path.ts";
import { seededRandom } from "../../src/sim/seeded_random.ts";

/** node:path resolves in the process's working directory; posix_path is told it. */
const CWD = Deno.cwd();

const PARTS = ["", "/", "//", ".", "..", "a", "b", "plans", "x.yaml", "..a", ".b", "a."];

/** A small deterministic generator, so a failure names its seed. */
const rng = seededRandom;

/** Paths of up to 6 parts, joined with separators or run together. */
function paths(seed: number, count: number): string[] {
  const next = rng(seed);
  return Array.from({ length: count }, () => {
    let p = "";
    for (let n = Math.floor(next() * 7); n > 0; n--) {
      p += PARTS[Math.floor(next() * PARTS.length)]! + (next() < 0.6 ? "/" : "");
    }
    return p;
  });
}

Deno.test("posix_path: each function answers what node:path answers on POSIX", () => {
  const list = [...paths(1, 4000), "", "/", "//", "///", "//a", "/a//b", "a/", "./", "../.."];
  for (const p of list) {
    assertEquals(mine.isAbsolute(p), node.isAbsolute(p), `isAbsolute ${JSON.stringify(p)}`);
    assertEquals(mine.normalize(p), node.normalize(p), `normalize ${JSON.stringify(p)}`);
    assertEquals(mine.dirname(p), node.dirname(p), `dirname ${JSON.stringify(p)}`);
    assertEquals(mine.basename(p), node.basename(p), `basename ${JSON.stringify(p)}`);
    assertEquals(mine.resolveFrom(CWD, p), node.resolve(p), `resolve ${JSON.stringify(p)}`);
  }
  const pairs = paths(2, 4000);
  for (let i = 0; i + 1 < pairs.length; i += 2) {
    const [a, b] = [pairs[i]!, pairs[i + 1]!];
    const what = `${JSON.stringify(a)}, ${JSON.stringify(b)}`;
    assertEquals(mine.join(a, b), node.join(a, b), `join ${what}`);
    assertEquals(mine.join(a, b, a), node.join(a, b, a), `join3 ${what}`);
    assertEquals(mine.resolveFrom(CWD, a, b), node.resolve(a, b), `resolve ${what}`);
    assertEquals(mine.resolveFrom(CWD, "/r", a, b), node.resolve("/r", a, b), `resolve /r ${what}`);
    assertEquals(mine.relativeFrom(CWD, a, b), node.relative(a, b), `relative ${what}`);
    assertEquals(mine.relativeFrom(CWD, `/${a}`, `/${b}`), node.relative(`/${a}`, `/${b}`), what);
  }
  assertEquals(mine.join(), node.join());
  assertEquals(mine.resolveFrom(CWD), node.resolve());
  assertEquals(mine.sep, node.sep);
});
