/**
 * What `cairn image resolve` wires: the OCI registry client (distribution API, bearer-token auth,
 * every manifest checked against its digest). The command parses flags and renders.
 */
import {
  type RegistryClientOptions,
  type ResolvedImage,
  resolveImage,
} from "../adapters/oci/registry_client.ts";
import type { Platform } from "../domain/oci/reference.ts";

/** `reference` narrowed to `platform` and pinned by its manifest digest. */
export async function resolveInstallerImage(
  reference: string,
  platform: Platform,
  opts: Pick<RegistryClientOptions, "insecureHttp" | "signal">,
): Promise<ResolvedImage> {
  return await resolveImage(reference, platform, opts);
}
