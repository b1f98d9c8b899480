/**
 * The POSIX path operations the cold-start commands (`cairn plan check`, `cairn plan verify`)
 * and the bound-file reader need, with the results of `node:path` on POSIX. Importing
 * `node:path` starts Deno's Node compatibility layer, a large share of a cold start on a slow
 * machine; these are a few lines each. cairn runs on Linux and macOS (Talos operators' and CI's
 * machines), where `node:path` is `node:path/posix`. test/domain/posix_path_test.ts holds every
 * function equal to node's on generated paths.
 */

/** The path segment separator. */
export const sep = "/";

/** True for a path from the root (`/…`). */
export function isAbsolute(path: string): boolean {
  return path.startsWith("/");
}

/** `path`'s segments with `.` and empty ones dropped and `..` applied (kept above a relative start). */
function segments(path: string, absolute: boolean): string[] {
  const out: string[] = [];
  for (const s of path.split("/")) {
    if (s === "" || s === ".") continue;
    if (s !== "..") out.push(s);
    else if (out.length > 0 && out.at(-1) !== "..") out.pop();
    else if (!absolute) out.push("..");
  }
  return out;
}

/** `path` without `.`, `..` and repeated separators; a trailing separator is kept. */
export function normalize(path: string): string {
  if (path === "") return ".";
  const absolute = isAbsolute(path);
  const trailing = path.endsWith("/");
  const body = segments(path, absolute).join("/");
  if (body === "") return absolute ? "/" : trailing ? "./" : ".";
  return (absolute ? "/" : "") + body + (trailing ? "/" : "");
}

/** The non-empty `paths` joined with separators, normalized. */
export function join(...paths: string[]): string {
  const joined = paths.filter((p) => p !== "").join("/");
  return joined === "" ? "." : normalize(joined);
}

/**
 * The absolute path `paths` name, read right to left until one is absolute, as `node:path`'s
 * `resolve` run in the working directory `cwd` (absolute; passed in, since the domain reads no
 * process state): `cwd` goes first when no path is absolute. No trailing separator (but the root).
 */
export function resolveFrom(cwd: string, ...paths: string[]): string {
  const parts: string[] = [];
  for (const p of [cwd, ...paths].reverse()) {
    if (p === "") continue;
    parts.unshift(p);
    if (isAbsolute(p)) break;
  }
  return "/" + segments(parts.join("/"), true).join("/");
}

/** The directory part of `path` (as `node:path`: `//a` → `//`, `/a//b` → `/a/`). */
export function dirname(path: string): string {
  if (path === "") return ".";
  let end = path.length;
  while (end > 1 && path[end - 1] === "/") end--;
  const slash = path.lastIndexOf("/", end - 1);
  if (slash === -1) return ".";
  if (slash === 0) return "/";
  if (slash === 1 && path[0] === "/") return "//";
  return path.slice(0, slash);
}

/** The last segment of `path`, trailing separators ignored (`""` for the root). */
export function basename(path: string): string {
  let end = path.length;
  while (end > 0 && path[end - 1] === "/") end--;
  return path.slice(path.lastIndexOf("/", end - 1) + 1, end);
}

/**
 * The relative path from `from` to `to`, both resolved in the working directory `cwd` first (as
 * `node:path`'s `relative` run there); `""` when they are the same.
 */
export function relativeFrom(cwd: string, from: string, to: string): string {
  const a = segments(resolveFrom(cwd, from), true);
  const b = segments(resolveFrom(cwd, to), true);
  let common = 0;
  while (common < a.length && common < b.length && a[common] === b[common]) common++;
  return [...a.slice(common).map(() => ".."), ...b.slice(common)].join("/");
}
