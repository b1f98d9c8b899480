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
import { keepIdleConnections } from "../idle_connections.ts";
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

/** Repositories by name across every declared host (one listener serves them all). */
export function byName(content: RegistryContent): Map<string, Repository> {
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

/** What the registry answers to one request, before any transport. */
export interface RegistryAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** Absent for HEAD. */
  readonly body?: Uint8Array | string;
}

function error(status: number, code: string, message: string): RegistryAnswer {
  return {
    status,
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ errors: [{ code, message, detail: null }] }),
  };
}

function content(method: string, c: Content): RegistryAnswer {
  return {
    status: 200,
    headers: {
      "content-type": c.mediaType,
      "content-length": String(c.bytes.length),
      "docker-content-digest": c.digest,
    },
    ...(method === "HEAD" ? {} : { body: c.bytes }),
  };
}

/**
 * Answers one request of the pull side of the distribution API (the socket registry and the
 * in-process twin share it), counting it in `stats`.
 */
export function registryAnswer(
  repos: ReadonlyMap<string, Repository>,
  stats: RegistryStats,
  method: string,
  path: string,
): RegistryAnswer {
  stats.requests++;
  if (method !== "GET" && method !== "HEAD") {
    stats.refusedWrites++;
    return error(405, "UNSUPPORTED", "the twin's registry is read-only");
  }
  if (path === "/v2/" || path === "/v2") {
    return {
      status: 200,
      headers: { "content-type": "application/json" },
      ...(method === "HEAD" ? {} : { body: "{}" }),
    };
  }
  const m = /^\/v2\/(.+)\/(manifests|blobs)\/([^/]+)$/.exec(path);
  const repo = m ? repos.get(m[1]!) : undefined;
  if (!m || !repo) {
    stats.notFound++;
    return error(404, "NAME_UNKNOWN", `repository ${m?.[1] ?? path} is not known`);
  }
  const [, , kind, ref] = m as unknown as [string, string, string, string];
  if (kind === "manifests") {
    stats.manifests++;
    const c = repo.manifests.get(repo.tags.get(ref) ?? ref);
    if (c) return content(method, c);
    stats.notFound++;
    return error(404, "MANIFEST_UNKNOWN", `manifest ${ref} is not known`);
  }
  stats.blobs++;
  const b = repo.blobs.get(ref);
  if (b) return content(method, b);
  stats.notFound++;
  return error(404, "BLOB_UNKNOWN", `blob ${ref} is not known`);
}

/** A fresh set of counters. */
export function registryStats(): RegistryStats {
  return { requests: 0, manifests: 0, blobs: 0, notFound: 0, refusedWrites: 0 };
}

/** Starts the registry on 127.0.0.1 and resolves once it listens. */
export function startRegistrySim(content: RegistryContent, port = 0): Promise<RegistrySim> {
  const repos = byName(content);
  const stats = registryStats();
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    res.setHeader("docker-distribution-api-version", "registry/2.0");
    const path = new URL(req.url ?? "/", "http://registry").pathname;
    const a = registryAnswer(repos, stats, req.method ?? "GET", path);
    res.writeHead(a.status, a.headers);
    res.end(a.body);
  };
  const server: Server = keepIdleConnections(createServer(handle));
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
