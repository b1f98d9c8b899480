import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { createHmac } from "node:crypto";
import { join } from "node:path";
import { startReconcileWorld } from "../_helpers/reconcile_world.ts";
import { ROOT } from "../_helpers/twin_world.ts";

interface LogLine {
  readonly msg: string;
  readonly url?: string;
  readonly level: string;
}

/** Reads JSON log lines from the child's stderr; `next(msg)` resolves at the first match. */
function logReader(stream: ReadableStream<Uint8Array>) {
  const seen: LogLine[] = [];
  const waiters: Array<{ msg: string; resolve: (l: LogLine) => void }> = [];
  const done = (async () => {
    let buf = "";
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
      buf += chunk;
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (!line.startsWith("{")) continue;
        const entry = JSON.parse(line) as LogLine;
        seen.push(entry);
        for (const w of waiters.filter((w) => w.msg === entry.msg)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(entry);
        }
      }
    }
  })();
  return {
    seen,
    done,
    next(msg: string): Promise<LogLine> {
      return new Promise((resolve) => waiters.push({ msg, resolve }));
    },
  };
}

const HOOK_SECRET = "test-only-hook-secret";

Deno.test("cairn reconcile serves ops endpoints, previews on a webhook, and exits 0 on SIGTERM", async () => {
  const w = await startReconcileWorld();
  const state = join(w.dir, "cli-state");
  const config = join(w.dir, "cairn.yaml");
  const hookSecretPath = join(w.dir, "hook-secret");
  await Deno.writeTextFile(hookSecretPath, `${HOOK_SECRET}\n`);
  await Deno.writeTextFile(
    config,
    [
      `remote: ${w.daemon.url("plans.git")}`,
      "branch: main",
      'planBranchesGlob: "plan/*"',
      "pollIntervalSeconds: 3600",
      `allowedSignersPath: ${w.trustPath}`,
      `stateDir: ${state}`,
      `kubeconfigPath: ${w.tc.twin.kubeconfigPath}`,
      `talosconfigPath: ${w.tc.twin.talosconfigPath}`,
      "listen: { host: 127.0.0.1, port: 0 }",
      `hookSecretPath: ${hookSecretPath}`,
      "",
    ].join("\n"),
  );
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "-A",
      join(ROOT, "src/main.ts"),
      "reconcile",
      "--config",
      config,
    ],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const logs = logReader(child.stderr);
  try {
    const started = await Promise.race([
      logs.next("reconciler started"),
      child.status.then((s) => {
        throw new Error(`reconcile exited ${s.code}: ${JSON.stringify(logs.seen)}`);
      }),
    ]);
    const base = started.url!; // the logger normalises URLs (trailing slash)
    const url = base.replace(/\/$/, "");
    const healthz = await fetch(`${url}/healthz`);
    await healthz.body?.cancel();
    assertEquals(healthz.status, 200);

    const plan = "talos-v1.14.2";
    await w.wt.checkout(`plan/${plan}`, true);
    await w.wt.commit({
      [`plans/${plan}.yaml`]: w.planText,
      [`plans/${plan}.yaml.sig`]: await w.sign(w.planText, ["alice", "bob"]),
    }, "plan");
    await w.wt.push(`plan/${plan}`);
    const fetches = async () => {
      const text = await (await fetch(`${url}/metrics`)).text();
      return Number(/^cairn_git_fetch_seconds_count (\d+)/m.exec(text)?.[1]);
    };
    // The loop's first fetch may still be in flight once the server answers (the count is absent
    // until it is recorded): wait for it, or a slow first fetch would read as a woken loop.
    let atStart = await fetches();
    for (let i = 0; Number.isNaN(atStart) && i < 300; i++) {
      await new Promise((r) => setTimeout(r, 100));
      atStart = await fetches();
    }
    assertEquals(atStart, 1, "the loop's first fetch (poll interval 3600 s: no second one)");
    // Unauthenticated hooks are answered 401 and never wake the loop (no fetch follows).
    const body = '{"ref":"refs/heads/plan/x"}';
    const sign = (b: string) =>
      "sha256=" + createHmac("sha256", HOOK_SECRET).update(b).digest("hex");
    for (
      const headers of [{}, { "x-hub-signature-256": sign(body + " ") }, { "x-cairn-token": "no" }]
    ) {
      const refused = await fetch(`${url}/hooks/git`, { method: "POST", headers, body });
      await refused.body?.cancel();
      assertEquals(refused.status, 401, JSON.stringify(headers));
    }
    await new Promise((r) => setTimeout(r, 1_000));
    assertEquals(await fetches(), atStart, "a refused hook woke the loop");
    const published = logs.next("reports published");
    const hook = await fetch(`${url}/hooks/git`, {
      method: "POST",
      headers: { "x-hub-signature-256": sign(body) },
      body,
    });
    await hook.body?.cancel();
    assertEquals(hook.status, 202);
    await published; // the hour-long poll cannot explain it: the hook woke the loop
    assert(await w.reportAt(`reports/${plan}/preview/plan~${plan}.md`), "preview committed");

    const ready = await fetch(`${url}/readyz`);
    await ready.body?.cancel();
    assertEquals(ready.status, 200);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    assert(/^cairn_git_fetch_seconds_count [1-9]/m.test(metrics), metrics);
    assert(/^cairn_git_commit_seconds_count [1-9]/m.test(metrics), metrics);
    assert(/^cairn_operations\{state="completed"\} 0/m.test(metrics), metrics);

    child.kill("SIGTERM");
    const status = await child.status;
    await logs.done;
    assertEquals(status.code, 0);
    assert(logs.seen.some((l) => l.msg === "reconciler stopped"));
    assert(logs.seen.every((l) => l.level !== "error"), JSON.stringify(logs.seen));
  } finally {
    try {
      child.kill("SIGKILL");
    } catch { /* already exited */ }
    await child.status;
    await w.stop();
  }
});
