/**
 * Where the cluster is, as kubectl and talosctl users already say it: `--kubeconfig` or
 * `KUBECONFIG`, `--talosconfig` or `TALOSCONFIG`, `--context` / `--talos-context` for a context
 * other than the file's current one. Flags win over the environment. There is deliberately no
 * fallback to ~/.kube/config: an upgrade tool names its cluster (or its environment does).
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
  "  --kubeconfig K        kubeconfig (default: $KUBECONFIG, its first file if a list)\n" +
  "  --talosconfig T       talosconfig (default: $TALOSCONFIG)\n" +
  "  --context NAME        kubeconfig context (default: the file's current context)\n" +
  "  --talos-context NAME  talosconfig context (default: the file's current context)";

/** Where the cluster is, paths resolved against the working directory. */
export interface ClusterFlags {
  readonly kubeconfig?: string;
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
  // KUBECONFIG may list several files (kubectl merges them); cairn reads the first.
  const kubeEnv = (io.env["KUBECONFIG"] ?? "").split(":").find((p) => p !== "");
  const kubeconfig = flag(args, "kubeconfig") ?? kubeEnv;
  const talosconfig = flag(args, "talosconfig") ?? (io.env["TALOSCONFIG"] || undefined);
  const kubeContext = flag(args, "context");
  const talosContext = flag(args, "talos-context");
  return {
    ...(kubeconfig ? { kubeconfig: resolve(io.cwd, kubeconfig) } : {}),
    ...(talosconfig ? { talosconfig: resolve(io.cwd, talosconfig) } : {}),
    ...(kubeContext ? { kubeContext } : {}),
    ...(talosContext ? { talosContext } : {}),
  };
}

/** The kubeconfig path, or a usage error naming both ways to give it. */
export function requireKubeconfig(f: ClusterFlags): string {
  if (f.kubeconfig) return f.kubeconfig;
  throw new UsageError("--kubeconfig K is required (or set KUBECONFIG)");
}

/** The talosconfig path, or a usage error naming both ways to give it. */
export function requireTalosconfig(f: ClusterFlags): string {
  if (f.talosconfig) return f.talosconfig;
  throw new UsageError("--talosconfig T is required (or set TALOSCONFIG)");
}
