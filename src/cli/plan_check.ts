import { resolveFrom } from "../domain/posix_path.ts";
import { formatProblem } from "../domain/errors.ts";
import {
  type Command,
  type CommandIO,
  EXIT,
  OUTPUT_OPTION,
  UsageError,
  wantsJson,
} from "./command.ts";
import { checkPlanFile, newPlanCheckCache, type PlanCheckResult } from "../app/plan_check_run.ts";

/** Parses `--now` (RFC 3339 with offset); `undefined` when not given. */
export function parseNow(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const ms = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(text)
    ? Date.parse(text)
    : NaN;
  if (Number.isNaN(ms)) throw new UsageError(`--now must be an RFC 3339 time, got ${text}`);
  return ms;
}

async function run(args: Parameters<Command["run"]>[0], io: CommandIO): Promise<number> {
  const nowMs = parseNow(args.values["now"] as string | undefined) ?? Date.now();
  const cat = args.values["catalogue"] as string | undefined;
  const options = {
    nowMs,
    cwd: io.cwd,
    // io.cwd is the process's working directory (main.ts), where node:path resolved it.
    ...(cat ? { catalogueOverride: resolveFrom(io.cwd, io.cwd, cat) } : {}),
  };
  const cache = newPlanCheckCache();
  const results: PlanCheckResult[] = [];
  for (const file of args.positionals) results.push(await checkPlanFile(file, options, cache));
  if (wantsJson(args)) io.stdout(JSON.stringify(results, null, 2) + "\n");
  else {
    for (const r of results) {
      if (r.ok) {
        io.stdout(`ok ${r.file} ${r.kind} ${r.name} sha256:${r.sha256} (${r.nodes} nodes)\n`);
      } else for (const p of r.problems) io.stderr(formatProblem(p) + "\n");
    }
  }
  return results.every((r) => r.ok) ? EXIT.ok : EXIT.refused;
}

export const command: Command = {
  path: ["plan", "check"],
  summary: "Check plan files offline: syntax, schema, versions, catalogue, nodes, deadlines",
  usage: "FILE... [--catalogue F] [--now RFC3339] [--output json]",
  help: `
Validates each plan file without touching a cluster: YAML safety (size, encoding, duplicate
keys, alias budget, one document), the schema of its kind (unknown fields refused), and the
semantic rules: no downgrade or skipped minor, latest patch before a minor hop, Kubernetes and
kubelet inside the Talos support matrix, RPC path, installer image, expiry, deadlines
(transport <= verification), node order (workers first, control planes last, one at a time).

The release catalogue is the file the plan binds under spec.catalogue.path, resolved against
the plan file's directory and then each parent directory in turn up to the repository root
(the git top level), never above it (so a repository-relative path works from anywhere inside
the repository). Bound paths are never absolute, never contain '..' (BoundPathInvalid), never go
through a symbolic link (BoundPathSymlink), must name a regular file (BoundFileNotRegular) of at
most 1 MiB (BoundFileTooLarge, checked before reading). Its SHA-256 must match
spec.catalogue.sha256 and its snapshot must be at most 30 days old.

The health policy (spec.healthPolicy) and, when bound, the evidence manifest (spec.evidence)
are resolved the same way; each file's SHA-256 must equal the bound digest and its contents
must parse, and the health policy must be written for the plan's cluster.

Prints "ok FILE KIND NAME sha256:DIGEST (N nodes)" per valid plan; problems go to stderr as
"file:line:column: Reason: message (at field.path)".

Options:
  --catalogue F     use this catalogue file instead of the one the plan names
  --now T           check as of this RFC 3339 time instead of the system clock
  --output json     print a JSON array of results on stdout
`,
  options: {
    ...OUTPUT_OPTION,
    catalogue: { type: "string" },
    now: { type: "string" },
  },
  positionals: { min: 1 },
  run,
};
