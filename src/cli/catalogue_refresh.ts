/**
 * `cairn catalogue refresh`: reads a GitHub-releases-like API and cairn's support-matrix
 * document into a new dated catalogue snapshot (the format of src/domain/catalogue.ts).
 *
 * Support matrix document (`{base}/cairn/support-matrix.json`):
 * `{"talos": [{"minor": "1.13", "kubernetes": {"min": "1.31", "max": "1.36"}, "kubelet"?: {…}}]}`
 */
import { resolve } from "node:path";
import { stringify } from "yaml";
import { z } from "../domain/zod.ts";
import { type Command, EXIT, OUTPUT_OPTION, printJson, UsageError, wantsJson } from "./command.ts";
import { CairnError } from "../domain/errors.ts";
import { type CatalogueFile, CatalogueSchema, parseCatalogue } from "../domain/catalogue.ts";
import { compareVersions, minorKey, tryParseVersion } from "../domain/version.ts";

const ReleasesSchema = z.array(z.object({
  tag_name: z.string(),
  published_at: z.string().nullable().optional(),
  prerelease: z.boolean().optional(),
  draft: z.boolean().optional(),
}));

const Range = z.strictObject({ min: z.string(), max: z.string() });

/** Schema of `{base}/cairn/support-matrix.json`. */
export const SupportMatrixSchema = z.strictObject({
  talos: z.array(
    z.strictObject({ minor: z.string(), kubernetes: Range, kubelet: Range.optional() }),
  ),
});

/** A release as the API reports it. */
export type ApiRelease = z.infer<typeof ReleasesSchema>[number];
/** The support matrix document. */
export type SupportMatrix = z.infer<typeof SupportMatrixSchema>;

/**
 * Builds the snapshot: published (non-draft) releases grouped under the matrix row of their minor.
 * Releases of minors without a matrix row are left out and listed in `skipped`; they stay unknown
 * to plans (CatalogueUnknownVersion) until the matrix covers them.
 */
export function buildCatalogue(
  releases: readonly ApiRelease[],
  matrix: SupportMatrix,
  meta: { snapshotAt: string; source: string },
): { file: CatalogueFile; skipped: string[] } {
  const skipped: string[] = [];
  const byMinor = new Map<string, ApiRelease[]>();
  for (const r of releases) {
    const v = r.draft ? undefined : tryParseVersion(r.tag_name);
    if (!v || !r.tag_name.startsWith("v")) continue;
    if (!matrix.talos.some((row) => row.minor === minorKey(v))) {
      skipped.push(r.tag_name);
      continue;
    }
    byMinor.set(minorKey(v), [...(byMinor.get(minorKey(v)) ?? []), r]);
  }
  const minors = matrix.talos
    .filter((row) => byMinor.has(row.minor))
    .sort((a, b) =>
      compareVersions(tryParseVersion(`${a.minor}.0`)!, tryParseVersion(`${b.minor}.0`)!)
    )
    .map((row) => ({
      minor: row.minor,
      kubernetes: row.kubernetes,
      ...(row.kubelet ? { kubelet: row.kubelet } : {}),
      releases: byMinor.get(row.minor)!
        .sort((a, b) => compareVersions(tryParseVersion(a.tag_name)!, tryParseVersion(b.tag_name)!))
        .map((r) => ({
          version: r.tag_name,
          ...(r.published_at ? { published: r.published_at.slice(0, 10) } : {}),
        })),
    }));
  const file = CatalogueSchema.parse({
    apiVersion: "cairn.dev/v1alpha1",
    kind: "ReleaseCatalogue",
    metadata: { product: "talos", snapshotAt: meta.snapshotAt, source: meta.source },
    spec: { minors },
  });
  return { file, skipped };
}

