/**
 * The one vocabulary of findings: a health reader, a round, a live check, an evidence check and
 * a safeguard row all end in one of these three words. `unreadable` is never a pass and never a
 * failure: absence of evidence classifies nothing.
 */

/** Every verdict, in the order a set of findings is judged by (any fail, then any unreadable). */
export const VERDICTS = ["pass", "fail", "unreadable"] as const;

/** One verdict. */
export type Verdict = (typeof VERDICTS)[number];

/**
 * True for a verdict word (for values read back from storage).
 *
 * @example
 * ```ts
 * import { isVerdict } from "./verdict.ts";
 * isVerdict("unreadable"); // true
 * isVerdict("ok"); // false
 * ```
 */
export function isVerdict(v: unknown): v is Verdict {
  return (VERDICTS as readonly unknown[]).includes(v);
}
