/**
 * OCI / Docker manifest media types and platform selection from an index. Selection is exact:
 * a requested variant must match; an entry without a variant matches only a request without one.
 */
import type { Platform } from "./reference.ts";

/** Media types cairn accepts for a manifest GET, index types first. */
export const MEDIA_TYPES = {
  ociIndex: "application/vnd.oci.image.index.v1+json",
  dockerList: "application/vnd.docker.distribution.manifest.list.v2+json",
  ociManifest: "application/vnd.oci.image.manifest.v1+json",
  dockerManifest: "application/vnd.docker.distribution.manifest.v2+json",
} as const;

/** The `Accept` header of a manifest request. */
export const MANIFEST_ACCEPT = Object.values(MEDIA_TYPES).join(", ");

/** True for an OCI index or a Docker manifest list. */
export function isIndexMediaType(mediaType: string): boolean {
  return mediaType === MEDIA_TYPES.ociIndex || mediaType === MEDIA_TYPES.dockerList;
}

/** True for a single-platform image manifest. */
export function isImageMediaType(mediaType: string): boolean {
  return mediaType === MEDIA_TYPES.ociManifest || mediaType === MEDIA_TYPES.dockerManifest;
}

/** One entry of an index. */
export interface IndexEntry {
  readonly digest: string;
  readonly mediaType: string;
  readonly platform?: Platform;
}

/** Reads the entries of an index document; entries without a digest are dropped. */
export function indexEntries(doc: unknown): IndexEntry[] {
  const manifests = (doc as { manifests?: unknown })?.manifests;
  if (!Array.isArray(manifests)) return [];
  const out: IndexEntry[] = [];
  for (const m of manifests as Array<Record<string, unknown>>) {
    if (typeof m?.["digest"] !== "string") continue;
    const p = m["platform"] as Record<string, unknown> | undefined;
    const platform = typeof p?.["os"] === "string" && typeof p["architecture"] === "string"
      ? {
        os: p["os"],
        architecture: p["architecture"],
        ...(typeof p["variant"] === "string" ? { variant: p["variant"] } : {}),
      }
      : undefined;
    out.push({
      digest: m["digest"],
      mediaType: typeof m["mediaType"] === "string" ? m["mediaType"] : "",
      ...(platform ? { platform } : {}),
    });
  }
  return out;
}

/**
 * The index entry for exactly `want`, or undefined. Never falls back to another platform.
 *
 * @example
 * ```ts
 * import { selectPlatform } from "./manifest.ts";
 * const e = [{ digest: "sha256:a", mediaType: "", platform: { os: "linux", architecture: "arm64" } }];
 * selectPlatform(e, { os: "linux", architecture: "amd64" }); // undefined
 * ```
 */
export function selectPlatform(
  entries: readonly IndexEntry[],
  want: Platform,
): IndexEntry | undefined {
  return entries.find((e) =>
    e.platform !== undefined && e.platform.os === want.os &&
    e.platform.architecture === want.architecture &&
    (e.platform.variant ?? undefined) === (want.variant ?? undefined)
  );
}
