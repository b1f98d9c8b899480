/**
 * The bound evidence manifest of a plan, checked OFFLINE against the evidence cache for reports:
 * shared by `cairn plan preview`, the reconcile loop and the demo. Not a command. The manifest's
 * bytes must carry the digest the plan binds; each source is read from the cache
 * (`<cache>/<repo-slug>/<revision>/<path>`, a missing entry is unreadable) and `checkEvidence`
 * judges every tuple, assertion and control. Nothing is fetched here, except by
 * `fetchEvidenceIntoCache`, which has `cairn evidence check --fetch` semantics.
 */
import {
  fetchPinnedFile,
  readCached,
  readProvenance,
  writeCached,
  writeProvenance,
} from "../adapters/evidence/git_fetch.ts";
import { classifyFetch, type SourceProvenance } from "../domain/evidence/provenance.ts";
import { CairnError } from "../domain/errors.ts";
import { checkEvidence, type FetchOutcome } from "../domain/evidence/checker.ts";
import { type EvidenceManifest, parseEvidenceManifest } from "../domain/evidence/manifest.ts";
import { sha256Hex } from "../domain/plan/digest.ts";
import type { BoundEvidenceInput, EvidenceChecker, EvidenceReading } from "../ports/reconcile.ts";
import { evidenceReadingRows, evidenceReasonLines } from "../report/evidence_reading.ts";
import type { EvidenceRows } from "../report/from_evidence.ts";
import type { ReasonNote } from "../domain/reasons.ts";

/** Where the evidence cache lives unless configured: under the repository root or state dir. */
export const DEFAULT_EVIDENCE_CACHE = ".cache/evidence";

/** Checks a bound manifest offline; never throws for missing, changed or invalid input. */
export async function readBoundEvidence(
  input: BoundEvidenceInput,
  cacheDir: string,
): Promise<EvidenceReading> {
  const { path: file, sha256: expectedSha256, bytes } = input;
  if (!bytes) {
    return unread(input, "unreadable", "EvidenceManifestMissing", `${file} is not there`);
  }
  const actualSha256 = await sha256Hex(bytes);
  if (actualSha256 !== expectedSha256) {
    const message = `evidence manifest ${file} has digest ${actualSha256}, the plan binds ` +
      `${expectedSha256}; it changed after the plan was written`;
    return unread(input, "fail", "EvidenceManifestDigestMismatch", message, actualSha256);
  }
  const parsed = parseEvidenceManifest(new TextDecoder().decode(bytes), file);
  if (!parsed.ok) {
    const first = parsed.problems[0];
    const message = `evidence manifest ${file} does not parse: ${first?.message ?? "invalid"}`;
    return unread(input, "fail", "EvidenceManifestInvalid", message, actualSha256);
  }
  const cached = new Map<string, Uint8Array>();
  const provenance: Record<string, SourceProvenance> = {};
  for (const s of parsed.manifest.sources) {
    const entry = await readCached(cacheDir, s).catch(() => undefined);
    if (!entry) continue;
    cached.set(s.id, entry);
    provenance[s.id] = await readProvenance(cacheDir, s);
  }
  const outcome = await checkEvidence({
    manifest: parsed.manifest,
    manifestFile: file,
    manifestBytes: bytes,
    cached,
  });
  return { status: "checked", file, outcome, provenance };
}

function unread(
  input: BoundEvidenceInput,
  verdict: "fail" | "unreadable",
  reason: "EvidenceManifestMissing" | "EvidenceManifestDigestMismatch" | "EvidenceManifestInvalid",
  message: string,
  actualSha256?: string,
): EvidenceReading {
  return {
    status: "unread",
    file: input.path,
    expectedSha256: input.sha256,
    ...(actualSha256 ? { actualSha256 } : {}),
    verdict,
    reason,
    message,
  };
}

/** The EvidenceChecker port over one cache directory (the reconcile loop's). */
export function cacheEvidenceChecker(cacheDir: string): EvidenceChecker {
  return { check: (input) => readBoundEvidence(input, cacheDir) };
}

/** Report rows of a bound manifest, with a reason line for every row that did not pass. */
export interface EvidenceReport extends EvidenceRows {
  readonly reading: EvidenceReading;
  readonly reasons: readonly ReasonNote[];
}

/** Runs the offline check and maps it to report rows (via `evidenceOutcomeRows`). */
export async function evidenceReportRows(
  input: BoundEvidenceInput,
  cacheDir: string,
): Promise<EvidenceReport> {
  const reading = await readBoundEvidence(input, cacheDir);
  return { ...evidenceReadingRows(reading), reading, reasons: evidenceReasonLines(reading) };
}

/** How long a whole `--fetch` may take unless configured (every source, every git call). */
export const DEFAULT_FETCH_BUDGET_MS = 300_000;

/** Bounds of one evidence fetch. */
export interface EvidenceFetchLimits {
  /** Wall-clock budget of the whole fetch, ms (default {@link DEFAULT_FETCH_BUDGET_MS}). */
  readonly budgetMs?: number;
  /** Longest one git call may run, ms (default: the adapter's per-call deadline). */
  readonly callTimeoutMs?: number;
}

/**
 * Fetches every source of `manifest` with git at its exact revision; only bytes whose hash
 * matches the manifest enter the cache, each with where git really fetched it from (a rewrite to
 * a mirror or a local stand-in is recorded as such). `env` reaches git only (e.g. `insteadOf`).
 * The whole fetch shares one budget: a source whose git calls run past it (or that is reached
 * after it is spent) is unread with `EvidenceFetchTimedOut`, never a pass.
 */
export async function fetchEvidenceIntoCache(
  manifest: EvidenceManifest,
  cacheDir: string,
  env: Readonly<Record<string, string>> = {},
  limits: EvidenceFetchLimits = {},
): Promise<Map<string, FetchOutcome>> {
  const deadlineMs = Date.now() + (limits.budgetMs ?? DEFAULT_FETCH_BUDGET_MS);
  const callTimeout = limits.callTimeoutMs !== undefined
    ? { callTimeoutMs: limits.callTimeoutMs }
    : {};
  const out = new Map<string, FetchOutcome>();
  for (const s of manifest.sources) {
    try {
      const f = await fetchPinnedFile(s, { env, deadlineMs, ...callTimeout });
      if (f.sha256 === s.sha256) {
        await writeCached(cacheDir, s, f.bytes);
        await writeProvenance(cacheDir, s, classifyFetch(s.repo, s.revision, f.fetchedFrom));
      }
      out.set(s.id, { ok: true, sha256: f.sha256 });
    } catch (e) {
      if (!(e instanceof CairnError)) throw e;
      out.set(s.id, { ok: false, reason: e.reason, message: e.message });
    }
  }
  return out;
}
