/**
 * A round that fails only on other nodes than its target (`failsOnlyElsewhere`) decides nothing
 * about the target: an operator's cordon of a neighbour during the target's verification is no
 * evidence the target failed. Terminal classifications read the round through these, so such a
 * round leaves the target `unresolved` (HealthFailedElsewhere) instead of `failed`; the rounds
 * themselves still record `fail`, and the rollout still stops.
 */
import type { Verdict } from "../../domain/health/types.ts";
import type { PostconditionReading } from "../../domain/operation.ts";
import type { Reason } from "../../domain/reasons.ts";
import type { RoundVerdict } from "./deps.ts";

type Round = Pick<RoundVerdict, "verdict" | "failsOnlyElsewhere">;

/** The round's verdict as far as it concerns its target: failing only elsewhere reads unreadable. */
export function verdictForTarget(r: Round): Verdict {
  return r.failsOnlyElsewhere ? "unreadable" : r.verdict;
}

/** The reason a step ends with on a round that did not pass: `elsewhere` when that is why. */
export function haltReason(r: Round, failed: Reason, unreadable: Reason): Reason {
  if (r.failsOnlyElsewhere) return "HealthFailedElsewhere";
  return r.verdict === "fail" ? failed : unreadable;
}

/** The round's verdict for a summary: `fail-elsewhere` when it failed only on other nodes. */
export function healthText(r: Round): string {
  return r.failsOnlyElsewhere ? "fail-elsewhere" : r.verdict;
}

/**
 * A completion's reading once its post-gate counts: what the target's own reads established stays
 * so only on a passing round; a round failing on the target contradicts it, any other leaves it
 * unreadable.
 */
export function withPostGate(own: PostconditionReading, post: Round): PostconditionReading {
  const health = verdictForTarget(post);
  if (own !== "established" || health === "pass") return own;
  return health === "fail" ? "contradicted" : "unreadable";
}

/**
 * Why a completion stays unresolved: `HealthFailedElsewhere` only when the target's own reads
 * established everything and the post-gate failed only on other nodes, else CompletionUnreadable.
 */
export function unestablishedReason(own: PostconditionReading, post: Round): Reason {
  return own === "established" && post.failsOnlyElsewhere
    ? "HealthFailedElsewhere"
    : "CompletionUnreadable";
}
