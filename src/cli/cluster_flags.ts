/**
 * Where the cluster is, as kubectl and talosctl users already say it: `--kubeconfig` or
 * `KUBECONFIG`, `--talosconfig` or `TALOSCONFIG`, `--context` / `--talos-context` for a context
 * other than the file's current one. Flags win over the environment. There is deliberately no
 * fallback to ~/.kube/config: an upgrade tool names its cluster (or its environment does).
 *
 * `KUBECONFIG` is a list of files, merged as kubectl merges them (the first file to name a
 * cluster, user or context wins; `current-context` from the first file that sets it; missing files
 * skipped; relative paths inside a file against that file's directory); `--kubeconfig` is one
 * file, which must exist. `TALOSCONFIG` is one file, as talosctl reads it (talosctl does not merge
 * talosconfigs; a `:` in it is part of the path).
 */
import { resolve } from "node:path";
import { type CommandIO, type ParsedArgs, UsageError } from "./command.ts";

/** The flags, for a command's options. */
export const CLUSTER_OPTIONS = {
  kubeconfig: { type: "string" },
  talosconfig: { type: "string" },
  context: { type: "string" },
  "talos-context": { type: "string" },
} as const;

/** Help lines for the flags. */
export const CLUSTER_HELP =
  "  --kubeconfig K        kubeconfig (default: $KUBECONFIG; a list is merged as kubectl does)\n" +
  "  --talosconfig T       talosconfig (default: $TALOSCONFIG)\n" +
  "  --context NAME        kubeconfig context (default: the file's current context)\n" +
  "  --talos-context NAME  talosconfig context (default: the file's current context)";

/** Where the cluster is, paths resolved against the working directory. */
export interface ClusterFlags {
  /** One file (`--kubeconfig`), or the `KUBECONFIG` list in order (merged where it is read). */
  readonly kubeconfig?: string | readonly string[];
  readonly talosconfig?: string;
  readonly kubeContext?: string;
  readonly talosContext?: string;
}

function flag(args: ParsedArgs, name: string): string | undefined {
  const v = args.values[name];
  return typeof v === "string" && v !== "" ? v : undefined;
}

/** The cluster flags with the environment filled in; nothing is required here. */
export function clusterFlags(args: ParsedArgs, io: CommandIO): ClusterFlags {
  const kubeFlag = flag(args, "kubeconfig");
  const kubeEnv = (io.env["KUBECONFIG"] ?? "").split(":").filter((p) => p !== "")
    .map((p) => resolve(io.cwd, p));
  const kubeconfig = kubeFlag !== undefined
    ? resolve(io.cwd, kubeFlag)
    : kubeEnv.length > 0
    ? kubeEnv
    : undefined;
  const talosconfig = flag(args, "talosconfig") ?? (io.env["TALOSCONFIG"] || undefined);
  const kubeContext = flag(args, "context");
  const talosContext = flag(args, "talos-context");
  return {
    ...(kubeconfig ? { kubeconfig } : {}),
    ...(talosconfig ? { talosconfig: resolve(io.cwd, talosconfig) } : {}),
    ...(kubeContext ? { kubeContext } : {}),
    ...(talosContext ? { talosContext } : {}),
  };
}

/** The kubeconfig path, or a usage error naming both ways to give it. */
export function requireKubeconfig(f: ClusterFlags): string | readonly string[] {
  if (f.kubeconfig) return f.kubeconfig;
  throw new UsageError("--kubeconfig K is required (or set KUBECONFIG)");
}

/** The talosconfig path, or a usage error naming both ways to give it. */
export function requireTalosconfig(f: ClusterFlags): string {
  if (f.talosconfig) return f.talosconfig;
  throw new UsageError("--talosconfig T is required (or set TALOSCONFIG)");
}