export const command: Command = {
  path: ["catalogue", "refresh"],
  summary: "Read the releases API and support matrix into a new dated catalogue snapshot",
  usage: "--base-url URL --out FILE [--snapshot-at RFC3339] [--output json]",
  help: `
Reads GET {base}/repos/siderolabs/talos/releases?per_page=100 (following Link rel="next") and
GET {base}/cairn/support-matrix.json, and writes a new catalogue snapshot to FILE. FILE must
not exist: a snapshot is never overwritten, so a plan bound to an older snapshot's digest sees
the change instead of silently following it.

  --base-url URL       releases API base (e.g. https://api.github.com)
  --out FILE           the new snapshot file (refused if it exists)
  --snapshot-at TIME   snapshot date (RFC 3339 UTC); defaults to now
  --output json        print path, sha256 and counts as JSON`,
  options: {
    "base-url": { type: "string" },
    out: { type: "string" },
    "snapshot-at": { type: "string" },
    ...OUTPUT_OPTION,
  },
  async run(args, io) {
    const base = args.values["base-url"];
    const out = args.values["out"];
    if (typeof base !== "string" || typeof out !== "string") {
      throw new UsageError("--base-url and --out are required");
    }
    const at = args.values["snapshot-at"];
    const snapshotAt = typeof at === "string"
      ? at
      : new Date().toISOString().replace(/\.\d+Z$/, "Z");
    const root = base.replace(/\/+$/, "");
    const releases = await readReleases(
      `${root}/repos/siderolabs/talos/releases?per_page=100`,
      io.signal,
    );
    const matrix = SupportMatrixSchema.safeParse(
      await getJson(`${root}/cairn/support-matrix.json`, io.signal),
    );
    if (!matrix.success) throw sourceError(`support matrix: ${matrix.error.issues[0]?.message}`);
    let built;
    try {
      built = buildCatalogue(releases, matrix.data, { snapshotAt, source: root });
    } catch (e) {
      if (e instanceof z.ZodError) {
        throw sourceError(`snapshot would be invalid: ${e.issues[0]?.message}`);
      }
      throw e;
    }
    const bytes = new TextEncoder().encode(stringify(built.file, { lineWidth: 0 }));
    const path = resolve(io.cwd, out);
    const catalogue = await parseCatalogue(bytes, out);
    await writeNew(path, bytes, out);
    const summary = {
      file: out,
      sha256: catalogue.sha256,
      snapshotAt,
      minors: catalogue.rows.map((r) => r.minor),
      releases: catalogue.rows.reduce((n, r) => n + r.releases.length, 0),
      skipped: built.skipped,
    };
    if (wantsJson(args)) printJson(io, summary);
    else {
      io.stdout(
        `wrote ${out} sha256:${summary.sha256} (${summary.releases} releases, minors ` +
          `${summary.minors.join(", ")})${
            built.skipped.length
              ? `; skipped without a matrix row: ${built.skipped.join(", ")}`
              : ""
          }\n`,
      );
    }
    return EXIT.ok;
  },
};

async function readReleases(first: string, signal: AbortSignal): Promise<ApiRelease[]> {
  const all: ApiRelease[] = [];
  let url: string | undefined = first;
  for (let page = 0; url && page < 20; page++) {
    const res = await get(url, signal);
    const parsed = ReleasesSchema.safeParse(await res.json().catch(() => undefined));
    if (!parsed.success) throw sourceError(`releases page ${page + 1} is not a release list`);
    all.push(...parsed.data);
    url = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get("link") ?? "")?.[1];
  }
  return all;
}

async function getJson(url: string, signal: AbortSignal): Promise<unknown> {
  return await (await get(url, signal)).json().catch(() => {
    throw sourceError(`${url} is not JSON`);
  });
}

async function get(url: string, signal: AbortSignal): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(url, { headers: { accept: "application/json" }, signal });
  } catch (e) {
    throw sourceError(`${url}: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw sourceError(`${url} answered ${res.status}`);
  }
  return res;
}

async function writeNew(path: string, bytes: Uint8Array, shown: string): Promise<void> {
  try {
    await Deno.writeFile(path, bytes, { createNew: true });
  } catch (e) {
    if (e instanceof Deno.errors.AlreadyExists) {
      throw new CairnError({
        reason: "ConfigInvalid",
        message: `${shown} exists; a refresh writes a new snapshot and never overwrites one`,
      });
    }
    throw e;
  }
}

function sourceError(message: string): CairnError {
  return new CairnError({ reason: "CatalogueSourceUnreadable", message });
}
