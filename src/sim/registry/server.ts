/**
 * A read-only OCI distribution endpoint on loopback serving the twin's installer images
 * (`installer_images.ts`). It answers the pull side of the distribution API that cairn's
 * resolver uses — `GET|HEAD /v2/`, `/v2/<name>/manifests/<tag|digest>`, `/v2/<name>/blobs/<digest>`
 * — with `Docker-Content-Digest` and the manifest's media type, and the spec's error bodies
 * (`NAME_UNKNOWN`, `MANIFEST_UNKNOWN`, `BLOB_UNKNOWN`) for anything it does not hold. Writes are
 * refused (`UNSUPPORTED`): nothing in a rehearsal pushes images.
 *
 * One listener serves every declared registry host: clients map each host to this URL (the
 * twin's `registry.mirrors`), so a repository name must not be declared under two hosts.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Content, RegistryContent, Repository } from "./installer_images.ts";

/** Request counters, read through the twin's control endpoint. */
export interface RegistryStats {
  requests: number;
  manifests: number;
  blobs: number;
  notFound: number;
  refusedWrites: number;
}

export interface RegistrySim {
  /** `http://127.0.0.1:PORT`. */
  readonly url: string;
  /** Registry host → this URL, for every host the content declares. */
  readonly mirrors: Readonly<Record<string, string>>;
  readonly stats: RegistryStats;
  stop(): Promise<void>;
}

function byName(content: RegistryContent): Map<string, Repository> {
  const out = new Map<string, Repository>();
  for (const [host, repos] of content) {
    for (const [name, repo] of repos) {
      if (out.has(name)) {
        throw new Error(`registry: repository ${name} is declared under two hosts (${host})`);
      }
      out.set(name, repo);
    }
  }
  return out;
}

function error(res: ServerResponse, status: number, code: string, message: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ errors: [{ code, message, detail: null }] }));
}

function send(req: IncomingMessage, res: ServerResponse, c: Content): void {
  res.writeHead(200, {
    "content-type": c.mediaType,
    "content-length": String(c.bytes.length),
    "docker-content-digest": c.digest,
  });
  res.end(req.method === "HEAD" ? undefined : c.bytes);
}

/** Starts the registry on 127.0.0.1 and resolves once it listens. */
export function startRegistrySim(content: RegistryContent, port = 0): Promise<RegistrySim> {
  const repos = byName(content);
  const stats: RegistryStats = {
    requests: 0,
    manifests: 0,
    blobs: 0,
    notFound: 0,
    refusedWrites: 0,
  };
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    stats.requests++;
    res.setHeader("docker-distribution-api-version", "registry/2.0");
    if (req.method !== "GET" && req.method !== "HEAD") {
      stats.refusedWrites++;
      return error(res, 405, "UNSUPPORTED", "the twin's registry is read-only");
    }
    const path = new URL(req.url ?? "/", "http://registry").pathname;
    if (path === "/v2/" || path === "/v2") {
      res.writeHead(200, { "content-type": "application/json" });
      return res.end(req.method === "HEAD" ? undefined : "{}");
    }
    const m = /^\/v2\/(.+)\/(manifests|blobs)\/([^/]+)$/.exec(path);
    const repo = m ? repos.get(m[1]!) : undefined;
    if (!m || !repo) {
      stats.notFound++;
      return error(res, 404, "NAME_UNKNOWN", `repository ${m?.[1] ?? path} is not known`);
    }
    const [, , kind, ref] = m as unknown as [string, string, string, string];
    if (kind === "manifests") {
      stats.manifests++;
      const c = repo.manifests.get(repo.tags.get(ref) ?? ref);
      if (c) return send(req, res, c);
      stats.notFound++;
      return error(res, 404, "MANIFEST_UNKNOWN", `manifest ${ref} is not known`);
    }
    stats.blobs++;
    const b = repo.blobs.get(ref);
    if (b) return send(req, res, b);
    stats.notFound++;
    return error(res, 404, "BLOB_UNKNOWN", `blob ${ref} is not known`);
  };
  const server: Server = createServer(handle);
  return new Promise((resolve) =>
    server.listen(port, "127.0.0.1", () => {
      const addr = server.address();
      const url = `http://127.0.0.1:${typeof addr === "object" && addr ? addr.port : port}`;
      resolve({
        url,
        mirrors: Object.fromEntries([...content.keys()].map((host) => [host, url])),
        stats,
        stop: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    })
  );
}
