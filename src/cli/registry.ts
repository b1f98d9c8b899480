import type { Command } from "./command.ts";

/**
 * Every command, loaded lazily so that `cairn plan check` never pays for the Kubernetes client or
 * gRPC. Command modules must not import heavy libraries at top level; they `await import()` them
 * inside `run`.
 */
export const COMMANDS: ReadonlyArray<{ path: readonly string[]; load: () => Promise<Command> }> = [
  { path: ["plan", "check"], load: async () => (await import("./plan_check.ts")).command },
  { path: ["plan", "sign"], load: async () => (await import("./plan_sign.ts")).command },
  { path: ["plan", "verify"], load: async () => (await import("./plan_verify.ts")).command },
  {
    path: ["evidence", "check"],
    load: async () => (await import("./evidence_check.ts")).command,
  },
  { path: ["image", "resolve"], load: async () => (await import("./image_resolve.ts")).command },
  {
    path: ["catalogue", "refresh"],
    load: async () => (await import("./catalogue_refresh.ts")).command,
  },
  {
    path: ["journal", "migrate"],
    load: async () => (await import("./journal_migrate.ts")).command,
  },
  { path: ["journal", "show"], load: async () => (await import("./journal_show.ts")).command },
  { path: ["journal", "export"], load: async () => (await import("./journal_export.ts")).command },
  { path: ["journal", "verify"], load: async () => (await import("./journal_verify.ts")).command },
  { path: ["sim", "serve"], load: async () => (await import("./sim_serve.ts")).command },
  { path: ["status"], load: async () => (await import("./status.ts")).command },
  { path: ["rehearse"], load: async () => (await import("./rehearse.ts")).command },
  { path: ["demo"], load: async () => (await import("./demo.ts")).command },
  {
    path: ["health", "import-tuppr"],
    load: async () => (await import("./health_import_tuppr.ts")).command,
  },
];

/** Finds the command whose path is the longest prefix of `argv`. */
export function findCommand(argv: readonly string[]) {
  let best: (typeof COMMANDS)[number] | undefined;
  for (const c of COMMANDS) {
    if (c.path.every((p, i) => argv[i] === p) && (!best || c.path.length > best.path.length)) {
      best = c;
    }
  }
  return best;
}
