/**
 * A hop's installer as the plan pins it (`<registry>/<repository>:<tag>@sha256:<digest>`), split
 * into the reference a registry resolves and the digest the resolution must reproduce.
 */
import type { TalosHop } from "../plan/schema.ts";

/** The reference to resolve and the digest the plan pins. */
export interface PinnedInstaller {
  /** `<registry>/<repository>:<tag>`: what the registry is asked for. */
  readonly reference: string;
  /** `sha256:<hex>` the plan's reviewers approved. */
  readonly pinned: string;
}

/** Splits a hop's installer image (the schema guarantees exactly one `@sha256:`). */
export function pinnedInstaller(hop: TalosHop): PinnedInstaller {
  const at = hop.installer.image.lastIndexOf("@");
  return { reference: hop.installer.image.slice(0, at), pinned: hop.installer.image.slice(at + 1) };
}

/**
 * True when a resolution reproduces the pinned digest: the platform's image manifest itself, or
 * the index it was selected from (an index digest fixes every platform's manifest bytes, so it
 * pins the platform's image as firmly). Anything else is another image.
 */
export function resolutionMatches(
  pinned: string,
  resolved: { readonly digest: string; readonly indexDigest?: string },
): boolean {
  return resolved.digest === pinned || resolved.indexDigest === pinned;
}
