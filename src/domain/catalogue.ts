/**
 * The dated release catalogue snapshot (`catalogue/talos.yaml`): which Talos releases exist and
 * which Kubernetes minors each Talos minor supports, as known on the snapshot date. Plans bind
 * the snapshot's SHA-256 (of the file bytes); a missing, stale or changed snapshot holds them.
 *
 * File format (YAML, one document, unknown fields refused):
 *
 * ```yaml
 * apiVersion: cairn.dev/v1alpha1
 * kind: ReleaseCatalogue
 * metadata:
 *   product: talos
 *   snapshotAt: 2026-11-20T00:00:00Z     # RFC 3339 UTC; staleness is measured from here
 *   source: https://github.com/siderolabs/talos/releases   # optional, informational
 * spec:
 *   minors:                               # one entry per Talos minor, ascending
 *     - minor: "1.13"
 *       kubernetes: { min: "1.31", max: "1.36" }   # supported Kubernetes minors, inclusive
 *       kubelet: { min: "1.31", max: "1.36" }      # optional; defaults to `kubernetes`
 *       releases:                                  # every published release of the minor
 *         - version: v1.13.0
 *           published: 2026-04-01                  # optional, informational
 * ```
 */
import { z } from "./zod.ts";
import { CairnError, type Problem } from "./errors.ts";
import {
  compareVersions,
  isPrerelease,
  minorKey,
  tryParseVersion,
  type Version,
} from "./version.ts";
import { formatPath, loadYaml, locate } from "./plan/yaml_load.ts";
import { sha256Hex } from "./plan/digest.ts";
import { plainIssueMessage } from "./plain_issue.ts";

/** Default maximum age of a snapshot before plans that need it are held (30 days). */
export const CATALOGUE_MAX_AGE_MS = 30 * 24 * 60 * 60 * 1000;

const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const MINOR = /^(0|[1-9]\d*)\.(0|[1-9]\d*)$/;

const MinorString = z.string().regex(MINOR, 'expected a minor version like "1.31"');
const MinorRange = z.strictObject({ min: MinorString, max: MinorString });

const ReleaseSchema = z.strictObject({
  version: z.string().refine((s) => s.startsWith("v") && tryParseVersion(s) !== undefined, {
    message: "expected a v-prefixed semantic version like v1.13.9",
  }),
  published: z.string().regex(/^\d{4}-\d{2}-\d{2}$/).optional(),
});

const MinorEntrySchema = z.strictObject({
  minor: MinorString,
  kubernetes: MinorRange,
  kubelet: MinorRange.optional(),
  releases: z.array(ReleaseSchema).min(1),
});

/** zod schema of the catalogue file as written. */
export const CatalogueSchema = z.strictObject({
  apiVersion: z.literal("cairn.dev/v1alpha1"),
  kind: z.literal("ReleaseCatalogue"),
  metadata: z.strictObject({
    product: z.literal("talos"),
    snapshotAt: z.string().regex(
      RFC3339_UTC,
      "expected an RFC 3339 UTC time like 2026-11-20T00:00:00Z",
    ),
    source: z.string().optional(),
  }),
  spec: z.strictObject({ minors: z.array(MinorEntrySchema).min(1) }),
});

/** The catalogue file as written. */
export type CatalogueFile = z.infer<typeof CatalogueSchema>;

/** An inclusive range of minors `[major, minor]`, e.g. Kubernetes 1.31 – 1.36. */
export interface MinorWindow {
  readonly min: readonly [number, number];
  readonly max: readonly [number, number];
}

/** One row of the support matrix: a Talos minor and what it supports. */
export interface SupportRow {
  /** Talos minor, e.g. `1.14`. */
  readonly minor: string;
  readonly kubernetes: MinorWindow;
  readonly kubelet: MinorWindow;
  /** Releases of this minor, ascending by semver precedence (prereleases included). */
  readonly releases: readonly Version[];
}

/** A parsed, checked catalogue snapshot. */
export interface Catalogue {
  readonly file: CatalogueFile;
  /** SHA-256 hex of the exact file bytes. */
  readonly sha256: string;
  readonly snapshotAtMs: number;
  readonly rows: readonly SupportRow[];
}

function window(r: { min: string; max: string }): MinorWindow {
  const [a, b] = r.min.split(".").map(Number) as [number, number];
  const [c, d] = r.max.split(".").map(Number) as [number, number];
  return { min: [a, b], max: [c, d] };
}

function invalid(file: string, message: string, at = { line: 1, column: 1 }, path?: string) {
  const problem: Problem = {
    reason: "CatalogueInvalid",
    message,
    location: { file, ...at, ...(path ? { path } : {}) },
  };
  return new CairnError(problem);
}

