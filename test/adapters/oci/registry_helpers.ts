/**
 * A real OCI registry for tests: Debian's `docker-registry` (distribution 2.x) started on a free
 * loopback port with its storage in a temp dir, plus a small client that pushes blobs,
 * manifests and indexes through the distribution API.
 */
import { join } from "node:path";

export interface LocalRegistry {
  readonly host: string;
  readonly base: string;
  stop(): Promise<void>;
}

async function findOnPath(name: string): Promise<string | undefined> {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    if (!dir) continue;
    try {
      const p = join(dir, name);
      if ((await Deno.stat(p)).isFile) return p;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/** Starts the registry and waits (bounded, real time) until `/v2/` answers. */
export async function startRegistry(): Promise<LocalRegistry> {
  const bin = await findOnPath("docker-registry");
  if (!bin) {
    throw new Error(
      "docker-registry is not on PATH: install Debian's package (apt-get install -y docker-registry); " +
        "the OCI tests need a real registry and do not skip",
    );
  }
  const dir = await Deno.makeTempDir({ prefix: "cairn-registry-" });
  const port = freePort();
  const config = join(dir, "config.yml");
  await Deno.writeTextFile(
    config,
    [
      "version: 0.1",
      "log:",
      "  level: error",
      "  accesslog:",
      "    disabled: true",
      "storage:",
      "  filesystem:",
      `    rootdirectory: ${join(dir, "data")}`,
      "  delete:",
      "    enabled: true",
      "http:",
      `  addr: 127.0.0.1:${port}`,
      "",
    ].join("\n"),
  );
  const child = new Deno.Command(bin, {
    args: ["serve", config],
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const base = `http://127.0.0.1:${port}`;
  const stop = async () => {
    try {
      child.kill("SIGTERM");
    } catch {
      // already exited
    }
    const out = await child.output();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    return new TextDecoder().decode(out.stderr);
  };
  const deadline = performance.now() + 10_000;
  while (performance.now() < deadline) {
    try {
      const res = await fetch(`${base}/v2/`);
      await res.body?.cancel();
      if (res.status === 200) {
        return {
          host: `127.0.0.1:${port}`,
          base,
          stop: async () => void await stop(),
        };
      }
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  const log = await stop();
  throw new Error(`docker-registry did not answer /v2/ within 10 s: ${log.slice(-500)}`);
}

async function sha256(bytes: Uint8Array): Promise<string> {
  const h = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes.slice()));
  return "sha256:" + [...h].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** A descriptor of pushed content. */
export interface Descriptor {
  readonly mediaType: string;
  readonly digest: string;
  readonly size: number;
}

/** Pushes a blob with the monolithic POST-then-PUT upload. */
export async function pushBlob(
  base: string,
  repo: string,
  bytes: Uint8Array,
  mediaType: string,
): Promise<Descriptor> {
  const digest = await sha256(bytes);
  const start = await fetch(`${base}/v2/${repo}/blobs/uploads/`, { method: "POST" });
  await start.body?.cancel();
  if (start.status !== 202) throw new Error(`upload start: ${start.status}`);
  const location = new URL(start.headers.get("location")!, base);
  location.searchParams.set("digest", digest);
  const put = await fetch(location, {
    method: "PUT",
    headers: { "content-type": "application/octet-stream" },
    body: bytes.slice(),
  });
  await put.body?.cancel();
  if (put.status !== 201) throw new Error(`blob put: ${put.status}`);
  return { mediaType, digest, size: bytes.length };
}

/** Pushes a manifest under `ref` (a tag or its digest) and returns its descriptor. */
export async function pushManifest(
  base: string,
  repo: string,
  ref: string | undefined,
  doc: Record<string, unknown>,
): Promise<Descriptor> {
  const bytes = new TextEncoder().encode(JSON.stringify(doc));
  const digest = await sha256(bytes);
  const mediaType = String(doc["mediaType"]);
  const res = await fetch(`${base}/v2/${repo}/manifests/${ref ?? digest}`, {
    method: "PUT",
    headers: { "content-type": mediaType },
    body: bytes,
  });
  const text = await res.text();
  if (res.status !== 201) throw new Error(`manifest put ${ref}: ${res.status} ${text}`);
  return { mediaType, digest, size: bytes.length };
}

/** Pushes a one-layer image for `os/arch[/variant]` and returns its manifest descriptor. */
export async function pushImage(
  base: string,
  repo: string,
  platform: { os: string; architecture: string; variant?: string },
  tag?: string,
): Promise<Descriptor> {
  const enc = new TextEncoder();
  const layer = await pushBlob(
    base,
    repo,
    enc.encode(`layer for ${JSON.stringify(platform)}`),
    "application/vnd.oci.image.layer.v1.tar",
  );
  const configDoc = {
    ...platform,
    rootfs: { type: "layers", diff_ids: [layer.digest] },
    config: {},
  };
  const config = await pushBlob(
    base,
    repo,
    enc.encode(JSON.stringify(configDoc)),
    "application/vnd.oci.image.config.v1+json",
  );
  return await pushManifest(base, repo, tag, {
    schemaVersion: 2,
    mediaType: "application/vnd.oci.image.manifest.v1+json",
    config,
    layers: [layer],
  });
}

/** Pushes an OCI index over `images` under `tag`. */
export async function pushIndex(
  base: string,
  repo: string,
  tag: string,
  images: ReadonlyArray<
    { descriptor: Descriptor; platform: { os: string; architecture: string; variant?: string } }
  >,
): Promise<Descriptor> {
  return await pushManifest(base, repo, tag, {
    schemaVersion: 2,
    mediaType: "application/vnd.oci.image.index.v1+json",
    manifests: images.map((i) => ({ ...i.descriptor, platform: i.platform })),
  });
}
