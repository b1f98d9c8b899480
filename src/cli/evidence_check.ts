/** `cairn evidence check`: verifies pinned upstream sources, assertions and controls. */
import { resolve } from "node:path";
import {
  type Command,
  type CommandIO,
  EXIT,
  OUTPUT_OPTION,
  printJson,
  reportProblems,
  style,
  UsageError,
  wantsJson,
} from "./command.ts";
import { checkEvidence, type FetchOutcome } from "../domain/evidence/checker.ts";
import { type EvidenceManifest, parseEvidenceManifest } from "../domain/evidence/manifest.ts";
import type { EvidenceCheckResult } from "../domain/evidence/result.ts";
import { readCachedSources, readEvidenceManifest } from "../app/evidence_check_run.ts";
import { DEFAULT_FETCH_BUDGET_MS, fetchEvidenceIntoCache } from "../app/evidence_run.ts";

export const command: Command = {
  path: ["evidence", "check"],
  summary: "Check pinned upstream source hashes, call-path assertions and must-fail controls",
  usage: "MANIFEST --cache DIR [--fetch [--fetch-timeout SECONDS]] [--output json]",
  help: `
Reads an evidence manifest (repository/revision/path/SHA-256 tuples, named assertions and
controls that must fail) and checks it against the cache directory
(<cache>/<repo-slug>/<revision>/<path>).

  --cache DIR     evidence cache (required)
  --fetch         first fetch every file with git at its exact revision, check the downloaded
                  hash, and store matching files in the cache
  --fetch-timeout SECONDS
                  budget of the whole fetch (default 300); each git call also stops after
                  60 s. A source not fetched in time fails with EvidenceFetchTimedOut (unread,
                  never a pass)
  --output json   print the typed result as JSON

Exits 0 only when every hash matches, every assertion holds and every control fails as declared.
A secret-looking result (private-key block, token) is refused with EvidenceSecretDetected.`,
  options: {
    cache: { type: "string" },
    fetch: { type: "boolean", default: false },
    "fetch-timeout": { type: "string" },
    ...OUTPUT_OPTION,
  },
  positionals: { min: 1, max: 1 },
  async run(args, io) {
    const cacheFlag = args.values["cache"];
    if (typeof cacheFlag !== "string") throw new UsageError("--cache DIR is required");
    const file = args.positionals[0]!;
    const manifestBytes = await readEvidenceManifest(resolve(io.cwd, file), file);
    const parsed = parseEvidenceManifest(new TextDecoder().decode(manifestBytes), file);
    if (!parsed.ok) return reportProblems(io, parsed.problems);
    const cache = resolve(io.cwd, cacheFlag);
    const budgetMs = fetchBudgetMs(args.values["fetch-timeout"]);
    const fetched = args.values["fetch"] === true
      ? await fetchAll(parsed.manifest, cache, io, budgetMs)
      : undefined;
    const cached = await readCachedSources(cache, parsed.manifest);
    const outcome = await checkEvidence({
      manifest: parsed.manifest,
      manifestFile: file,
      manifestBytes,
      cached,
      ...(fetched ? { fetched } : {}),
    });
    if (outcome.status === "refused") return reportProblems(io, [outcome.problem]);
    if (wantsJson(args)) printJson(io, outcome.result);
    else io.stdout(renderText(outcome.result, io));
    return outcome.result.ok ? EXIT.ok : EXIT.refused;
  },
};

/** Fetches each source (`--fetch`); git sees the caller's environment (e.g. url rewrites). */
function fetchAll(
  m: EvidenceManifest,
  cache: string,
  io: CommandIO,
  budgetMs: number,
): Promise<Map<string, FetchOutcome>> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(io.env)) if (v !== undefined) env[k] = v;
  return fetchEvidenceIntoCache(m, cache, env, { budgetMs });
}

function fetchBudgetMs(flag: unknown): number {
  if (flag === undefined) return DEFAULT_FETCH_BUDGET_MS;
  const seconds = typeof flag === "string" && /^\d{1,5}$/.test(flag) ? Number(flag) : NaN;
  if (!(seconds >= 1 && seconds <= 86_400)) {
    throw new UsageError(`--fetch-timeout must be whole seconds from 1 to 86400, got ${flag}`);
  }
  return seconds * 1000;
}

function renderText(r: EvidenceCheckResult, io: CommandIO): string {
  const s = style(io);
  const mark = (v: string) => (v === "pass" ? s.green("PASS") : s.red("FAIL"));
  const lines = [
    s.bold(`evidence ${r.manifest.name} (${r.mode}) sha256:${r.manifest.sha256}`),
    "sources:",
    ...r.sources.map((v) =>
      `  ${mark(v.verdict)} ${v.id}${v.reason ? ` ${v.reason}` : ""}: ${v.message}`
    ),
    "assertions:",
    ...r.assertions.map((v) =>
      `  ${mark(v.verdict)} ${v.name} [${v.kind}]${v.reason ? ` ${v.reason}` : ""}: ${v.message}`
    ),
    "controls (must fail):",
    ...r.controls.map((v) =>
      `  ${mark(v.verdict)} ${v.name} [${v.kind}] observed ${v.observed}` +
      `${v.reason ? ` ${v.reason}` : ""}: ${v.message}`
    ),
    `${r.ok ? s.green("ok") : s.red("FAILED")}: sources ${r.counts.sources.passed}/` +
    `${r.sources.length}, assertions ${r.counts.assertions.passed}/${r.assertions.length}, ` +
    `controls ${r.counts.controls.passed}/${r.controls.length} as declared`,
  ];
  return lines.join("\n") + "\n";
}
