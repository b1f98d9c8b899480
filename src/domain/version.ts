/**
 * Our own small semantic-version module (SemVer 2.0.0) for Talos, Kubernetes and component
 * versions. Ordering is FULL semver ordering, prerelease identifiers included: a major/minor
 * compare alone would put `1.13.0-alpha.2` and `1.13.0` in the same bucket and lose the
 * boundary that selects the Talos upgrade RPC path.
 */

/** A parsed version. `prerelease` holds numeric identifiers as numbers. */
export interface Version {
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
  readonly prerelease: readonly (string | number)[];
  readonly build: readonly string[];
}

const NUM = "(0|[1-9]\\d*)";
const IDENT = "(?:0|[1-9]\\d*|\\d*[A-Za-z-][0-9A-Za-z-]*)";
const VERSION_RE = new RegExp(
  `^v?${NUM}\\.${NUM}\\.${NUM}(?:-(${IDENT}(?:\\.${IDENT})*))?(?:\\+([0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*))?$`,
);

/**
 * Parses `1.2.3`, `v1.2.3`, `v1.14.0-beta.0`, `1.0.0+build.5`; returns undefined when invalid.
 *
 * @example
 * ```ts
 * import { tryParseVersion } from "./version.ts";
 * tryParseVersion("v1.14.0-beta.0")?.prerelease; // ["beta", 0]
 * ```
 */
export function tryParseVersion(text: string): Version | undefined {
  const m = VERSION_RE.exec(text);
  if (!m) return undefined;
  const nums = [m[1], m[2], m[3]].map(Number);
  if (nums.some((n) => !Number.isSafeInteger(n))) return undefined;
  const prerelease = m[4] === undefined
    ? []
    : m[4].split(".").map((id) => (/^\d+$/.test(id) ? Number(id) : id));
  return {
    major: nums[0]!,
    minor: nums[1]!,
    patch: nums[2]!,
    prerelease,
    build: m[5] === undefined ? [] : m[5].split("."),
  };
}

/** Like {@link tryParseVersion} but throws a RangeError for an invalid version. */
export function parseVersion(text: string): Version {
  const v = tryParseVersion(text);
  if (!v) throw new RangeError(`"${text}" is not a semantic version`);
  return v;
}

/** True when `text` is a valid version (optionally `v`-prefixed). */
export function isVersion(text: string): boolean {
  return tryParseVersion(text) !== undefined;
}

/** Renders a version with a leading `v` (Talos and Kubernetes tags are written that way). */
export function formatVersion(v: Version): string {
  const pre = v.prerelease.length ? `-${v.prerelease.join(".")}` : "";
  const build = v.build.length ? `+${v.build.join(".")}` : "";
  return `v${v.major}.${v.minor}.${v.patch}${pre}${build}`;
}

function compareIdent(a: string | number, b: string | number): number {
  if (typeof a === "number" && typeof b === "number") return Math.sign(a - b);
  // Numeric identifiers always have lower precedence than alphanumeric ones.
  if (typeof a === "number") return -1;
  if (typeof b === "number") return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Compares two versions by SemVer 2.0.0 precedence (build metadata ignored): -1, 0 or 1.
 *
 * @example
 * ```ts
 * import { compareVersions, parseVersion } from "./version.ts";
 * compareVersions(parseVersion("1.14.0-beta.0"), parseVersion("1.13.9")); // 1
 * compareVersions(parseVersion("1.14.0-beta.0"), parseVersion("1.14.0")); // -1
 * ```
 */
export function compareVersions(a: Version, b: Version): -1 | 0 | 1 {
  const core = Math.sign(a.major - b.major) || Math.sign(a.minor - b.minor) ||
    Math.sign(a.patch - b.patch);
  if (core !== 0) return core as -1 | 1;
  const pa = a.prerelease, pb = b.prerelease;
  // A version without prerelease outranks any prerelease of the same core.
  if (pa.length === 0 || pb.length === 0) return Math.sign(pb.length - pa.length) as -1 | 0 | 1;
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i], y = pb[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    const c = compareIdent(x, y);
    if (c !== 0) return c as -1 | 1;
  }
  return 0;
}

/** True when `v` is a prerelease (`1.14.0-rc.1`). */
export function isPrerelease(v: Version): boolean {
  return v.prerelease.length > 0;
}

/** `major.minor` of a version, e.g. `1.14`. */
export function minorKey(v: Version): string {
  return `${v.major}.${v.minor}`;
}

/** One comparator of a range, e.g. `>1.13.0-alpha.2`. */
export interface Comparator {
  readonly op: "<" | "<=" | ">" | ">=" | "=";
  readonly version: Version;
}

/**
 * Parses a space-separated AND of comparators (`>1.13.0-alpha.2 <2.0.0`), the subset of
 * blang/semver ranges cairn needs. Unlike npm `semver.satisfies`, prereleases are never
 * excluded from a range: talosctl uses blang/semver, whose ranges match them.
 */
export function parseRange(text: string): readonly Comparator[] {
  const parts = text.trim().split(/\s+/);
  return parts.map((part) => {
    const m = /^(<=|>=|<|>|=)?(.+)$/.exec(part);
    const version = m?.[2] !== undefined ? tryParseVersion(m[2]) : undefined;
    if (!m || !version) throw new RangeError(`"${part}" is not a version comparator`);
    return { op: (m[1] ?? "=") as Comparator["op"], version };
  });
}

/** True when `v` satisfies every comparator of `range`. */
export function satisfies(v: Version, range: readonly Comparator[]): boolean {
  return range.every(({ op, version }) => {
    const c = compareVersions(v, version);
    switch (op) {
      case "<":
        return c < 0;
      case "<=":
        return c <= 0;
      case ">":
        return c > 0;
      case ">=":
        return c >= 0;
      case "=":
        return c === 0;
    }
  });
}

/** The range of Talos versions that serve `LifecycleService`/`ImageService` (talosctl's gate). */
export const LIFECYCLE_API_RANGE = ">1.13.0-alpha.2 <2.0.0";
const LIFECYCLE_COMPARATORS = parseRange(LIFECYCLE_API_RANGE);

/**
 * True when a Talos node running `v` is upgraded through `LifecycleService.Upgrade`; otherwise
 * the legacy `MachineService.Upgrade` path applies.
 *
 * @example
 * ```ts
 * import { isLifecycleApiVersion, parseVersion } from "./version.ts";
 * isLifecycleApiVersion(parseVersion("v1.13.0-alpha.3")); // true
 * isLifecycleApiVersion(parseVersion("v1.13.0-alpha.2")); // false
 * ```
 */
export function isLifecycleApiVersion(v: Version): boolean {
  return satisfies(v, LIFECYCLE_COMPARATORS);
}
