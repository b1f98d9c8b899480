/**
 * The real `cairn reconcile` against a git remote that accepts and never answers (a loopback
 * listener that stays silent, `git://`): `/readyz` turns not-ready with `GitTimedOut` once the
 * fetch deadline passes, and SIGTERM in the middle of a stuck fetch exits 0 within 10 s (the
 * fetch deadline is a minute: only the stop reaching git explains it), with the journal's hash
 * chain intact afterwards.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { writeKubeconfig } from "../../src/sim/kube/server.ts";
import { mintPki } from "../../src/sim/pki.ts";
import { renderTalosconfig } from "../../src/sim/talos/talosconfig_writer.ts";
import { ROOT } from "../_helpers/cli_run.ts";
import { startSilentListener } from "../_helpers/silent_listener.ts";

interface LogLine {
  readonly level?: string;
  readonly msg: string;
  readonly url?: string;
  readonly reason?: string;
}

/** JSON log lines of the child's stderr, and a wait for the first line matching a test. */
function logLines(stream: ReadableStream<Uint8Array>) {
  const seen: LogLine[] = [];
  const done = (async () => {
    let buf = "";
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
      buf += chunk;
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.startsWith("{")) seen.push(JSON.parse(line) as LogLine);
      }
    }
  })();
  return { seen, done };
}

/** Polls `pred` every 100 ms for up to `ms` (generous: the suite runs under load). */
async function until<T>(
  what: string,
  ms: number,
  pred: () => Promise<T | undefined> | T | undefined,
) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await pred();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A configuration whose cluster files are well-formed (nothing dials them: no fetch succeeds). */
async function setup(remotePort: number, gitTimeoutSeconds: number) {
  const dir = await Deno.makeTempDir({ prefix: "cairn-stuck-" });
  const pki = mintPki({
    dir: join(dir, "pki"),
    caName: "ca",
    algorithm: "p256",
    clients: { admin: [] },
  });
  const kubeconfig = join(dir, "kubeconfig");
  writeKubeconfig(kubeconfig, {
    url: "https://127.0.0.1:9",
    caPem: pki.ca.certPem,
    clientCertPem: pki.clients.admin!.certPem,
    clientKeyPem: pki.clients.admin!.keyPem,
  });
  const talosconfig = join(dir, "talosconfig");
  writeFileSync(
    talosconfig,
    renderTalosconfig([{
      name: "t",
      endpoints: ["127.0.0.1:9"],
      nodes: ["127.0.0.1"],
      caPem: pki.ca.certPem,
      crtPem: pki.clients.admin!.certPem,
      keyPem: pki.clients.admin!.keyPem,
    }]),
  );
  const signers = join(dir, "allowed_signers");
  await Deno.writeTextFile(signers, "");
  const state = join(dir, "state");
  const config = join(dir, "cairn.yaml");
  await Deno.writeTextFile(
    config,
    [
      `remote: git://127.0.0.1:${remotePort}/plans.git`,
      "pollIntervalSeconds: 1",
      `gitTimeoutSeconds: ${gitTimeoutSeconds}`,
      `allowedSignersPath: ${signers}`,
      `stateDir: ${state}`,
      `kubeconfigPath: ${kubeconfig}`,
      `talosconfigPath: ${talosconfig}`,
      "listen: { host: 127.0.0.1, port: 0 }",
      "",
    ].join("\n"),
  );
  return { dir, config, state };
}

function spawnReconcile(config: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "-A", join(ROOT, "src/main.ts"), "reconcile", "--config", config],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  return { child, logs: logLines(child.stderr) };
}

async function readyz(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await fetch(`${url}/readyz`);
  return { status: r.status, body: await r.json() };
}

Deno.test("a remote that accepts and never answers: /readyz turns not-ready at the fetch deadline", async () => {
  const silent = startSilentListener();
  const s = await setup(silent.port, 2);
  const { child, logs } = spawnReconcile(s.config);
  try {
    const started = await until("the ops server", 60_000, () => {
      const l = logs.seen.find((l) => l.msg === "reconciler started");
      return l?.url?.replace(/\/$/, "");
    });
    await until(
      "a connection to the silent remote",
      60_000,
      () => silent.accepted() > 0 || undefined,
    );
    const r = await until("not-ready", 60_000, async () => {
      const r = await readyz(started);
      return r.status === 503 && String(r.body.why).startsWith("GitTimedOut") ? r : undefined;
    });
    assertEquals(r.body.role, "leader");
    assert(String(r.body.why).includes("no answer within 2 s"), String(r.body.why));
    await until(
      "the failed cycle's log line",
      60_000,
      () =>
        logs.seen.some((l) => l.msg === "reconcile cycle failed" && l.reason === "GitTimedOut") ||
        undefined,
    );
  } finally {
    child.kill("SIGKILL");
    await child.status;
    await logs.done;
    await silent.close();
    await Deno.remove(s.dir, { recursive: true });
  }
});

Deno.test("SIGTERM in the middle of a stuck fetch exits 0 within 10 s, journal intact", async () => {
  const silent = startSilentListener();
  const s = await setup(silent.port, 60);
  const { child, logs } = spawnReconcile(s.config);
  try {
    await until(
      "the ops server",
      60_000,
      () => logs.seen.find((l) => l.msg === "reconciler started"),
    );
    // The first fetch is connected and waiting on a remote that will not answer for a minute.
    await until(
      "a connection to the silent remote",
      60_000,
      () => silent.accepted() > 0 || undefined,
    );
    const t0 = performance.now();
    child.kill("SIGTERM");
    const status = await child.status;
    const tookMs = performance.now() - t0;
    await logs.done;
    assertEquals(status.code, 0);
    assert(tookMs < 10_000, `exit took ${Math.round(tookMs)} ms`);
    // deno-lint-ignore no-console -- the figure the report quotes
    console.log(`SIGTERM mid-fetch: exited 0 after ${Math.round(tookMs)} ms`);
    assert(logs.seen.some((l) => l.msg === "reconciler stopped"));
    // The fetch was cut by the stop: said as such, never logged as a failed cycle.
    assert(
      logs.seen.some((l) => l.msg === "reconcile cycle stopped" && l.reason === "GitStopped"),
      JSON.stringify(logs.seen),
    );
    assert(logs.seen.every((l) => l.level !== "error"), JSON.stringify(logs.seen));
    const verify = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--quiet",
        "-A",
        join(ROOT, "src/main.ts"),
        "journal",
        "verify",
        "--journal",
        `file:${join(s.state, "journal.db")}`,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assertEquals(verify.code, 0, new TextDecoder().decode(verify.stderr));
  } finally {
    try {
      child.kill("SIGKILL");
    } catch { /* already exited */ }
    await child.status;
    await silent.close();
    await Deno.remove(s.dir, { recursive: true });
  }
});
