/**
 * Image references and platforms. A reference must name its registry host explicitly: cairn
 * never assumes Docker Hub, `latest` or any other default.
 */
import { CairnError } from "../errors.ts";

/** A parsed `host/repository[:tag][@sha256:hex]` reference; at least one of tag or digest. */
export interface ImageReference {
  readonly registry: string;
  readonly repository: string;
  readonly tag?: string;
  readonly digest?: string;
}

/** A target platform `os/architecture[/variant]`. */
export interface Platform {
  readonly os: string;
  readonly architecture: string;
  readonly variant?: string;
}

const HOST =
  /^(?:localhost|\[[0-9a-f:]+\]|[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+|[a-z0-9-]+(?=:))(?::\d{1,5})?$/i;
const COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const TAG = /^[\w][\w.-]{0,127}$/;
const DIGEST = /^sha256:[0-9a-f]{64}$/;

function invalid(ref: string, why: string): CairnError {
  return new CairnError({
    reason: "ImageReferenceInvalid",
    message: `image reference '${ref}' is invalid: ${why}`,
  });
}

/**
 * Parses an image reference; throws `ImageReferenceInvalid`.
 *
 * @example
 * ```ts
 * import { parseImageReference } from "./reference.ts";
 * parseImageReference("factory.talos.dev/metal-installer/abc:v1.14.2").tag; // "v1.14.2"
 * ```
 */
export function parseImageReference(ref: string): ImageReference {
  const at = ref.indexOf("@");
  const digest = at === -1 ? undefined : ref.slice(at + 1);
  const rest = at === -1 ? ref : ref.slice(0, at);
  if (digest !== undefined && !DIGEST.test(digest)) {
    throw invalid(ref, "digest must be sha256: and 64 lower-case hex digits");
  }
  const slash = rest.indexOf("/");
  if (slash === -1) throw invalid(ref, "the registry host must be named explicitly");
  const registry = rest.slice(0, slash);
  if (!HOST.test(registry)) throw invalid(ref, `'${registry}' is not a registry host`);
  const path = rest.slice(slash + 1);
  const colon = path.lastIndexOf(":");
  const tag = colon === -1 ? undefined : path.slice(colon + 1);
  const repository = colon === -1 ? path : path.slice(0, colon);
  if (!repository.split("/").every((c) => COMPONENT.test(c))) {
    throw invalid(ref, `'${repository}' is not a repository name`);
  }
  if (tag !== undefined && !TAG.test(tag)) throw invalid(ref, `'${tag}' is not a tag`);
  if (tag === undefined && digest === undefined) {
    throw invalid(ref, "a tag or a digest is required; no default tag is assumed");
  }
  return {
    registry,
    repository,
    ...(tag !== undefined ? { tag } : {}),
    ...(digest !== undefined ? { digest } : {}),
  };
}

/**
 * Parses `os/architecture[/variant]`; throws `ImageReferenceInvalid`.
 *
 * @example
 * ```ts
 * import { parsePlatform } from "./reference.ts";
 * parsePlatform("linux/arm64/v8").variant; // "v8"
 * ```
 */
export function parsePlatform(text: string): Platform {
  const parts = text.split("/");
  if (parts.length < 2 || parts.length > 3 || parts.some((p) => !/^[a-z0-9_]+$/.test(p))) {
    throw new CairnError({
      reason: "ImageReferenceInvalid",
      message: `platform '${text}' is not os/architecture[/variant]`,
    });
  }
  const [os, architecture, variant] = parts as [string, string, string?];
  return { os, architecture, ...(variant !== undefined ? { variant } : {}) };
}

/** `os/architecture[/variant]`. */
export function formatPlatform(p: Platform): string {
  return [p.os, p.architecture, ...(p.variant ? [p.variant] : [])].join("/");
}
