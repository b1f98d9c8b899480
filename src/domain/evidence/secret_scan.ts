/**
 * Refuses evidence output that looks like it carries a secret. Findings name the kind and the
 * offset only; the matched text itself is never repeated, so a finding is safe to print.
 */

/** Kinds of secret-looking content the scan recognises. */
export type SecretKind =
  | "private-key-block"
  | "github-token"
  | "aws-access-key-id"
  | "kubeconfig-client-key"
  | "token-field";

/** One secret-looking match: its kind and where it starts. */
export interface SecretFinding {
  readonly kind: SecretKind;
  readonly offset: number;
}

const PATTERNS: ReadonlyArray<readonly [SecretKind, RegExp]> = [
  ["private-key-block", /-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----/g],
  ["github-token", /\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}/g],
  ["aws-access-key-id", /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g],
  ["kubeconfig-client-key", /client-key-data\s*:\s*\S+/g],
  // A long opaque value after a token-ish key; short words ("token: none") are not secrets.
  [
    "token-field",
    /\b(?:token|secret|password|api[_-]?key)["']?\s*[:=]\s*["']?[A-Za-z0-9._~+/=-]{20,}/gi,
  ],
];

/**
 * Every secret-looking match in `text`, in offset order.
 *
 * @example
 * ```ts
 * import { scanForSecrets } from "./secret_scan.ts";
 * scanForSecrets("token: " + "x".repeat(32))[0]?.kind; // "token-field"
 * ```
 */
export function scanForSecrets(text: string): SecretFinding[] {
  const found: SecretFinding[] = [];
  for (const [kind, re] of PATTERNS) {
    for (const m of text.matchAll(re)) found.push({ kind, offset: m.index });
  }
  return found.sort((a, b) => a.offset - b.offset);
}
