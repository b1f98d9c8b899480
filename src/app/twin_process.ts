/**
 * Starts the twin (Talos apid simulator and Kubernetes simulator) as a Node process built from
 * `src/sim/twin_main.ts` and reports where it listens. Used by `cairn sim serve`, rehearsals,
 * the demo, tests and benchmarks.
 *
 * The twin runs under Node, not Deno: Deno 2.9.6's node:http2 server aborts when a busy client
 * closes its connection (denoland/deno#36788).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, renameSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";
import { CairnError } from "../domain/errors.ts";
import type { TwinRegistryInfo } from "../sim/twin.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** The PKI cache tests and benchmarks share (throwaway keys under the git-ignored .cache/). */
export const TEST_PKI_CACHE = join(ROOT, ".cache", "twin-pki");

export interface TwinProcessOptions {
  /** Cluster description YAML. */
  readonly cluster: string;
  /** Where the twin writes talosconfig, kubeconfig, PKI and twin.json (default: a temp dir). */
  readonly stateDir?: string;
  readonly seed?: number;
  readonly talosPort?: number;
  readonly controlPort?: number;
  /** Start without the Kubernetes simulator. */
  readonly noKube?: boolean;
  /**
   * Reuse throwaway certificates minted into this directory by earlier twins (tests and
   * benchmarks; minting costs about a second). Default: mint fresh ones into the state dir.
   */
  readonly pkiCacheDir?: string;
  /** Virtual time moves only through the control endpoint (no auto-advance on open streams). */
  readonly manualTime?: boolean;
  /**
   * Virtual time follows the real clock, `speed` times as fast, from the real now (a practice
   * cluster for `cairn sim serve`); overrides `manualTime`. Default: time is driven by clients.
   */
  readonly wallClock?: { readonly speed: number };
  /** Node executable (default `$CAIRN_NODE` or `node`). */
  readonly nodeBin?: string;
  /** Lines the twin writes on stderr go here (default: dropped). */
  readonly onStderr?: (line: string) => void;
}

export interface TwinProcess {
  readonly pid: number;
  readonly stateDir: string;
  readonly cluster: string;
  readonly talosEndpoint: string;
  readonly talosconfigPath: string;
  readonly kubeconfigPath: string | null;
  readonly kubeUrl: string | null;
  readonly controlUrl: string;
  readonly nodes: readonly string[];
  /** The twin's OCI registry for its installer images, and the hosts it stands in for. */
  readonly registry: TwinRegistryInfo;
  /** Resolves with the exit code (or signal name) when the process ends. */
  readonly exited: Promise<number | string>;
  stop(): Promise<number | string>;
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs);
  }
  return newest;
}

function mtimeOr0(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

/** Bundles the twin for Node into `.cache/twin.mjs` when any source it may include is newer. */
export async function ensureTwinBundle(denoBin = Deno.execPath()): Promise<string> {
  const out = join(ROOT, ".cache", "twin.mjs");
  const sources = ["src/sim", "src/domain", "src/ports", "src/adapters"]
    .map((d) => join(ROOT, d)).filter((d) => mtimeOr0(d) > 0);
  const newest = Math.max(...sources.map(newestMtime), mtimeOr0(join(ROOT, "deno.lock")));
  if (mtimeOr0(out) > newest) return out;
  // Bundle to a private name, then rename: parallel test files may race here.
  const tmp = `${out}.${Deno.pid}.${Date.now()}.mjs`;
  const r = await new Deno.Command(denoBin, {
    args: ["bundle", "--quiet", "--platform=node", "-o", tmp, join(ROOT, "src/sim/twin_main.ts")],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!r.success) {
    throw new CairnError({
      reason: "Internal",
      message: `bundling the twin failed: ${new TextDecoder().decode(r.stderr)}`,
    });
  }
  renameSync(tmp, out);
  return out;
}

/** Starts the twin in a Node child process and waits until it reports ready. */
export async function startTwinProcess(opts: TwinProcessOptions): Promise<TwinProcess> {
  const bundle = await ensureTwinBundle();
  const stateDir = opts.stateDir ?? mkdtempSync(join(tmpdir(), "cairn-twin-"));
  const args = [
    // The bundled Kubernetes server code imports Node's deprecated punycode; the warning is noise.
    "--no-deprecation",
    bundle,
    "--cluster",
    resolve(opts.cluster),
    "--state-dir",
    stateDir,
    "--proto-dir",
    join(ROOT, "proto"),
    "--seed",
    String(opts.seed ?? 1),
  ];
  if (opts.talosPort !== undefined) args.push("--talos-port", String(opts.talosPort));
  if (opts.controlPort !== undefined) args.push("--control-port", String(opts.controlPort));
  if (opts.noKube) args.push("--no-kube");
  if (opts.wallClock) args.push("--wall-clock", "--speed", String(opts.wallClock.speed));
  else if (opts.manualTime) args.push("--manual-time");
  if (opts.pkiCacheDir) args.push("--pki-cache", opts.pkiCacheDir);
  const nodeBin = opts.nodeBin ?? Deno.env.get("CAIRN_NODE") ?? "node";
  args.push("--exit-with-parent");
  const child = spawn(nodeBin, args, { stdio: ["pipe", "pipe", "pipe"] });
  const exited = new Promise<number | string>((res) =>
    child.on("exit", (code, signal) => res(code ?? signal ?? -1))
  );
  const errLines: string[] = [];
  createInterface({ input: child.stderr! }).on("line", (l) => {
    errLines.push(l);
    opts.onStderr?.(l);
  });
  const lines = createInterface({ input: child.stdout! });
  const ready = await new Promise<Record<string, unknown>>((res, rej) => {
    lines.on("line", (l) => {
      if (l.startsWith("{")) res(JSON.parse(l));
    });
    void exited.then((code) =>
      rej(
        new CairnError({
          reason: "Internal",
          message: `twin exited (${code}) before it was ready: ${errLines.join("\n")}`,
        }),
      )
    );
  });
  const stop = () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      // A twin that does not finish its graceful stop in time is killed: stopping must not hang.
      const force = setTimeout(() => child.kill("SIGKILL"), 5_000);
      void exited.finally(() => clearTimeout(force));
    }
    return exited;
  };
  return {
    pid: child.pid!,
    stateDir,
    cluster: String(ready["cluster"]),
    talosEndpoint: String(ready["talosEndpoint"]),
    talosconfigPath: String(ready["talosconfigPath"]),
    kubeconfigPath: (ready["kubeconfigPath"] as string | null) ?? null,
    kubeUrl: (ready["kubeUrl"] as string | null) ?? null,
    controlUrl: String(ready["controlUrl"]),
    nodes: ready["nodes"] as string[],
    registry: ready["registry"] as TwinRegistryInfo,
    exited,
    stop,
  };
}
