import { type Command, EXIT, OUTPUT_OPTION, printJson, wantsJson } from "./command.ts";
import { rebindPlanFile } from "../app/plan_bind_run.ts";
import { formatProblem } from "../domain/errors.ts";

/**
 * `cairn plan bind FILE`: recomputes the digest of every file the plan binds and writes it in
 * place, changing nothing else. The plan's bytes change, so its signatures no longer verify.
 */
export const command: Command = {
  path: ["plan", "bind"],
  summary: "Recompute the digests of the files a plan binds, in place (signatures must be redone)",
  usage: "FILE [--output json]",
  help: `
Reads every file FILE binds (spec.catalogue, spec.healthPolicy, spec.evidence, spec.config) the
way plan check reads it (from the plan's directory upwards, inside the repository, never
through a symbolic link) and writes each file's current SHA-256 into the plan. Only the
sha256 values change: comments, order and every other byte stay as written, and FILE.sig is
left alone. When a digest changed the plan is a new plan: every signature in FILE.sig no
longer verifies, and the author and approvers must sign it again.

A bound file that is missing or refused leaves FILE unchanged (exit 1).

Options:
  --output json    print {file, changed: [field...], sha256} as JSON`,
  options: { ...OUTPUT_OPTION },
  positionals: { min: 1, max: 1 },
  async run(args, io) {
    const file = args.positionals[0]!;
    const r = await rebindPlanFile(file, io.cwd);
    if (!r.ok) {
      for (const p of r.problems) io.stderr(formatProblem(p) + "\n");
      io.stderr(`refused: ${file} is not a plan cairn can read; unchanged\n`);
      return EXIT.refused;
    }
    const fields = r.changed.map((f) => f.replace(/\.sha256$/, ""));
    for (const s of r.skipped) io.stderr(`${file}: ${s}\n`);
    if (wantsJson(args)) printJson(io, { file, changed: fields, sha256: r.sha256 });
    else if (fields.length === 0) io.stdout(`${file}: every bound digest is current; unchanged\n`);
    else {
      io.stdout(
        `${file}: rebound ${fields.join(", ")}; the plan is now sha256:${r.sha256}. Its bytes ` +
          `changed, so every signature in ${file}.sig no longer verifies: sign it again ` +
          `(cairn plan sign ${file} --key KEY)\n`,
      );
    }
    return EXIT.ok;
  },
};
