/**
 * The InstallerResolver port over the OCI registry client: each call resolves one reference for
 * one platform within a deadline. A registry host may be served from another base URL (the twin's
 * loopback registry stands in for `factory.talos.dev` in tests, rehearsals and the demo); the
 * reference keeps its host and the record names the endpoint that answered.
 */
import { CairnError } from "../../domain/errors.ts";
import type { InstallerResolver } from "../../ports/dispatch.ts";
import { resolveImage } from "./registry_client.ts";

export interface RegistryResolverOptions {
  /** Registry host → base URL that serves it (`factory.talos.dev` → `http://127.0.0.1:5000`). */
  readonly mirrors?: Readonly<Record<string, string>>;
  /** Wall-clock bound of one resolution. */
  readonly timeoutMs: number;
  /** The HTTP client (default the global `fetch`). */
  readonly fetch?: typeof fetch;
}

/** Resolves installer references through the distribution API. */
export function registryInstallerResolver(o: RegistryResolverOptions): InstallerResolver {
  const mirrors = o.mirrors ?? {};
  const names = Object.entries(mirrors).map(([h, e]) => `${h} via ${e}`);
  return {
    describe: () => names.length ? `registry (${names.join(", ")})` : "registry",
    async resolve(reference, platform) {
      const host = reference.slice(0, reference.indexOf("/"));
      try {
        const r = await resolveImage(reference, platform, {
          mirrors,
          signal: AbortSignal.timeout(o.timeoutMs),
          ...(o.fetch ? { fetch: o.fetch } : {}),
        });
        return {
          ok: true,
          value: {
            reference,
            platform: r.platform,
            digest: r.digest,
            ...(r.indexDigest ? { indexDigest: r.indexDigest } : {}),
            registry: mirrors[host] ? `${mirrors[host]} (serving ${host})` : host,
          },
        };
      } catch (e) {
        if (e instanceof CairnError) {
          return { ok: false, failure: { reason: e.reason, message: e.message } };
        }
        const message = e instanceof Error ? e.message : String(e);
        return { ok: false, failure: { reason: "RegistryUnreadable", message } };
      }
    },
  };
}
