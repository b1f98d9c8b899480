/**
 * Resolves an image reference to a per-platform manifest digest through the OCI distribution
 * API. Absence and unreadability are errors with stable reasons; nothing falls back to another
 * tag, platform or default image.
 */
import { CairnError } from "../../domain/errors.ts";
import { sha256Hex } from "../../domain/plan/digest.ts";
import {
  indexEntries,
  isImageMediaType,
  isIndexMediaType,
  MANIFEST_ACCEPT,
} from "../../domain/oci/manifest.ts";
import {
  formatPlatform,
  type ImageReference,
  parseImageReference,
  type Platform,
} from "../../domain/oci/reference.ts";
import { parseWwwAuthenticate } from "../../domain/oci/www_authenticate.ts";
import { selectPlatform } from "../../domain/oci/manifest.ts";

/** How to reach the registry. */
export interface RegistryClientOptions {
  /** Use plain HTTP; allowed only for loopback registries. */
  readonly insecureHttp?: boolean;
  /**
   * Registry host → base URL (`https://host[:port]`, or `http://` on loopback) to fetch from
   * instead, e.g. the twin's registry standing in for `factory.talos.dev`. The reference and the
   * pinned result keep the original host: a mirror changes where bytes come from, never what
   * they must hash to.
   */
  readonly mirrors?: Readonly<Record<string, string>>;
  readonly signal?: AbortSignal;
  /** The HTTP client (default the global `fetch`; the in-process twin answers without a socket). */
  readonly fetch?: typeof fetch;
}

/** A reference resolved for one platform. */
export interface ResolvedImage {
  readonly reference: string;
  readonly registry: string;
  readonly repository: string;
  readonly platform: string;
  /** Digest of the platform's image manifest: what an installer must be pulled by. */
  readonly digest: string;
  readonly mediaType: string;
  /** Digest of the index the platform manifest was selected from, when the reference named one. */
  readonly indexDigest?: string;
  /** The pinned `host/repository@digest` reference for this platform. */
  readonly pinned: string;
}

interface FetchedManifest {
  readonly digest: string;
  readonly mediaType: string;
  readonly body: Uint8Array;
}

const LOOPBACK = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d+)?$/;

/** Resolves `reference` to the manifest digest for `platform`. */
export async function resolveImage(
  reference: string,
  platform: Platform,
  opts: RegistryClientOptions = {},
): Promise<ResolvedImage> {
  const ref = parseImageReference(reference);
  const client = new RegistryClient(ref, opts);
  const top = await client.manifest(ref.digest ?? ref.tag!);
  const base = {
    reference,
    registry: ref.registry,
    repository: ref.repository,
    platform: formatPlatform(platform),
  };
  if (isIndexMediaType(top.mediaType)) {
    const entry = selectPlatform(indexEntries(parseJson(top.body, reference)), platform);
    if (!entry) {
      throw new CairnError({
        reason: "ImagePlatformMissing",
        message: `${reference} has no manifest for ${formatPlatform(platform)}`,
        details: { indexDigest: top.digest },
      });
    }
    const image = await client.manifest(entry.digest);
    return { ...base, ...pinned(ref, image), indexDigest: top.digest };
  }
  if (!isImageMediaType(top.mediaType)) {
    throw unreadable(`${reference}: unsupported manifest media type '${top.mediaType}'`);
  }
  await client.requirePlatform(top, platform, reference);
  return { ...base, ...pinned(ref, top) };
}

/** A layer of an artifact, read and checked against its digest. */
export interface FetchedLayer {
  readonly manifestDigest: string;
  readonly digest: string;
  readonly bytes: Uint8Array;
}

/**
 * The first layer of `mediaType` in the single manifest `reference` names (a Helm chart's
 * `application/vnd.cncf.helm.chart.content.v1.tar+gzip`). A layer declared, or turning out,
 * larger than `maxBytes` is refused before (or while) it is read; its bytes must hash to its
 * digest.
 */
