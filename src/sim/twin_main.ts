/**
 * Entry point of the twin process (bundled for Node by `cairn sim serve`):
 * `node twin.mjs --cluster FILE --state-dir DIR --proto-dir DIR [--seed N] [--talos-port P]
 * [--control-port P] [--no-kube] [--pki-cache DIR] [--exit-with-parent] [--manual-time]
 * [--wall-clock [--speed N]]`. Prints one JSON line (TwinInfo plus `"ready": true`) on stdout once
 * every endpoint listens, and stops on SIGTERM/SIGINT or `POST /shutdown`.
 */
import process from "node:process";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { parse } from "yaml";
import { ClusterDescriptionSchema } from "./cluster_description.ts";
import { startTwin } from "./twin.ts";
import { startTwinKube } from "./twin_kube.ts";

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      cluster: { type: "string" },
      "state-dir": { type: "string" },
      "proto-dir": { type: "string" },
      seed: { type: "string" },
      "talos-port": { type: "string" },
      "control-port": { type: "string" },
      "no-kube": { type: "boolean" },
      "pki-cache": { type: "string" },
      "exit-with-parent": { type: "boolean" },
      "manual-time": { type: "boolean" },
      "wall-clock": { type: "boolean" },
      speed: { type: "string" },
    },
  });
  if (!values.cluster || !values["state-dir"] || !values["proto-dir"]) {
    throw new Error("usage: twin --cluster FILE --state-dir DIR --proto-dir DIR");
  }
  const description = ClusterDescriptionSchema.parse(parse(readFileSync(values.cluster, "utf8")));
  const twin = await startTwin({
    description,
    stateDir: values["state-dir"],
    protoDir: values["proto-dir"],
    seed: Number(values.seed ?? "1"),
    ...(values["no-kube"] ? {} : { startKube: startTwinKube }),
    ...(values["pki-cache"] ? { pkiCacheDir: values["pki-cache"] } : {}),
    ...(values["talos-port"] ? { talosPort: Number(values["talos-port"]) } : {}),
    ...(values["control-port"] ? { controlPort: Number(values["control-port"]) } : {}),
    autoAdvance: !values["manual-time"],
    ...(values["wall-clock"] ? { wallClock: { speed: Number(values.speed ?? "1") } } : {}),
  });
  const stop = () => {
    // Open client connections can hold a server's close open; exit regardless after a grace.
    setTimeout(() => process.exit(0), 2_000).unref();
    void twin.stop().finally(() => process.exit(0));
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  if (values["exit-with-parent"]) {
    // The parent holds our stdin open; when it dies (even by SIGKILL) stdin ends and so do we.
    process.stdin.on("end", stop);
    process.stdin.resume();
  }
  process.stdout.write(JSON.stringify({ ready: true, ...twin.info }) + "\n");
}

main().catch((e) => {
  process.stderr.write(`twin: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
