/**
 * A loopback OCI registry serving Helm charts built in memory (ustar + gzip), for tests of
 * reading a chart's bundled values. Serves manifests by tag and blobs by digest; `tamper`
 * serves other bytes for a blob than its digest says.
 */
import { sha256Hex } from "../../src/domain/plan/digest.ts";

const enc = new TextEncoder();

/** A ustar archive of `files` (path → text). */
export function tarOf(files: Readonly<Record<string, string>>): Uint8Array {
  const blocks: Uint8Array[] = [];
  for (const [path, text] of Object.entries(files)) {
    const body = enc.encode(text);
    const h = new Uint8Array(512);
    const put = (s: string, at: number) => h.set(enc.encode(s), at);
    put(path, 0);
    put("0000644\0", 100);
    put("0000000\0", 108);
    put("0000000\0", 116);
    put(body.length.toString(8).padStart(11, "0") + "\0", 124);
    put("00000000000\0", 136);
    put("        ", 148);
    h[156] = "0".charCodeAt(0);
    put("ustar\0", 257);
    put("00", 263);
    const sum = h.reduce((a, b) => a + b, 0);
    put(sum.toString(8).padStart(6, "0") + "\0 ", 148);
    blocks.push(h, body, new Uint8Array((512 - (body.length % 512)) % 512));
  }
  blocks.push(new Uint8Array(1024));
  const out = new Uint8Array(blocks.reduce((a, b) => a + b.length, 0));
  let at = 0;
  for (const b of blocks) {
    out.set(b, at);
    at += b.length;
  }
  return out;
}

export async function gzip(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes.slice()]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

export interface ChartRegistry {
  readonly url: string;
  /** Serve a chart: `repo` (e.g. `rook/rook-ceph-cluster`) at `tag` with these files. */
  add(
    repo: string,
    tag: string,
    files: Readonly<Record<string, string>>,
    layerMediaType?: string,
  ): Promise<void>;
  /** Serve these bytes for the blob `digest` instead of its own. */
  tamper(digest: string, bytes: Uint8Array): void;
  layerDigest(repo: string, tag: string): string;
  close(): Promise<void>;
}

export function startChartRegistry(): ChartRegistry {
  const manifests = new Map<string, Uint8Array>();
  const blobs = new Map<string, Uint8Array>();
  const layers = new Map<string, string>();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const path = new URL(req.url).pathname;
    const m = /^\/v2\/(.+)\/(manifests|blobs)\/([^/]+)$/.exec(path);
    const body = m
      ? (m[2] === "manifests" ? manifests.get(`${m[1]}:${m[3]}`) : blobs.get(m[3]!))
      : undefined;
    if (!body) {
      return new Response(JSON.stringify({ errors: [{ code: "MANIFEST_UNKNOWN" }] }), {
        status: 404,
      });
    }
    const type = m![2] === "manifests"
      ? "application/vnd.oci.image.manifest.v1+json"
      : "application/octet-stream";
    return new Response(body.slice(), { headers: { "content-type": type } });
  });
  const addr = server.addr as Deno.NetAddr;
  return {
    url: `http://127.0.0.1:${addr.port}`,
    async add(
      repo,
      tag,
      files,
      layerMediaType = "application/vnd.cncf.helm.chart.content.v1.tar+gzip",
    ) {
      const layer = await gzip(tarOf(files));
      const config = enc.encode(JSON.stringify({ name: repo.split("/").pop(), version: tag }));
      const layerDigest = `sha256:${await sha256Hex(layer)}`;
      const configDigest = `sha256:${await sha256Hex(config)}`;
      blobs.set(layerDigest, layer);
      blobs.set(configDigest, config);
      layers.set(`${repo}:${tag}`, layerDigest);
      manifests.set(
        `${repo}:${tag}`,
        enc.encode(JSON.stringify({
          schemaVersion: 2,
          mediaType: "application/vnd.oci.image.manifest.v1+json",
          config: {
            mediaType: "application/vnd.cncf.helm.config.v1+json",
            digest: configDigest,
            size: config.length,
          },
          layers: [{
            mediaType: layerMediaType,
            digest: layerDigest,
            size: layer.length,
          }],
        })),
      );
    },
    tamper(digest, bytes) {
      blobs.set(digest, bytes);
    },
    layerDigest: (repo, tag) => layers.get(`${repo}:${tag}`)!,
    close: () => server.shutdown(),
  };
}
