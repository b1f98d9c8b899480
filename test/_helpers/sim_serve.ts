/**
 * Starts the real `cairn sim serve` CLI process on the home-ops fixture and reads the JSON facts
 * it prints (talosconfig, kubeconfig, control endpoint, registry). Shared by the sim serve tests so
 * the spawn, the incremental JSON read and the SIGTERM stop are written once.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { TwinRegistryInfo } from "../../src/sim/twin.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** What `cairn sim serve --output json` prints once the twin is up. */
export type SimServeFacts = Record<string, string | null> & { registry: TwinRegistryInfo };

export interface SimServe {
  readonly stateDir: string;
  readonly facts: SimServeFacts;
  /** Sends SIGTERM and returns the process's exit code; the state directory is kept. */
  stop(): Promise<number>;
}

/** Spawns `cairn sim serve` with `extra` options and waits for its JSON facts. */
export async function startSimServe(extra: readonly string[], prefix: string): Promise<SimServe> {
  const stateDir = mkdtempSync(join(tmpdir(), prefix));
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "src/main.ts",
      "sim",
      "serve",
      "--cluster",
      "fixtures/clusters/home-ops.yaml",
      "--state-dir",
      stateDir,
      "--output",
      "json",
      ...extra,
    ],
    cwd: ROOT,
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const reader = child.stdout.getReader();
  const stop = async () => {
    child.kill("SIGTERM");
    reader.releaseLock();
    await child.stdout.cancel();
    return (await child.status).code;
  };
  try {
    return { stateDir, facts: await readFacts(reader), stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

async function readFacts(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<SimServeFacts> {
  const dec = new TextDecoder();
  let text = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`cairn sim serve ended before printing JSON: ${text}`);
    text += dec.decode(value);
    try {
      return JSON.parse(text) as SimServeFacts;
    } catch { /* not complete yet */ }
  }
}
