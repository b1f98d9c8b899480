/**
 * The evidence checker: pure over the manifest and the file bytes it is handed (cache entries
 * and, in a fetch run, what git returned). It never reads files itself.
 */
import { sha256Hex } from "../plan/digest.ts";
import type { Reason } from "../reasons.ts";
import { checkContains, checkIndependent, checkOrder, syntheticOrderSource } from "./assertions.ts";
import type {
  EvidenceAssertion,
  EvidenceControl,
  EvidenceManifest,
  EvidenceSource,
} from "./manifest.ts";
import type {
  AssertionVerdict,
  ControlVerdict,
  EvidenceCheckResult,
  EvidenceOutcome,
  SourceVerdict,
} from "./result.ts";
import { findFunctionBody, maskCommentsAndStrings } from "./source_scan.ts";
import { scanForSecrets } from "./secret_scan.ts";

/**
 * What a fetch produced for one source: the SHA-256 of the bytes, or why git failed (with the
 * failure's reason, e.g. `EvidenceFetchTimedOut`; `EvidenceFetchFailed` when absent).
 */
export type FetchOutcome =
  | { readonly ok: true; readonly sha256: string }
  | { readonly ok: false; readonly reason?: Reason; readonly message: string };

/** Everything the checker looks at. Maps are keyed by source id. */
export interface EvidenceInputs {
  readonly manifest: EvidenceManifest;
  readonly manifestFile: string;
  readonly manifestBytes: Uint8Array;
  /** Cache entries; a missing key means the cache has no entry for that source. */
  readonly cached: ReadonlyMap<string, Uint8Array>;
  /** Present in a `--fetch` run only. */
  readonly fetched?: ReadonlyMap<string, FetchOutcome>;
}

/** `repo@revision:path`, the name a tuple goes by in messages. */
export function tupleName(s: EvidenceSource): string {
  return `${s.repo}@${s.revision}:${s.path}`;
}

/**
 * Checks every tuple, assertion and control, then refuses the result if its text looks like it
 * carries a secret.
 */
export async function checkEvidence(inputs: EvidenceInputs): Promise<EvidenceOutcome> {
  const { manifest } = inputs;
  const sources = await Promise.all(manifest.sources.map((s) => checkSource(s, inputs)));
  const verified = new Map<string, string>();
  const decoder = new TextDecoder();
  for (const v of sources) {
    const bytes = inputs.cached.get(v.id);
    if (v.verdict === "pass" && bytes) verified.set(v.id, decoder.decode(bytes));
  }
  const assertions = manifest.assertions.map((a) => checkAssertion(a, verified));
  const controls = await Promise.all(
    manifest.controls.map((c) => runControl(c, manifest, inputs, verified)),
  );
  const result: EvidenceCheckResult = {
    manifest: {
      name: manifest.metadata.name,
      file: inputs.manifestFile,
      sha256: await sha256Hex(inputs.manifestBytes),
    },
    mode: inputs.fetched ? "fetch" : "offline",
    ok: [...sources, ...assertions, ...controls].every((v) => v.verdict === "pass"),
    sources,
    assertions,
    controls,
    counts: { sources: tally(sources), assertions: tally(assertions), controls: tally(controls) },
  };
  return sealAgainstSecrets(result);
}

/** Refuses a result whose serialised form contains secret-looking content. */
export function sealAgainstSecrets(result: EvidenceCheckResult): EvidenceOutcome {
  const findings = scanForSecrets(JSON.stringify(result));
  if (findings.length === 0) return { status: "checked", result };
  const kinds = [...new Set(findings.map((f) => f.kind))].join(", ");
  return {
    status: "refused",
    findings,
    problem: {
      reason: "EvidenceSecretDetected",
      message: `evidence results for ${result.manifest.file} contain secret-looking content ` +
        `(${kinds}); nothing is released`,
    },
  };
}

function tally(vs: readonly { verdict: string }[]) {
  const passed = vs.filter((v) => v.verdict === "pass").length;
  return { passed, failed: vs.length - passed };
}

async function checkSource(s: EvidenceSource, inputs: EvidenceInputs): Promise<SourceVerdict> {
  const base = {
    id: s.id,
    repo: s.repo,
    revision: s.revision,
    path: s.path,
    expectedSha256: s.sha256,
  };
  const fetched = inputs.fetched?.get(s.id);
  const fetchedSha = fetched?.ok ? { fetchedSha256: fetched.sha256 } : {};
  if (inputs.fetched && !fetched?.ok) {
    // An unread download is never a pass, whatever the cache holds from an earlier run.
    const why = fetched && !fetched.ok ? fetched.message : "not fetched";
    const reason = fetched && !fetched.ok && fetched.reason === "EvidenceFetchTimedOut"
      ? "EvidenceFetchTimedOut"
      : "EvidenceFetchFailed";
    return fail(base, reason, `fetch of ${tupleName(s)} failed: ${why}`);
  }
  if (fetched?.ok && fetched.sha256 !== s.sha256) {
    return fail(
      { ...base, ...fetchedSha },
      "EvidenceHashMismatch",
      `download of ${tupleName(s)}: expected sha256 ${s.sha256}, actual ${fetched.sha256}`,
    );
  }
  const bytes = inputs.cached.get(s.id);
  if (!bytes) {
    return fail(
      { ...base, ...fetchedSha },
      "EvidenceFileMissing",
      `no cache entry for ${tupleName(s)}; run with --fetch`,
    );
  }
  const actual = await sha256Hex(bytes);
  const withHashes = { ...base, ...fetchedSha, cachedSha256: actual };
  if (actual !== s.sha256) {
    return fail(
      withHashes,
      "EvidenceHashMismatch",
      `cache entry for ${tupleName(s)}: expected sha256 ${s.sha256}, actual ${actual}`,
    );
  }
  return { ...withHashes, verdict: "pass", message: `sha256 ${actual} matches` };
}

