/**
 * The twin's OCI registry in process: the same content (`../registry/installer_images.ts`) and
 * the same answers (`registryAnswer`, shared with the socket registry) behind a `fetch` that never
 * opens a socket, and cairn's real resolver (`adapters/oci/installer_resolver.ts`) over it. The
 * dispatch check then resolves installers in process exactly as it does against the socket twin.
 */
import { registryInstallerResolver } from "../../adapters/oci/installer_resolver.ts";
import type { InstallerResolver } from "../../ports/dispatch.ts";
import type { RegistryContent } from "../registry/installer_images.ts";
import { byName, registryAnswer, type RegistryStats, registryStats } from "../registry/server.ts";

/** A nominal loopback base the resolver's mirror rules accept; nothing ever dials it. */
const BASE = "http://127.0.0.1:5000";

export interface InprocRegistry {
  readonly stats: RegistryStats;
  /** Registry host → the nominal base, for every host the content declares. */
  readonly mirrors: Readonly<Record<string, string>>;
  /** A `fetch` answered by the registry model. */
  readonly fetch: typeof fetch;
  /** cairn's installer resolver over this registry. */
  readonly resolver: InstallerResolver;
}

export function inprocRegistry(content: RegistryContent): InprocRegistry {
  const repos = byName(content);
  const stats = registryStats();
  const answer: typeof fetch = (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const method = init?.method ?? (input instanceof Request ? input.method : "GET");
    if (init?.signal?.aborted) return Promise.reject(init.signal.reason);
    const a = registryAnswer(repos, stats, method, url.pathname);
    const body = a.body === undefined
      ? null
      : typeof a.body === "string"
      ? a.body
      : a.body.slice().buffer;
    return Promise.resolve(
      new Response(body, {
        status: a.status,
        headers: { ...a.headers, "docker-distribution-api-version": "registry/2.0" },
      }),
    );
  };
  const mirrors = Object.fromEntries([...content.keys()].map((host) => [host, BASE]));
  const inner = registryInstallerResolver({ mirrors, fetch: answer, timeoutMs: 20_000 });
  return {
    stats,
    mirrors,
    fetch: answer,
    // Records say where the bytes really came from, not the nominal base.
    resolver: {
      describe: () => `in-process twin registry (serving ${Object.keys(mirrors).join(", ")})`,
      async resolve(reference, platform) {
        const r = await inner.resolve(reference, platform);
        if (!r.ok) return r;
        const host = reference.slice(0, reference.indexOf("/"));
        return {
          ok: true,
          value: { ...r.value, registry: `in-process twin registry (serving ${host})` },
        };
      },
    },
  };
}
