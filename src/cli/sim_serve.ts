/**
 * `cairn sim serve --cluster FILE [--state-dir D] [--speed N | --manual-time]`: runs the twin
 * (Talos apid simulator, and the Kubernetes simulator when wired in) in a Node process
 * (`app/twin_process.ts`) as a practice cluster on wall-clock time, prints the talosconfig and
 * kubeconfig paths and the control URL, and stops on SIGINT/SIGTERM.
 */
import { resolve } from "node:path";
import { type Command, EXIT, printJson, UsageError, wantsJson } from "./command.ts";
import { CairnError } from "../domain/errors.ts";
import { startTwinProcess, type TwinProcess } from "../app/twin_process.ts";

export const command: Command = {
  path: ["sim", "serve"],
  summary: "Run the twin of a cluster (Talos and Kubernetes API simulators) until stopped",
  usage: "--cluster FILE [--state-dir DIR] [--seed N] [--speed N | --manual-time] [--output json]",
  help: `
Starts the twin described by a cluster description (fixtures/clusters/*.yaml) in a Node process
and prints where its talosconfig and kubeconfig are, and the URL of its control endpoint
(advance virtual time, arm faults, read call counts). Runs until SIGINT or SIGTERM.

Time runs with the real clock from the real now, as on a real cluster: evicted pods finish
terminating while kubectl waits, and AGE columns read right. --speed 10 runs it ten times as
fast (timestamps then run ahead of the real clock). --manual-time freezes it: time moves only
through the control endpoint (POST /advance) or while a Talos stream is open, from the cluster
description's startTime, as tests and rehearsals drive it.

The cluster's Flux objects answer kubectl as on a Flux cluster (kubectl get ks,hr,gitrepo,ocirepo
-A: AGE, READY, STATUS with the revision). To practise a GitOps delivery, have the twin's Flux
deliver a merge: POST {"commit": "<40 hex>", "ociTags": {"NS/NAME": "TAG"}} to the control
endpoint's /gitops/merge; the revision, the moved charts, the releases and what the charts render
then change on the twin's clock.

Options:
  --cluster FILE     cluster description (required)
  --state-dir DIR    where to write talosconfig, kubeconfig, certificates and twin.json
                     (default: a new temporary directory)
  --seed N           seed for boot IDs and other random facts (default 1)
  --speed N          virtual seconds per real second (default 1)
  --manual-time      virtual time moves only when a client drives it (tests)
  --output json      print the endpoints as one JSON object`,
  options: {
    cluster: { type: "string" },
    "state-dir": { type: "string" },
    seed: { type: "string" },
    speed: { type: "string" },
    "manual-time": { type: "boolean" },
    output: { type: "string", short: "o", default: "text" },
  },
  positionals: { min: 0, max: 0 },
  async run(args, io) {
    const cluster = args.values["cluster"];
    if (typeof cluster !== "string") throw new UsageError("--cluster FILE is required");
    const stateDir = args.values["state-dir"];
    const manualTime = args.values["manual-time"] === true;
    const speedText = args.values["speed"];
    const speed = typeof speedText === "string" ? Number(speedText) : 1;
    if (!Number.isFinite(speed) || speed <= 0) {
      throw new UsageError(`--speed must be a positive number, got "${speedText}"`);
    }
    if (manualTime && typeof speedText === "string") {
      throw new UsageError("--speed and --manual-time exclude each other");
    }
    await requireReadable(resolve(io.cwd, cluster));
    const twin = await startTwinProcess({
      cluster: resolve(io.cwd, cluster),
      ...(typeof stateDir === "string" ? { stateDir: resolve(io.cwd, stateDir) } : {}),
      seed: Number(args.values["seed"] ?? "1"),
      ...(manualTime ? { manualTime: true } : { wallClock: { speed } }),
      onStderr: (l) => io.stderr(l + "\n"),
    });
    const facts = {
      cluster: twin.cluster,
      talosconfig: twin.talosconfigPath,
      kubeconfig: twin.kubeconfigPath,
      talosEndpoint: twin.talosEndpoint,
      kubeUrl: twin.kubeUrl,
      control: twin.controlUrl,
      registry: twin.registry,
      stateDir: twin.stateDir,
      time: manualTime ? "manual" : { speed },
    };
    if (wantsJson(args)) printJson(io, facts);
    else {
      io.stdout(servingText(twin, manualTime ? "manual" : speed));
    }
    const onAbort = () => void twin.stop();
    io.signal.addEventListener("abort", onAbort, { once: true });
    const code = await twin.exited;
    io.signal.removeEventListener("abort", onAbort);
    return io.signal.aborted || code === 0 ? EXIT.ok : EXIT.internal;
  },
};

/**
 * What a person reads: where everything is, then how to point kubectl, talosctl and cairn at it
 * (the environment variables, and the mirror flag without which a preview cannot resolve the
 * installer at factory.talos.dev and holds).
 */
export function servingText(
  twin: Pick<
    TwinProcess,
    | "cluster"
    | "pid"
    | "talosconfigPath"
    | "kubeconfigPath"
    | "controlUrl"
    | "registry"
    | "stateDir"
  >,
  time: "manual" | number,
): string {
  const hosts = Object.keys(twin.registry.mirrors);
  const mirrors = Object.entries(twin.registry.mirrors)
    .map(([host, url]) => ` --registry-mirror ${host}=${url}`).join("");
  return `twin of ${twin.cluster} is running (pid ${twin.pid})\n` +
    `talosconfig: ${twin.talosconfigPath}\n` +
    `kubeconfig:  ${twin.kubeconfigPath ?? "(Kubernetes simulator not available)"}\n` +
    `control:     ${twin.controlUrl}\n` +
    `registry:    ${twin.registry.url} (stands in for ${
      hosts.join(", ") || "no registry host"
    })\n` +
    `time:        ${
      time === "manual" ? "manual (moves through the control endpoint)" : `wall clock ×${time}`
    }\n` +
    `state dir:   ${twin.stateDir}\n` +
    "\nTo use it from another shell:\n" +
    `  export TALOSCONFIG=${shellWord(twin.talosconfigPath)}` +
    (twin.kubeconfigPath ? ` KUBECONFIG=${shellWord(twin.kubeconfigPath)}` : "") + "\n" +
    `  cairn plan preview PLAN${mirrors}\n`;
}

/** `s` as one shell word, quoted only when it needs to be (a state dir with a space). */
function shellWord(s: string): string {
  return /^[A-Za-z0-9_./:@=+-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`;
}

/** A missing cluster description is the user's typo, not a stack trace from the twin process. */
async function requireReadable(path: string): Promise<void> {
  try {
    await Deno.readTextFile(path);
  } catch (e) {
    throw new CairnError({
      reason: "FileUnreadable",
      message: `cannot read cluster description ${path}: ${
        e instanceof Error ? e.message : String(e)
      }`,
    }, { cause: e });
  }
}