export async function fetchArtifactLayer(
  reference: string,
  mediaType: string,
  maxBytes: number,
  opts: RegistryClientOptions = {},
): Promise<FetchedLayer> {
  const ref = parseImageReference(reference);
  const client = new RegistryClient(ref, opts);
  const top = await client.manifest(ref.digest ?? ref.tag!);
  if (!isImageMediaType(top.mediaType)) {
    throw unreadable(`${reference}: not a single artifact manifest ('${top.mediaType}')`);
  }
  const layers = (parseJson(top.body, reference) as { layers?: unknown }).layers;
  const layer = Array.isArray(layers)
    ? (layers as Array<Record<string, unknown>>).find((l) => l["mediaType"] === mediaType)
    : undefined;
  if (!layer || typeof layer["digest"] !== "string") {
    throw new CairnError({
      reason: "ImageNotFound",
      message: `${reference} has no ${mediaType} layer`,
    });
  }
  const declared = Number(layer["size"]);
  if (Number.isFinite(declared) && declared > maxBytes) {
    throw unreadable(`${reference}: layer is ${declared} bytes; the limit is ${maxBytes}`);
  }
  const bytes = await client.blob(layer["digest"], maxBytes, reference);
  return { manifestDigest: top.digest, digest: layer["digest"], bytes };
}

function pinned(ref: ImageReference, m: FetchedManifest) {
  return {
    digest: m.digest,
    mediaType: m.mediaType,
    pinned: `${ref.registry}/${ref.repository}@${m.digest}`,
  };
}

class RegistryClient {
  readonly #base: string;
  readonly #repo: string;
  readonly #signal: AbortSignal | undefined;
  readonly #fetch: typeof fetch;
  #token: string | undefined;

  constructor(ref: ImageReference, opts: RegistryClientOptions) {
    const mirror = opts.mirrors?.[ref.registry];
    this.#repo = ref.repository;
    this.#signal = opts.signal;
    this.#fetch = opts.fetch ?? fetch;
    if (mirror !== undefined) {
      this.#base = `${mirrorBase(mirror, ref.registry)}/v2/${ref.repository}`;
      return;
    }
    if (opts.insecureHttp && !LOOPBACK.test(ref.registry)) {
      throw new CairnError({
        reason: "ConfigInvalid",
        message: `--insecure-http is only allowed for loopback registries, not ${ref.registry}`,
      });
    }
    this.#base = `${opts.insecureHttp ? "http" : "https"}://${ref.registry}/v2/${ref.repository}`;
  }

