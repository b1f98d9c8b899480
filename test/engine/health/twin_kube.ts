/**
 * The two Kube-port calls a watch cache needs (`listObjects`, `watch`), spoken over real HTTPS
 * with a client certificate to the Kubernetes simulator. Test-only: the production adapter lives
 * in src/adapters/kube and is owned elsewhere; this keeps the watch-cache tests on the real wire.
 */
import { request } from "node:https";
import type { IncomingMessage } from "node:http";
import type {
  KubeList,
  KubeListOptions,
  KubeObject,
  KubeResourceRef,
  KubeWatchEnd,
  KubeWatchEvent,
  KubeWatchOptions,
} from "../../../src/ports/kube.ts";
import type { ListWatch } from "../../../src/engine/health/watch_cache.ts";

export interface TwinCreds {
  readonly url: string;
  readonly caPem: string;
  readonly certPem: string;
  readonly keyPem: string;
}

function path(ref: KubeResourceRef, q: Record<string, string>): string {
  const base = ref.group === "" ? `/api/${ref.version}` : `/apis/${ref.group}/${ref.version}`;
  const qs = new URLSearchParams(q).toString();
  return `${base}/${ref.plural}${qs ? "?" + qs : ""}`;
}

function get(c: TwinCreds, p: string, signal?: AbortSignal): Promise<IncomingMessage> {
  const u = new URL(c.url);
  return new Promise((resolve, reject) => {
    const req = request({
      host: u.hostname,
      port: u.port,
      path: p,
      method: "GET",
      ca: c.caPem,
      cert: c.certPem,
      key: c.keyPem,
      servername: "localhost",
      ...(signal ? { signal } : {}),
    }, resolve);
    req.on("error", reject);
    req.end();
  });
}

export function twinKube(c: TwinCreds): ListWatch {
  return {
    async listObjects(ref: KubeResourceRef, opts?: KubeListOptions): Promise<KubeList<KubeObject>> {
      const res = await get(c, path(ref, {}));
      let body = "";
      for await (const chunk of res) body += new TextDecoder().decode(chunk as Uint8Array);
      if (res.statusCode !== 200) throw new Error(`list ${ref.plural}: HTTP ${res.statusCode}`);
      const j = JSON.parse(body) as { items: KubeObject[]; metadata: { resourceVersion: string } };
      const items = opts?.project ? j.items.map(opts.project) : j.items;
      return { items, resourceVersion: j.metadata.resourceVersion };
    },
    async watch(
      ref: KubeResourceRef,
      opts: KubeWatchOptions,
      onEvent: (e: KubeWatchEvent) => void,
    ): Promise<KubeWatchEnd> {
      const q: Record<string, string> = { watch: "true" };
      if (opts.resourceVersion) q["resourceVersion"] = opts.resourceVersion;
      try {
        const res = await get(c, path(ref, q), opts.signal);
        if (res.statusCode === 410) return { kind: "expired" };
        let buf = "";
        for await (const chunk of res) {
          buf += new TextDecoder().decode(chunk as Uint8Array);
          let nl;
          while ((nl = buf.indexOf("\n")) >= 0) {
            const line = buf.slice(0, nl).trim();
            buf = buf.slice(nl + 1);
            if (!line) continue;
            const ev = JSON.parse(line) as { type: string; object: KubeObject };
            if (ev.type === "ERROR") return { kind: "expired" };
            onEvent(ev as KubeWatchEvent);
          }
        }
        return opts.signal?.aborted ? { kind: "aborted" } : { kind: "closed" };
      } catch (e) {
        if (opts.signal?.aborted) return { kind: "aborted" };
        return { kind: "failed", reason: "KubeUnreachable", message: String(e) };
      }
    },
  };
}
