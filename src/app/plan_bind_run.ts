/**
 * What `cairn plan bind` does to a plan file: reads every file it binds the way plan check reads
 * them (bound-file reader), recomputes their digests and rewrites the plan in place (beside, then
 * rename). The scalar edits are the domain's (`domain/plan/author.ts`); the command renders.
 */
import { dirname, resolve } from "node:path";
import { readBoundFile, readPlainFile } from "../adapters/repo/bound_file_reader.ts";
import { CairnError, type Problem } from "../domain/errors.ts";
import { replaceScalars, type ScalarEdit } from "../domain/plan/author.ts";
import { sha256Hex } from "../domain/plan/digest.ts";
import { safeParsePlan } from "../domain/plan/parse.ts";
import type { Plan } from "../domain/plan/schema.ts";
import { type FieldPath, formatPath, MAX_YAML_BYTES } from "../domain/plan/yaml_load.ts";

/** Every file `plan` binds, with the field path of its `{path, sha256}`. */
function boundFields(plan: Plan): { at: FieldPath; path: string }[] {
  const spec = plan.spec as Record<string, unknown>;
  const out: { at: FieldPath; path: string }[] = [];
  for (const key of ["catalogue", "healthPolicy", "evidence", "config"]) {
    const f = spec[key] as { path: string } | undefined;
    if (f) out.push({ at: ["spec", key], path: f.path });
  }
  return out;
}

/** What {@link rebindPlanFile} produced. */
export type RebindResult =
  | { readonly ok: false; readonly problems: readonly Problem[] }
  | {
    readonly ok: true;
    /** Field paths whose value changed (`spec.healthPolicy.sha256`, `metadata.expires`). */
    readonly changed: readonly string[];
    /** Bound files left as written, and why. */
    readonly skipped: readonly string[];
    /** SHA-256 of the plan's bytes after the edit (the new plan identity). */
    readonly sha256: string;
  };

/**
 * Recomputes the digest of every file the plan at `file` binds (read as `plan check` reads
 * them), applies `extra` scalar edits, and writes the result in place when anything changed.
 * A bound file that is missing or refused throws `CairnError` and leaves the plan unchanged.
 */
export async function rebindPlanFile(
  file: string,
  cwd: string,
  extra: readonly ScalarEdit[] = [],
): Promise<RebindResult> {
  const abs = resolve(cwd, file);
  const read = await readPlainFile(abs, MAX_YAML_BYTES);
  if (read.status !== "read") {
    throw new CairnError({
      reason: "FileUnreadable",
      message: `cannot read ${file}: ${read.detail}`,
    });
  }
  const parsed = await safeParsePlan(read.bytes, { file });
  if (!parsed.ok) return { ok: false, problems: parsed.problems };
  const edits: ScalarEdit[] = [...extra];
  const skipped: string[] = [];
  for (const f of boundFields(parsed.parsed.plan)) {
    const b = await readBoundFile(abs, f.path, { cwd });
    // plan check does not read a ConfigApply's machine-config patch (yet), so a patch kept
    // outside this repository leaves its digest as written instead of refusing the whole bind.
    if (b.status === "missing" && f.at[1] === "config") {
      skipped.push(`${formatPath(f.at)} ${f.path} (not in the repository; digest left as written)`);
      continue;
    }
    if (b.status !== "read") {
      throw new CairnError({
        reason: b.status === "refused" ? b.reason : "FileUnreadable",
        message: `${formatPath(f.at)} ${f.path}: ${b.detail}; ${file} unchanged`,
      });
    }
    edits.push({ path: [...f.at, "sha256"], value: await sha256Hex(b.bytes) });
  }
  const { text, changed } = replaceScalars(parsed.parsed.source, edits);
  if (changed.length > 0) {
    const tmp = await Deno.makeTempFile({ dir: dirname(abs), prefix: ".cairn-bind-" });
    try {
      await Deno.writeTextFile(tmp, text);
      await Deno.rename(tmp, abs);
    } finally {
      await Deno.remove(tmp).catch(() => {});
    }
  }
  const sha256 = await sha256Hex(new TextEncoder().encode(text));
  return { ok: true, changed: changed.map(formatPath), skipped, sha256 };
}
