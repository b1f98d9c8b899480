/**
 * Checking a plan file offline, as `cairn plan check`, `cairn plan sign` and `cairn plan preview`
 * do: the plan read safely (no link, no FIFO, size-capped), parsed and located, the bound files
 * (catalogue, health policy, evidence manifest) resolved from the plan's directory upwards and
 * checked against their digests, then the semantic checks. Reads files; decides nothing the
 * domain does not.
 */
import { dirname, resolveFrom } from "../domain/posix_path.ts";
import { readBoundFile, readPlainFile } from "../adapters/repo/bound_file_reader.ts";
import { type Catalogue, parseCatalogue } from "../domain/catalogue.ts";
import { CairnError, type Problem } from "../domain/errors.ts";
import {
  type BoundFileLoad,
  type BoundFileLoads,
  boundFiles,
  checkBoundFiles,
} from "../domain/plan/bound_files.ts";
import { checkPlan } from "../domain/plan/checks.ts";
import { sha256Hex } from "../domain/plan/digest.ts";
import { located, safeParsePlan } from "../domain/plan/parse.ts";
import { MAX_YAML_BYTES } from "../domain/plan/yaml_load.ts";
import type { Plan } from "../domain/plan/schema.ts";
import type { Reason } from "../domain/reasons.ts";
import type { BoundFileRead } from "../ports/dispatch.ts";

/** Outcome of checking one plan file. */
export interface PlanCheckResult {
  readonly file: string;
  readonly ok: boolean;
  readonly kind?: string;
  readonly name?: string;
  readonly sha256?: string;
  readonly nodes?: number;
  readonly problems: readonly Problem[];
}

/** Options of {@link checkPlanFile}. */
export interface PlanCheckOptions {
  readonly nowMs: number;
  /** Absolute catalogue path overriding the one the plan binds. */
  readonly catalogueOverride?: string;
  readonly cwd: string;
}

type CatalogueLoad =
  | { catalogue: Catalogue }
  | { problem: Problem }
  | { missing: true }
  | { refused: { reason: Reason; detail: string } };

/** Files already read during one `plan check` run (plans share them). */
export interface PlanCheckCache {
  readonly catalogues: Map<string, CatalogueLoad>;
  readonly bound: Map<string, BoundFileLoad>;
}

/** An empty {@link PlanCheckCache}. */
export function newPlanCheckCache(): PlanCheckCache {
  return { catalogues: new Map(), bound: new Map() };
}

/**
 * Reads the catalogue: the `--catalogue` file when given (the user's own choice), otherwise the
 * bound path through the repository-confined reader (no symlinks, no escape, size cap).
 */
async function loadCatalogue(
  planPath: string,
  rel: string,
  options: PlanCheckOptions,
  cache: Map<string, CatalogueLoad>,
): Promise<CatalogueLoad> {
  const override = options.catalogueOverride;
  const key = override ?? `${dirname(planPath)}\0${rel}`;
  const hit = cache.get(key);
  if (hit) return hit;
  let load: CatalogueLoad;
  if (override !== undefined) {
    try {
      load = { catalogue: await parseCatalogue(await Deno.readFile(override), override) };
    } catch (e) {
      if (e instanceof CairnError) load = { problem: e.toProblem() };
      else if (e instanceof Deno.errors.NotFound) load = { missing: true };
      else throw e;
    }
  } else {
    const read = await readBoundFile(planPath, rel, { cwd: options.cwd });
    if (read.status === "missing") load = { missing: true };
    else if (read.status === "refused") load = { refused: read };
    else {
      try {
        load = { catalogue: await parseCatalogue(read.bytes, rel) };
      } catch (e) {
        if (!(e instanceof CairnError)) throw e;
        load = { problem: e.toProblem() };
      }
    }
  }
  cache.set(key, load);
  return load;
}

async function toLoad(read: BoundFileRead): Promise<BoundFileLoad> {
  if (read.status !== "read") return read;
  return {
    status: "read",
    sha256: await sha256Hex(read.bytes),
    text: new TextDecoder().decode(read.bytes),
  };
}

/** Reads the health policy and evidence manifest the plan binds (once per path per run). */
async function loadBoundFiles(
  planPath: string,
  plan: Plan,
  cwd: string,
  cache: Map<string, BoundFileLoad>,
): Promise<BoundFileLoads> {
  const loads: Record<string, BoundFileLoad> = {};
  for (const [role, file] of Object.entries(boundFiles(plan))) {
    const key = `${dirname(planPath)}\0${file.path}`;
    const load = cache.get(key) ?? await toLoad(await readBoundFile(planPath, file.path, { cwd }));
    cache.set(key, load);
    loads[role] = load;
  }
  return loads;
}

function nodeCount(plan: Plan): number {
  return plan.kind === "ComponentUpgrade" ? 0 : plan.spec.nodes.length;
}

/** Reads, parses and checks one plan file; never throws for bad input. */
export async function checkPlanFile(
  file: string,
  options: PlanCheckOptions,
  cache: PlanCheckCache = newPlanCheckCache(),
): Promise<PlanCheckResult> {
  const abs = resolveFrom(Deno.cwd(), options.cwd, file);
  // Never through a link, never a FIFO or device, never more than the plan size limit.
  const read = await readPlainFile(abs, MAX_YAML_BYTES);
  if (read.status !== "read") {
    const reason = read.status === "refused" && read.reason === "BoundFileTooLarge"
      ? "PlanTooLarge"
      : "FileUnreadable";
    const problem = { reason, message: `Cannot read plan file: ${read.detail}` } as const;
    return { file, ok: false, problems: [problem] };
  }
  const bytes = read.bytes;
  const parsed = await safeParsePlan(bytes, { file });
  if (!parsed.ok) return { file, ok: false, problems: parsed.problems };
  const { plan, sha256, source } = parsed.parsed;
  const bound = plan.spec.catalogue;
  const load: CatalogueLoad = bound
    ? await loadCatalogue(abs, bound.path, options, cache.catalogues)
    : { missing: true };
  const problems = "problem" in load ? [load.problem] : located(source, [
    ...checkPlan(plan, {
      nowMs: options.nowMs,
      catalogue: "catalogue" in load ? load.catalogue : undefined,
      ...("refused" in load ? { catalogueRefused: load.refused } : {}),
    }),
    ...checkBoundFiles(plan, await loadBoundFiles(abs, plan, options.cwd, cache.bound)),
  ]);
  const meta = { kind: plan.kind, name: plan.metadata.name, sha256, nodes: nodeCount(plan) };
  return { file, ok: problems.length === 0, ...meta, problems };
}