function fail<T extends object>(
  base: T,
  reason: SourceVerdict["reason"] & string,
  message: string,
): T & { verdict: "fail"; reason: typeof reason; message: string } {
  return { ...base, verdict: "fail", reason, message };
}

function checkAssertion(a: EvidenceAssertion, verified: Map<string, string>): AssertionVerdict {
  const base = { name: a.name, kind: a.kind, source: a.source, claim: claimOf(a) };
  const text = verified.get(a.source);
  if (text === undefined) {
    return fail(
      base,
      "EvidenceAssertionFailed",
      `source ${a.source} did not pass its hash check; assertion not evaluated`,
    );
  }
  const outcome = a.kind === "order"
    ? checkOrder(text, a.function, a.calls)
    : a.kind === "independent"
    ? checkIndependent(text, a.function, a.option, a.flag)
    : checkContains(text, a.text);
  return outcome.holds
    ? { ...base, verdict: "pass", message: outcome.message }
    : fail(base, "EvidenceAssertionFailed", outcome.message);
}

function claimOf(a: EvidenceAssertion): string {
  if (a.kind === "order") return `in ${a.function}: ${a.calls.join(" precedes ")}`;
  if (a.kind === "independent") {
    return `in ${a.function}: ${a.option} is used independently of ${a.flag}`;
  }
  return `file contains ${JSON.stringify(a.text)}`;
}

async function runControl(
  c: EvidenceControl,
  manifest: EvidenceManifest,
  inputs: EvidenceInputs,
  verified: Map<string, string>,
): Promise<ControlVerdict> {
  const base = { name: c.name, kind: c.kind, expected: "fail" as const };
  const observed = c.kind === "reversed-order"
    ? reversedOrder(c, manifest, verified)
    : await corruptedCache(c.source, manifest, inputs);
  if (observed.result === "fail") {
    return { ...base, observed: "fail", verdict: "pass", message: observed.message };
  }
  if (observed.result === "not-run") {
    return fail({ ...base, observed: "not-run" }, "EvidenceFileMissing", observed.message);
  }
  return fail(
    { ...base, observed: "pass" },
    "EvidenceControlUnexpectedlyPassed",
    `control passed but must fail: ${observed.message}`,
  );
}

interface Observation {
  readonly result: "pass" | "fail" | "not-run";
  readonly message: string;
}

function reversedOrder(
  c: Extract<EvidenceControl, { kind: "reversed-order" }>,
  manifest: EvidenceManifest,
  verified: Map<string, string>,
): Observation {
  const target = manifest.assertions.find((a) => a.name === c.assertion);
  if (target?.kind !== "order") return { result: "not-run", message: "no such order assertion" };
  const calls = c.calls ?? [...target.calls].reverse();
  const original = verified.get(target.source);
  const source = manifest.sources.find((s) => s.id === target.source);
  const body = original === undefined
    ? undefined
    : findFunctionBody(maskCommentsAndStrings(original), target.function);
  const go = body ? body.dialect === "go" : (source?.path.endsWith(".go") ?? true);
  const synthetic = syntheticOrderSource(target.function, calls, go);
  const outcome = checkOrder(synthetic, target.function, target.calls);
  const label = `synthetic ${target.function} calling ${calls.join(", ")}`;
  return { result: outcome.holds ? "pass" : "fail", message: `${label}: ${outcome.message}` };
}

async function corruptedCache(
  id: string,
  manifest: EvidenceManifest,
  inputs: EvidenceInputs,
): Promise<Observation> {
  const source = manifest.sources.find((s) => s.id === id);
  const bytes = inputs.cached.get(id);
  if (!source || !bytes) return { result: "not-run", message: `no cache entry for ${id}` };
  const synthetic = new TextEncoder().encode(
    "synthetic text written by the corrupted-cache control\n",
  );
  const corrupted = new Map(inputs.cached).set(id, synthetic);
  const offlineInputs: EvidenceInputs = {
    manifest: inputs.manifest,
    manifestFile: inputs.manifestFile,
    manifestBytes: inputs.manifestBytes,
    cached: corrupted,
  };
  const v = await checkSource(
    source,
    offlineInputs,
  );
  return {
    result: v.verdict,
    message: v.verdict === "fail"
      ? `hash check rejected the corrupted entry for ${tupleName(source)}`
      : `hash check accepted corrupted bytes for ${tupleName(source)}`,
  };
}