  /** GETs a manifest by tag or digest and checks its bytes against every digest it claims. */
  async manifest(tagOrDigest: string): Promise<FetchedManifest> {
    const res = await this.#get(`/manifests/${tagOrDigest}`, MANIFEST_ACCEPT);
    const body = new Uint8Array(await res.arrayBuffer());
    const digest = `sha256:${await sha256Hex(body)}`;
    const claimed = res.headers.get("docker-content-digest");
    if (claimed !== null && claimed !== digest) {
      throw mismatch(`Docker-Content-Digest ${claimed} but the body hashes to ${digest}`);
    }
    if (tagOrDigest.startsWith("sha256:") && tagOrDigest !== digest) {
      throw mismatch(`requested ${tagOrDigest} but the body hashes to ${digest}`);
    }
    const contentType = (res.headers.get("content-type") ?? "").split(";")[0]!.trim();
    const declared = (parseJson(body, this.#repo) as { mediaType?: unknown }).mediaType;
    const mediaType = typeof declared === "string" ? declared : contentType;
    return { digest, mediaType, body };
  }

  /** A blob by digest, read at most `maxBytes` and checked against the digest. */
  async blob(digest: string, maxBytes: number, what: string): Promise<Uint8Array> {
    const res = await this.#get(`/blobs/${digest}`, "*/*");
    const reader = res.body?.getReader();
    const chunks: Uint8Array[] = [];
    let total = 0;
    while (reader) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.length;
      if (total > maxBytes) {
        await reader.cancel();
        throw unreadable(`${what}: layer exceeds ${maxBytes} bytes`);
      }
      chunks.push(value);
    }
    const bytes = new Uint8Array(total);
    let at = 0;
    for (const c of chunks) {
      bytes.set(c, at);
      at += c.length;
    }
    if (`sha256:${await sha256Hex(bytes)}` !== digest) {
      throw mismatch(`layer of ${what} does not hash to ${digest}`);
    }
    return bytes;
  }

  /** A single-platform manifest must say (through its config) that it is the platform asked for. */
  async requirePlatform(m: FetchedManifest, want: Platform, reference: string): Promise<void> {
    const config = (parseJson(m.body, reference) as { config?: { digest?: unknown } }).config;
    if (typeof config?.digest !== "string") {
      throw unreadable(`${reference}: manifest has no config`);
    }
    const res = await this.#get(`/blobs/${config.digest}`, "*/*");
    const bytes = new Uint8Array(await res.arrayBuffer());
    if (`sha256:${await sha256Hex(bytes)}` !== config.digest) {
      throw mismatch(`config blob of ${reference} does not hash to ${config.digest}`);
    }
    const c = parseJson(bytes, reference) as Record<string, unknown>;
    const variant = typeof c["variant"] === "string" ? c["variant"] : undefined;
    if (
      c["os"] !== want.os || c["architecture"] !== want.architecture || variant !== want.variant
    ) {
      throw new CairnError({
        reason: "ImagePlatformMissing",
        message: `${reference} is a single-platform image for ${String(c["os"])}/` +
          `${String(c["architecture"])}${variant ? `/${variant}` : ""}, not ${
            formatPlatform(want)
          }`,
      });
    }
  }

  async #get(path: string, accept: string, retried = false): Promise<Response> {
    const headers: Record<string, string> = { accept };
    if (this.#token) headers["authorization"] = `Bearer ${this.#token}`;
    let res: Response;
    try {
      res = await this.#fetch(this.#base + path, {
        headers,
        ...(this.#signal ? { signal: this.#signal } : {}),
      });
    } catch (e) {
      throw unreadable(`${this.#base}${path}: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (res.status === 401 && !retried) {
      const challenge = parseWwwAuthenticate(res.headers.get("www-authenticate") ?? "");
      await res.body?.cancel();
      if (challenge?.scheme !== "bearer" || !challenge.params["realm"]) {
        throw unreadable(`${this.#repo}: registry requires unsupported authentication`);
      }
      this.#token = await this.#fetchToken(challenge.params);
      return this.#get(path, accept, true);
    }
    if (res.ok) return res;
    throw await statusError(res, this.#repo, path);
  }

  async #fetchToken(params: Readonly<Record<string, string>>): Promise<string> {
    const url = new URL(params["realm"]!);
    if (params["service"]) url.searchParams.set("service", params["service"]);
    url.searchParams.set("scope", params["scope"] ?? `repository:${this.#repo}:pull`);
    let res: Response;
    try {
      res = await this.#fetch(url, this.#signal ? { signal: this.#signal } : {});
    } catch (e) {
      throw unreadable(`token service: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw unreadable(`token service answered ${res.status}`);
    }
    const body = await res.json().catch(() => ({})) as { token?: unknown; access_token?: unknown };
    const token = body.token ?? body.access_token;
    if (typeof token !== "string" || token === "") throw unreadable("token service gave no token");
    return token;
  }
}

/** A mirror's base URL without a trailing slash; plain HTTP only on loopback. */
function mirrorBase(mirror: string, registry: string): string {
  let url: URL;
  try {
    url = new URL(mirror);
  } catch {
    throw new CairnError({
      reason: "ConfigInvalid",
      message: `mirror for ${registry} is not a URL: '${mirror}'`,
    });
  }
  const plainOk = url.protocol === "http:" && LOOPBACK.test(url.host);
  if (!(url.protocol === "https:" || plainOk) || url.pathname.replace(/\/+$/, "") !== "") {
    throw new CairnError({
      reason: "ConfigInvalid",
      message: `mirror for ${registry} must be https://host[:port] (http:// only on loopback), ` +
        `not '${mirror}'`,
    });
  }
  return `${url.protocol}//${url.host}`;
}

async function statusError(res: Response, repo: string, path: string): Promise<CairnError> {
  const text = await res.text().catch(() => "");
  let codes: string[] = [];
  try {
    const errors = (JSON.parse(text) as { errors?: Array<{ code?: unknown }> }).errors ?? [];
    codes = errors.map((e) => String(e.code));
  } catch {
    // A non-JSON error body carries no codes; the status decides.
  }
  const what = `${repo}${path.replace(/^\/manifests\//, ":")}`;
  if (res.status === 404 && (codes.length === 0 || codes.some((c) => /_UNKNOWN$/.test(c)))) {
    return new CairnError({
      reason: "ImageNotFound",
      message: `${what} not found (${codes.join(", ") || "404"}); no tag or default is substituted`,
    });
  }
  return unreadable(
    `${what}: registry answered ${res.status}${codes.length ? ` ${codes.join(", ")}` : ""}`,
  );
}

function parseJson(bytes: Uint8Array, what: string): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw unreadable(`${what}: manifest is not JSON`);
  }
}

function unreadable(message: string): CairnError {
  return new CairnError({ reason: "RegistryUnreadable", message });
}

function mismatch(message: string): CairnError {
  return new CairnError({ reason: "DigestMismatch", message });
}
