/**
 * Reads a Helm chart's bundled `values.yaml` from an OCI registry: the chart layer fetched and
 * checked against its digest (`fetchArtifactLayer`), decompressed with a cap on the output (a
 * gzip bomb stops at the cap), and the chart's top-level `values.yaml` taken out of the tar. The
 * defaults a chart carries (the Ceph image of rook-ceph-cluster) are what a bump moves unpinned.
 */
import { CairnError } from "../../domain/errors.ts";
import { findTarFile } from "../../domain/oci/tar.ts";
import { fetchArtifactLayer, type RegistryClientOptions } from "./registry_client.ts";

/** Helm's chart content layer. */
export const HELM_CHART_LAYER = "application/vnd.cncf.helm.chart.content.v1.tar+gzip";
/** Largest chart archive read (compressed). */
export const MAX_CHART_BYTES = 16 * 1024 * 1024;
/** Largest decompressed archive walked. */
export const MAX_CHART_TAR_BYTES = 64 * 1024 * 1024;

/** A chart's values file and where it came from. */
export interface ChartValues {
  readonly reference: string;
  readonly manifestDigest: string;
  readonly layerDigest: string;
  readonly path: string;
  readonly text: string;
}

/** Which file of which layer to read out of an artifact. */
export interface ArtifactFile {
  /** The tar+gzip layer's media type (default: a Helm chart's). */
  readonly layerMediaType?: string;
  /**
   * The file inside the archive: an exact path, or `undefined` for a chart's top-level
   * `values.yaml` (`<chart>/values.yaml`; subcharts sit deeper).
   */
  readonly file?: string;
  /** Cap on the decompressed archive (default {@link MAX_CHART_TAR_BYTES}). */
  readonly maxTarBytes?: number;
}

/** `oci://host/repo` (or `host/repo`) at `tag` → one file of its tar+gzip layer. */
export async function readArtifactFile(
  artifact: string,
  tag: string,
  which: ArtifactFile = {},
  opts: RegistryClientOptions = {},
): Promise<ChartValues> {
  const reference = `${artifact.replace(/^oci:\/\//, "")}:${tag}`;
  const mediaType = which.layerMediaType ?? HELM_CHART_LAYER;
  const layer = await fetchArtifactLayer(reference, mediaType, MAX_CHART_BYTES, opts);
  const tar = await gunzipCapped(layer.bytes, which.maxTarBytes ?? MAX_CHART_TAR_BYTES, reference);
  const wanted = which.file;
  const found = findTarFile(
    tar,
    wanted === undefined
      ? (p) => /^[^/]+\/values\.yaml$/.test(p)
      : (p) => p === wanted || p === `./${wanted}`,
  );
  const name = wanted ?? "values.yaml";
  if (found.kind !== "found") {
    throw new CairnError({
      reason: "RegistryUnreadable",
      message: `${reference}: ${
        found.kind === "absent" ? `the artifact has no ${name}` : found.why
      }`,
    });
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(found.bytes);
  } catch {
    throw new CairnError({
      reason: "RegistryUnreadable",
      message: `${reference}: ${name} is not UTF-8`,
    });
  }
  return {
    reference,
    manifestDigest: layer.manifestDigest,
    layerDigest: layer.digest,
    path: found.path,
    text,
  };
}

/** A Helm chart's top-level `values.yaml` at `tag`. */
export function readChartValues(
  chart: string,
  tag: string,
  opts: RegistryClientOptions = {},
): Promise<ChartValues> {
  return readArtifactFile(chart, tag, {}, opts);
}

async function gunzipCapped(gz: Uint8Array, max: number, what: string): Promise<Uint8Array> {
  const stream = new Blob([gz.slice()]).stream().pipeThrough(new DecompressionStream("gzip"));
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.length;
      if (total > max) {
        await reader.cancel();
        throw new CairnError({
          reason: "RegistryUnreadable",
          message: `${what}: the chart decompresses beyond ${max} bytes`,
        });
      }
      chunks.push(value);
    }
  } catch (e) {
    if (e instanceof CairnError) throw e;
    throw new CairnError({ reason: "RegistryUnreadable", message: `${what}: not a gzip archive` });
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
