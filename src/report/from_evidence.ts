/**
 * Evidence check results → the report model's source-check and assertion rows. Pure. A tuple
 * whose file could not be read or fetched is `unreadable`, never `pass`; an assertion over a
 * source that did not pass its hash check was not evaluated and is `unreadable` too; a hash
 * mismatch, a failing assertion and a control that passed when it must fail are `fail`.
 */
import type {
  AssertionVerdict,
  ControlVerdict,
  EvidenceCheckResult,
  EvidenceOutcome,
  SourceVerdict,
} from "../domain/evidence/result.ts";
import type { SourceProvenance } from "../domain/evidence/provenance.ts";
import type { AssertionResult, SourceCheck } from "./model.ts";
import type { Verdict } from "../domain/verdict.ts";

/** The evidence section of a report. */
export interface EvidenceRows {
  readonly sourceChecks: readonly SourceCheck[];
  readonly assertions: readonly AssertionResult[];
}

/** Reasons meaning "the bytes were not there to check", as opposed to "they were wrong". */
const UNREAD = new Set(["EvidenceFileMissing", "EvidenceFetchFailed"]);

function sourceRow(v: SourceVerdict, provenance?: SourceProvenance): SourceCheck {
  const actual = v.cachedSha256 ?? v.fetchedSha256;
  const verdict: Verdict = v.verdict === "pass"
    ? "pass"
    : UNREAD.has(v.reason ?? "")
    ? "unreadable"
    : "fail";
  return {
    repository: v.repo,
    revision: v.revision,
    path: v.path,
    expectedSha256: v.expectedSha256,
    ...(actual === undefined ? {} : { actualSha256: actual }),
    verdict,
    ...(v.reason === undefined ? {} : { reason: v.reason }),
    ...(provenance === undefined ? {} : { provenance }),
  };
}

function assertionRow(a: AssertionVerdict, unread: ReadonlySet<string>): AssertionResult {
  const verdict: Verdict = a.verdict === "pass"
    ? "pass"
    : unread.has(a.source)
    ? "unreadable"
    : "fail";
  return { name: a.name, verdict, detail: `${a.claim}: ${a.message}` };
}

function controlRow(c: ControlVerdict): AssertionResult {
  const verdict: Verdict = c.verdict === "pass"
    ? "pass"
    : c.observed === "not-run"
    ? "unreadable"
    : "fail";
  return {
    name: `control ${c.name}`,
    verdict,
    detail: `${c.kind} control, must fail, observed ${c.observed}: ${c.message}`,
  };
}

/**
 * Every tuple (expected and actual hash, verdict), every assertion and every control of a
 * checked result, in manifest order; controls follow the assertions.
 */
export function evidenceRows(
  result: EvidenceCheckResult,
  provenance: Readonly<Record<string, SourceProvenance>> = {},
): EvidenceRows {
  const sourceChecks = result.sources.map((s) => sourceRow(s, provenance[s.id]));
  const notPassed = new Set(
    result.sources.filter((s) => s.verdict !== "pass").map((s) => s.id),
  );
  const assertions = [
    ...result.assertions.map((a) => assertionRow(a, notPassed)),
    ...result.controls.map(controlRow),
  ];
  return { sourceChecks, assertions };
}

/**
 * Rows of an evidence outcome. A result refused for secret-looking content releases no verdict
 * text at all: one `unreadable` row names the manifest and the reason instead.
 */
export function evidenceOutcomeRows(
  outcome: EvidenceOutcome,
  manifestFile: string,
  provenance: Readonly<Record<string, SourceProvenance>> = {},
): EvidenceRows {
  if (outcome.status === "checked") return evidenceRows(outcome.result, provenance);
  return {
    sourceChecks: [],
    assertions: [{
      name: `evidence ${manifestFile}`,
      verdict: "unreadable",
      detail: `${outcome.problem.reason}: results withheld`,
    }],
  };
}
