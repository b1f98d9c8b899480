/**
 * The shape of a path a plan binds (catalogue, health policy, evidence manifest, machine
 * config): repository-relative, and nothing that could name a file outside the repository or
 * confuse the reader. Pure; the adapter that opens the file (`adapters/repo/bound_file_reader.ts`)
 * additionally refuses symlinks, non-regular files and oversized files on disk.
 */

/** Longest bound path accepted. */
export const MAX_BOUND_PATH = 512;

/**
 * Why `path` is not an acceptable bound path, or `undefined` when it is: relative (no leading
 * `/`), no `..`, `.` or empty segments, no backslashes (a second separator on some systems), no
 * control characters.
 *
 * @example
 * ```ts
 * import { boundPathProblem } from "./bound_path.ts";
 * boundPathProblem("catalogue/talos.yaml"); // undefined
 * boundPathProblem("../../etc/passwd"); // "has a '..' segment, which could leave the repository"
 * ```
 */
export function boundPathProblem(path: string): string | undefined {
  if (path.length === 0) return "is empty";
  if (path.length > MAX_BOUND_PATH) return `is longer than ${MAX_BOUND_PATH} characters`;
  if (path.startsWith("/")) return "is absolute; bound paths are repository-relative";
  for (let i = 0; i < path.length; i++) {
    const c = path.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return "contains a control character";
  }
  if (path.includes("\\")) return "contains a backslash";
  const segments = path.split("/");
  if (segments.includes("..")) return "has a '..' segment, which could leave the repository";
  if (segments.some((s) => s === "" || s === ".")) return "has an empty or '.' segment";
  return undefined;
}
