/**
 * The reads `cairn evidence check` makes through adapters: the manifest file (capped before it is
 * read) and each pinned source's bytes from the evidence cache. Fetching (`--fetch`) is
 * `fetchEvidenceIntoCache` in `app/evidence_run.ts`; judging is the domain's `checkEvidence`.
 */
import { readCached } from "../adapters/evidence/git_fetch.ts";
import { readPlainFile } from "../adapters/repo/bound_file_reader.ts";
import { CairnError } from "../domain/errors.ts";
import { type EvidenceManifest, MAX_MANIFEST_BYTES } from "../domain/evidence/manifest.ts";

/**
 * The manifest named on the command line: never read through a link, a FIFO or a device, and
 * never more than the manifest size limit (checked before reading). An unreadable file is a
 * FileUnreadable naming it as the user typed it (`shown`).
 */
export async function readEvidenceManifest(path: string, shown: string): Promise<Uint8Array> {
  const read = await readPlainFile(path, MAX_MANIFEST_BYTES);
  if (read.status === "read") return read.bytes;
  throw new CairnError({
    reason: "FileUnreadable",
    message: `cannot read evidence manifest ${shown}: ${read.detail}`,
  });
}

/** Each source's cached bytes by source id; a source missing from the cache has no entry. */
export async function readCachedSources(
  cacheDir: string,
  manifest: EvidenceManifest,
): Promise<Map<string, Uint8Array>> {
  const cached = new Map<string, Uint8Array>();
  for (const s of manifest.sources) {
    const bytes = await readCached(cacheDir, s);
    if (bytes) cached.set(s.id, bytes);
  }
  return cached;
}
