/**
 * How far a version moved, leniently parsed (`v1.2.3`, `1.2`, `18.1`): the level that changed
 * (patch, minor, major), how many majors, and whether it went back.
 */
import { compareVersions, tryParseVersion, type Version } from "../version.ts";
import type { MoveKind } from "./model.ts";

export const RANK: Readonly<Record<"patch" | "minor" | "major", number>> = {
  patch: 1,
  minor: 2,
  major: 3,
};

/** A lenient version: `v1.2.3`, `1.2`, `18.1` (missing parts are 0). */
export function looseVersion(text: string): Version | undefined {
  const m = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(-[0-9A-Za-z.-]+)?$/.exec(text.trim());
  if (!m) return undefined;
  return tryParseVersion(`${m[1]}.${m[2] ?? 0}.${m[3] ?? 0}${m[4] ?? ""}`);
}

/** How far `from` → `to` moved; the level that changed for a downgrade is `level`. */
export function classifyMove(
  from: string,
  to: string,
): { kind: MoveKind; level?: "patch" | "minor" | "major"; majors?: number } {
  if (norm(from) === norm(to)) return { kind: "none" };
  const a = looseVersion(from), b = looseVersion(to);
  if (!a || !b) return { kind: "unparsed" };
  const level = a.major !== b.major ? "major" : a.minor !== b.minor ? "minor" : "patch";
  const majors = b.major - a.major;
  if (compareVersions(b, a) < 0) return { kind: "downgrade", level, majors };
  return { kind: level, level, majors };
}

export function norm(v: string): string {
  return v.trim().replace(/^v/, "");
}