function buildRows(cat: CatalogueFile, fail: (msg: string, path: PropertyKey[]) => never) {
  const seen = new Set<string>();
  return cat.spec.minors.map((m, i): SupportRow => {
    if (seen.has(m.minor)) fail(`Talos minor "${m.minor}" is listed twice`, ["spec", "minors", i]);
    seen.add(m.minor);
    const releases = m.releases.map((r, j) => {
      const v = tryParseVersion(r.version)!;
      if (minorKey(v) !== m.minor) {
        fail(`Release ${r.version} is not in minor ${m.minor}`, [
          "spec",
          "minors",
          i,
          "releases",
          j,
        ]);
      }
      return v;
    });
    const versions = new Set(
      releases.map((v) => `${v.major}.${v.minor}.${v.patch}-${v.prerelease}`),
    );
    if (versions.size !== releases.length) {
      fail(`Minor ${m.minor} repeats a release`, ["spec", "minors", i]);
    }
    return {
      minor: m.minor,
      kubernetes: window(m.kubernetes),
      kubelet: window(m.kubelet ?? m.kubernetes),
      releases: [...releases].sort(compareVersions),
    };
  });
}

/**
 * Parses and checks a catalogue snapshot from its exact bytes. Throws `CairnError` with reason
 * `CatalogueInvalid` (located) when the file is not a well-formed catalogue.
 */
export async function parseCatalogue(bytes: Uint8Array, file: string): Promise<Catalogue> {
  const result = loadYaml(bytes, { file });
  if (!result.ok) {
    const p = result.problems[0]!;
    throw invalid(file, `${p.reason}: ${p.message}`, p.location);
  }
  const loaded = result.loaded;
  const parsed = CatalogueSchema.safeParse(loaded.value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = issue.code === "unrecognized_keys" ? issue.keys[0] : undefined;
    const path = key === undefined ? issue.path : [...issue.path, key];
    throw invalid(
      file,
      plainIssueMessage(issue),
      locate(loaded, issue.path, key),
      formatPath(path),
    );
  }
  const rows = buildRows(parsed.data, (msg, path) => {
    throw invalid(file, msg, locate(loaded, path), formatPath(path));
  });
  return {
    file: parsed.data,
    sha256: await sha256Hex(bytes),
    snapshotAtMs: Date.parse(parsed.data.metadata.snapshotAt),
    rows,
  };
}

/** The support-matrix row of the Talos minor `v` belongs to, if the catalogue has it. */
export function supportRow(cat: Catalogue, v: Version): SupportRow | undefined {
  return cat.rows.find((r) => r.minor === minorKey(v));
}

/** True when the catalogue lists exactly this release (prerelease identifiers included). */
export function hasRelease(cat: Catalogue, v: Version): boolean {
  return supportRow(cat, v)?.releases.some((r) => compareVersions(r, v) === 0) ?? false;
}

/**
 * The latest stable (non-prerelease) patch of the minor `v` belongs to.
 *
 * @example
 * ```ts ignore
 * latestPatch(cat, parseVersion("v1.13.4")); // v1.13.9 with the shipped snapshot
 * ```
 */
export function latestPatch(cat: Catalogue, v: Version): Version | undefined {
  const stable = supportRow(cat, v)?.releases.filter((r) => !isPrerelease(r)) ?? [];
  return stable[stable.length - 1];
}

/** True when the minor of `k` (a Kubernetes or kubelet version) lies inside `w`, inclusive. */
export function inWindow(w: MinorWindow, k: Version): boolean {
  const cmp = (a: readonly [number, number]) =>
    Math.sign(k.major - a[0]) || Math.sign(k.minor - a[1]);
  return cmp(w.min) >= 0 && cmp(w.max) <= 0;
}

/** Renders a window as `1.31–1.36`. */
export function formatWindow(w: MinorWindow): string {
  return `${w.min.join(".")}–${w.max.join(".")}`;
}

/** Age of the snapshot at `nowMs`, in milliseconds (negative when dated in the future). */
export function catalogueAgeMs(cat: Catalogue, nowMs: number): number {
  return nowMs - cat.snapshotAtMs;
}

/** True when the snapshot is older than `maxAgeMs` at `nowMs`. */
export function isCatalogueStale(
  cat: Catalogue,
  nowMs: number,
  maxAgeMs: number = CATALOGUE_MAX_AGE_MS,
): boolean {
  return catalogueAgeMs(cat, nowMs) > maxAgeMs;
}
