/**
 * Loads and validates tools/mutants/*.json. Every problem is reported against the mutant (or the
 * file) it belongs to, and a broken mutant fails the run: a mutant whose `find` text no longer
 * occurs exactly once is stale (the code moved under it) and would otherwise test nothing.
 */
import { join } from "node:path";

export interface Mutant {
  readonly name: string;
  /** Repository-relative path of the source file the mutant edits. */
  readonly file: string;
  readonly find: string;
  readonly replace: string;
  /** Repository-relative test files that must go red under the mutant. */
  readonly tests: readonly string[];
  /** The guard the edit removes (printed when the mutant survives). */
  readonly why: string;
  /** Which mutants file declared it, e.g. tools/mutants/core.json. */
  readonly source: string;
}

export interface MutantProblem {
  readonly name: string;
  readonly source: string;
  readonly problem: string;
}

export const MUTANTS_DIR = "tools/mutants";
const FIELDS = ["name", "file", "find", "replace", "tests", "why"] as const;
const NAME = /^[a-z0-9]+(-[a-z0-9]+)*$/;

export async function loadMutants(
  root: string,
): Promise<{ mutants: Mutant[]; problems: MutantProblem[] }> {
  const files: string[] = [];
  try {
    for await (const e of Deno.readDir(join(root, MUTANTS_DIR))) {
      if (e.isFile && e.name.endsWith(".json")) files.push(e.name);
    }
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  files.sort();
  const mutants: Mutant[] = [];
  const problems: MutantProblem[] = [];
  const seen = new Map<string, string>();
  for (const f of files) {
    const source = `${MUTANTS_DIR}/${f}`;
    let doc: unknown;
    try {
      doc = JSON.parse(await Deno.readTextFile(join(root, source)));
    } catch (e) {
      problems.push({ name: f, source, problem: `not valid JSON: ${(e as Error).message}` });
      continue;
    }
    if (!Array.isArray(doc)) {
      problems.push({ name: f, source, problem: "must be a JSON array of mutants" });
      continue;
    }
    for (const [i, entry] of doc.entries()) {
      const r = await validateEntry(root, entry, `${f}[${i}]`, source);
      if ("problem" in r) {
        problems.push(r);
        continue;
      }
      const first = seen.get(r.name);
      if (first !== undefined) {
        problems.push({
          name: r.name,
          source,
          problem: `duplicate name (first declared in ${first})`,
        });
        continue;
      }
      seen.set(r.name, source);
      mutants.push(r);
    }
  }
  return { mutants, problems };
}

async function validateEntry(
  root: string,
  entry: unknown,
  where: string,
  source: string,
): Promise<Mutant | MutantProblem> {
  if (typeof entry !== "object" || entry === null || Array.isArray(entry)) {
    return { name: where, source, problem: "a mutant must be a JSON object" };
  }
  const o = entry as Record<string, unknown>;
  const name = typeof o.name === "string" && o.name !== "" ? o.name : where;
  const bad = (problem: string): MutantProblem => ({ name, source, problem });
  const unknown = Object.keys(o).filter((k) => !(FIELDS as readonly string[]).includes(k));
  if (unknown.length > 0) return bad(`unknown field(s) ${unknown.join(", ")}`);
  for (const k of ["name", "file", "find", "replace", "why"] as const) {
    if (typeof o[k] !== "string") return bad(`field ${k} must be a string`);
  }
  const { file, find, replace, why } = o as Record<string, string>;
  if (!NAME.test(name)) return bad("name must be kebab-case (a-z, 0-9, single dashes)");
  if (why!.trim() === "") return bad("why must say which guard the mutant removes");
  if (find === "") return bad("find must not be empty");
  if (find === replace) return bad("replace equals find: the mutant changes nothing");
  if (
    !Array.isArray(o.tests) || o.tests.length === 0 || o.tests.some((t) => typeof t !== "string")
  ) {
    return bad("tests must be a non-empty array of test file paths");
  }
  const tests = o.tests as string[];
  for (const p of [file!, ...tests]) {
    if (p.startsWith("/") || p.split("/").includes("..")) {
      return bad(`${p}: paths are relative to the repository root and stay inside it`);
    }
  }
  const text = await readIfFile(join(root, file!));
  if (text === undefined) return bad(`file ${file} does not exist`);
  for (const t of tests) {
    if (!t.endsWith(".ts")) return bad(`test ${t} is not a .ts test file`);
    if (await readIfFile(join(root, t)) === undefined) return bad(`test ${t} does not exist`);
  }
  const n = occurrences(text, find!);
  if (n === 0) return bad(`find text no longer occurs in ${file} (stale: the code changed)`);
  if (n > 1) return bad(`find text occurs ${n} times in ${file}; it must occur exactly once`);
  return { name, file: file!, find: find!, replace: replace!, tests, why: why!, source };
}

/** Non-overlapping occurrences of `needle` in `haystack`. */
export function occurrences(haystack: string, needle: string): number {
  let n = 0;
  for (
    let i = haystack.indexOf(needle);
    i !== -1;
    i = haystack.indexOf(needle, i + needle.length)
  ) n++;
  return n;
}

async function readIfFile(path: string): Promise<string | undefined> {
  try {
    const st = await Deno.stat(path);
    return st.isFile ? await Deno.readTextFile(path) : undefined;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw e;
  }
}
