/**
 * The installer images the twin's registry serves: for every image the cluster description
 * declares (`spec.installerImages`, a `host/repository:tag` reference), one OCI image index with
 * a manifest per platform, each with its config blob (os, architecture) and one layer. The bytes
 * are a pure function of the reference and platform, so a digest printed once stays valid: plans
 * bind these digests and the twin serves exactly the bytes that hash to them.
 */
import { createHash } from "node:crypto";
import { MEDIA_TYPES } from "../../domain/oci/manifest.ts";
import { parseImageReference, parsePlatform, type Platform } from "../../domain/oci/reference.ts";

/** Platforms an Image Factory installer is built for. */
export const INSTALLER_PLATFORMS: readonly string[] = ["linux/amd64", "linux/arm64"];

const LAYER_TAR = "application/vnd.oci.image.layer.v1.tar";
const CONFIG = "application/vnd.oci.image.config.v1+json";

/** One stored piece of content, addressed by its digest. */
export interface Content {
  readonly digest: string;
  readonly mediaType: string;
  readonly bytes: Uint8Array;
}

/** One repository's content: tags → index digest, digest → manifest, digest → blob. */
export interface Repository {
  readonly tags: Map<string, string>;
  readonly manifests: Map<string, Content>;
  readonly blobs: Map<string, Content>;
}

/** A registry's worth of content, keyed by registry host, then repository name. */
export type RegistryContent = Map<string, Map<string, Repository>>;

const enc = new TextEncoder();

function content(mediaType: string, bytes: Uint8Array): Content {
  return { digest: `sha256:${createHash("sha256").update(bytes).digest("hex")}`, mediaType, bytes };
}

function json(mediaType: string, doc: unknown): Content {
  return content(mediaType, enc.encode(JSON.stringify(doc)));
}

function descriptor(c: Content, extra: Record<string, unknown> = {}) {
  return { mediaType: c.mediaType, digest: c.digest, size: c.bytes.length, ...extra };
}

/**
 * A one-file POSIX tar (ustar): the layer says what it stands for. Fixed mtime, owner and mode
 * keep it byte-stable.
 */
function tarOf(name: string, text: string): Uint8Array {
  const body = enc.encode(text);
  const header = new Uint8Array(512);
  const put = (s: string, at: number) => header.set(enc.encode(s), at);
  const octal = (n: number, width: number) => n.toString(8).padStart(width - 1, "0") + "\0";
  put(name, 0);
  put(octal(0o644, 8), 100);
  put(octal(0, 8), 108);
  put(octal(0, 8), 116);
  put(octal(body.length, 12), 124);
  put(octal(0, 12), 136);
  put("        ", 148);
  put("0", 156);
  put("ustar\0", 257);
  put("00", 263);
  const sum = header.reduce((a, b) => a + b, 0);
  put(sum.toString(8).padStart(6, "0") + "\0 ", 148);
  const padded = Math.ceil(body.length / 512) * 512;
  const out = new Uint8Array(512 + padded + 1024);
  out.set(header, 0);
  out.set(body, 512);
  return out;
}

function platformManifest(ref: string, tag: string, p: Platform, repo: Repository): Content {
  const layer = content(
    LAYER_TAR,
    tarOf("twin-installer.txt", `cairn twin installer ${ref} for ${p.os}/${p.architecture}\n`),
  );
  const config = json(CONFIG, {
    architecture: p.architecture,
    os: p.os,
    config: { Labels: { "org.opencontainers.image.version": tag } },
    rootfs: { type: "layers", diff_ids: [layer.digest] },
  });
  repo.blobs.set(layer.digest, layer);
  repo.blobs.set(config.digest, config);
  const manifest = json(MEDIA_TYPES.ociManifest, {
    schemaVersion: 2,
    mediaType: MEDIA_TYPES.ociManifest,
    config: descriptor(config),
    layers: [descriptor(layer)],
  });
  repo.manifests.set(manifest.digest, manifest);
  return manifest;
}

/**
 * Builds the content for `refs` (each `host/repository:tag`, no digest: the digest is what the
 * twin computes). Throws on a malformed or digest-pinned reference.
 */
export function buildInstallerContent(
  refs: readonly string[],
  platforms: readonly string[] = INSTALLER_PLATFORMS,
): RegistryContent {
  const out: RegistryContent = new Map();
  for (const ref of refs) {
    const r = parseImageReference(ref);
    if (r.digest !== undefined || r.tag === undefined) {
      throw new Error(
        `installer image ${ref}: declare host/repository:tag; the twin computes digests`,
      );
    }
    const repos = out.get(r.registry) ?? new Map<string, Repository>();
    out.set(r.registry, repos);
    const repo = repos.get(r.repository) ??
      { tags: new Map(), manifests: new Map(), blobs: new Map() };
    repos.set(r.repository, repo);
    const entries = platforms.map(parsePlatform).map((p) =>
      descriptor(platformManifest(ref, r.tag!, p, repo), {
        platform: { os: p.os, architecture: p.architecture },
      })
    );
    const index = json(MEDIA_TYPES.ociIndex, {
      schemaVersion: 2,
      mediaType: MEDIA_TYPES.ociIndex,
      manifests: entries,
    });
    repo.manifests.set(index.digest, index);
    repo.tags.set(r.tag!, index.digest);
  }
  return out;
}

/** `host/repository:tag@digest` for every declared image: what a plan should bind. */
export function pinnedReferences(c: RegistryContent): string[] {
  const out: string[] = [];
  for (const [host, repos] of c) {
    for (const [name, repo] of repos) {
      for (const [tag, digest] of repo.tags) out.push(`${host}/${name}:${tag}@${digest}`);
    }
  }
  return out.sort();
}

/**
 * Whether `content` holds `ref`: undefined when the reference's registry host is not one the
 * content serves; otherwise the repository must exist, the tag (if any) name an index, and the
 * digest (if any) be a manifest of that repository — of the tag's index, when both are given.
 */
export function registryHolds(content: RegistryContent, ref: string): boolean | undefined {
  let r;
  try {
    r = parseImageReference(ref);
  } catch {
    return undefined;
  }
  const repos = content.get(r.registry);
  if (!repos) return undefined;
  const repo = repos.get(r.repository);
  if (!repo) return false;
  const index = r.tag !== undefined ? repo.tags.get(r.tag) : undefined;
  if (r.tag !== undefined && index === undefined) return false;
  if (r.digest === undefined) return true;
  if (!repo.manifests.has(r.digest)) return false;
  if (index === undefined || index === r.digest) return true;
  const doc = JSON.parse(new TextDecoder().decode(repo.manifests.get(index)!.bytes)) as {
    manifests?: Array<{ digest?: string }>;
  };
  return (doc.manifests ?? []).some((m) => m.digest === r.digest);
}
