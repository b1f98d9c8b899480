/** Parsers for git's machine-readable outputs (`-z` listings) and the tree entries they name. */

/** One entry of a tree, as `git ls-tree --long` would print it (`object_reader.ts` parses trees). */
export interface TreeEntry {
  readonly mode: string;
  readonly type: string;
  readonly oid: string;
  /** Size in bytes (`-1` for trees and submodules). */
  readonly size: number;
  /** Raw path bytes decoded leniently (invalid UTF-8 becomes U+FFFD). */
  readonly path: string;
  /** False when the path bytes were not valid UTF-8. */
  readonly utf8: boolean;
}

const lenient = new TextDecoder();
const strict = new TextDecoder("utf-8", { fatal: true });

/** Splits a NUL-separated buffer, dropping the empty tail. */
export function splitNul(buf: Uint8Array): Uint8Array[] {
  const parts: Uint8Array[] = [];
  let start = 0;
  for (let i = 0; i < buf.length; i++) {
    if (buf[i] === 0) {
      parts.push(buf.subarray(start, i));
      start = i + 1;
    }
  }
  if (start < buf.length) parts.push(buf.subarray(start));
  return parts;
}

/** Decodes path bytes, telling whether they were valid UTF-8. */
export function decodePath(bytes: Uint8Array): { path: string; utf8: boolean } {
  try {
    return { path: strict.decode(bytes), utf8: true };
  } catch {
    return { path: lenient.decode(bytes), utf8: false };
  }
}

/** One commit of a `git log -z --name-only --format=%x01%H %ct` walk. */
export interface LogCommit {
  readonly commit: string;
  readonly committedAt: number;
  readonly paths: readonly { path: string; utf8: boolean }[];
}

/** Parses the `git log` walk used for plan introductions. */
export function parseNameOnlyLog(buf: Uint8Array): LogCommit[] {
  const commits: {
    commit: string;
    committedAt: number;
    paths: { path: string; utf8: boolean }[];
  }[] = [];
  for (const part of splitNul(buf)) {
    if (part[0] === 1) {
      const [commit = "", seconds = "0"] = lenient.decode(part.subarray(1)).split(" ");
      commits.push({ commit, committedAt: Number(seconds) * 1000, paths: [] });
      continue;
    }
    const current = commits.at(-1);
    if (!current) continue;
    // The first name after a header carries the header's line break.
    const bytes = part[0] === 10 && current.paths.length === 0 ? part.subarray(1) : part;
    if (bytes.length > 0) current.paths.push(decodePath(bytes));
  }
  return commits;
}
