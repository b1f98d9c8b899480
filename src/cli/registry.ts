import type { Command } from "./command.ts";

/**
 * Imports a command module through a computed specifier. A string-literal dynamic import is
 * statically analysable, and `deno run` then resolves and prepares the whole module graph behind
 * every such literal (all commands, kysely, libSQL, gRPC, the Kubernetes client) at start-up,
 * even for `cairn plan check`, whether or not it is ever executed. A computed URL keeps that
 * graph out of every command's cold start. test/cli/registry_test.ts guards this.
 */
function lazy(file: string): () => Promise<Command> {
  return async () => {
    const mod = await import(new URL(file, import.meta.url).href) as { command: Command };
    return mod.command;
  };
}

/**
 * Every command, loaded lazily so that `cairn plan check` never pays for the Kubernetes client or
 * gRPC. Command modules must not import heavy libraries at top level; they `await import()` them
 * inside `run`. Add a command as `{ path: [...], load: lazy("./file.ts") }`.
 */
export const COMMANDS: ReadonlyArray<{ path: readonly string[]; load: () => Promise<Command> }> = [
  { path: ["plan", "check"], load: lazy("./plan_check.ts") },
  { path: ["plan", "new"], load: lazy("./plan_new.ts") },
  { path: ["plan", "bind"], load: lazy("./plan_bind.ts") },
  { path: ["plan", "sign"], load: lazy("./plan_sign.ts") },
  { path: ["plan", "verify"], load: lazy("./plan_verify.ts") },
  { path: ["plan", "preview"], load: lazy("./plan_preview.ts") },
  { path: ["evidence", "check"], load: lazy("./evidence_check.ts") },
  { path: ["image", "resolve"], load: lazy("./image_resolve.ts") },
  { path: ["catalogue", "refresh"], load: lazy("./catalogue_refresh.ts") },
  { path: ["journal", "migrate"], load: lazy("./journal_migrate.ts") },
  { path: ["journal", "show"], load: lazy("./journal_show.ts") },
  { path: ["journal", "export"], load: lazy("./journal_export.ts") },
  { path: ["journal", "verify"], load: lazy("./journal_verify.ts") },
  { path: ["sim", "serve"], load: lazy("./sim_serve.ts") },
  { path: ["status"], load: lazy("./status.ts") },
  { path: ["rehearse"], load: lazy("./rehearse.ts") },
  { path: ["apply"], load: lazy("./apply.ts") },
  { path: ["abort"], load: lazy("./abort.ts") },
  { path: ["freeze"], load: lazy("./freeze.ts") },
  { path: ["unfreeze"], load: lazy("./unfreeze.ts") },
  { path: ["recover"], load: lazy("./recover.ts") },
  { path: ["demo"], load: lazy("./demo.ts") },
  { path: ["reconcile"], load: lazy("./reconcile.ts") },
  { path: ["health", "import-tuppr"], load: lazy("./health_import_tuppr.ts") },
  { path: ["review"], load: lazy("./review.ts") },
  { path: ["bundled", "chart"], load: lazy("./bundled_chart.ts") },
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
