/**
 * A real Alertmanager (Debian's `prometheus-alertmanager`, tools/system_packages.sh) started on
 * loopback by the test itself: its own config, storage directory and port, clustering off. Ready
 * is awaited with a generous bound; `stop` kills only the process started here.
 */
import { join } from "node:path";
import { createServer } from "node:net";

export interface RealAlertmanager {
  readonly url: string;
  /** Posts alerts through the v2 API, as Prometheus does. */
  fire(alerts: ReadonlyArray<{ labels: Record<string, string>; startsAt?: string }>): Promise<void>;
  stop(): Promise<void>;
}

const BINARY = Deno.env.get("CAIRN_ALERTMANAGER") ?? "prometheus-alertmanager";

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export async function startAlertmanager(): Promise<RealAlertmanager> {
  const dir = await Deno.makeTempDir({ prefix: "cairn-am-" });
  const config = join(dir, "alertmanager.yml");
  await Deno.writeTextFile(
    config,
    'route:\n  receiver: "null"\n  group_wait: 1h\nreceivers:\n  - name: "null"\n',
  );
  const port = await freePort();
  const child = new Deno.Command(BINARY, {
    args: [
      `--config.file=${config}`,
      `--storage.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--cluster.listen-address=",
    ],
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    try {
      child.kill("SIGTERM");
    } catch { /* already gone */ }
    await child.stderr.cancel().catch(() => {});
    await child.status;
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  const deadline = Date.now() + 30_000;
  while (true) {
    try {
      const r = await fetch(`${url}/-/ready`);
      await r.body?.cancel();
      if (r.ok) break;
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`${BINARY} did not become ready on ${url} within 30 s`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    async fire(alerts) {
      const r = await fetch(`${url}/api/v2/alerts`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(alerts.map((a) => ({
          labels: a.labels,
          startsAt: a.startsAt ?? new Date().toISOString(),
        }))),
      });
      await r.body?.cancel();
      if (!r.ok) throw new Error(`posting alerts: HTTP ${r.status}`);
    },
    stop,
  };
}
