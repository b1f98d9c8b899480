/** `cairn health import-tuppr`: converts a tuppr TalosUpgrade's healthChecks into a health policy. */
import { resolve } from "node:path";
import { type Command, EXIT, reportProblems, UsageError } from "./command.ts";
import { importTuppr } from "../domain/health/tuppr.ts";
import { parseHealthPolicy } from "../domain/health/policy_parse.ts";

export const command: Command = {
  path: ["health", "import-tuppr"],
  summary: "Convert a tuppr TalosUpgrade's spec.healthChecks into a cairn health policy (YAML)",
  usage: "FILE --cluster NAME",
  help: `
Reads a tuppr TalosUpgrade manifest and prints a HealthPolicy on stdout with one kube-object
binding per spec.healthChecks entry. Each entry is carried unchanged under healthCheck: its
CEL expression sees the same variables as in tuppr (object and status). Unlike tuppr, an
object without a status is unreadable rather than evaluated against an empty map, and a status
from an older generation fails.

  --cluster NAME   cluster the policy is for (metadata.cluster, required)

Exits 1 when the file is not a TalosUpgrade or an entry is invalid (located errors).`,
  options: { cluster: { type: "string" } },
  positionals: { min: 1, max: 1 },
  async run(args, io) {
    const cluster = args.values["cluster"];
    if (typeof cluster !== "string" || cluster === "") {
      throw new UsageError("--cluster NAME is required");
    }
    const file = args.positionals[0]!;
    let text: string;
    try {
      text = await Deno.readTextFile(resolve(io.cwd, file));
    } catch (e) {
      return reportProblems(io, [{
        reason: "FileUnreadable",
        message: `${file}: ${(e as Error).message}`,
      }]);
    }
    const out = importTuppr(text, file, cluster);
    if (!out.ok) return reportProblems(io, out.problems);
    // The output must itself be a valid policy (CEL expressions parse, names unique).
    const check = parseHealthPolicy(out.yaml, "<imported>");
    if (!check.ok) return reportProblems(io, check.problems);
    io.stdout(out.yaml);
    io.stderr(`imported ${out.count} health check(s)\n`);
    return EXIT.ok;
  },
};
