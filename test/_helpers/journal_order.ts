/** Assertions over an operation's hash-chained timeline. */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import type { OperationDetail } from "../../src/ports/journal.ts";

/**
 * Every attempt of the operation is preceded by a phase intent of its phase (after the previous
 * attempt's events), and followed by exactly one response for it, before the next attempt:
 * intent → attempt → response, in this order on the chained timeline.
 */
export function assertIntentAttemptResponse(d: OperationDetail): void {
  const events = d.events.map((e) => ({ seq: e.seq, kind: e.kind, body: JSON.parse(e.body) }));
  let cursor = -1;
  for (const a of d.attempts) {
    const at = events.findIndex((e) => e.kind === "attempt" && e.body.attempt === a.id);
    assert(at > cursor, `attempt ${a.number} (${a.phase}) is on the timeline after the previous`);
    const intent = events.slice(cursor + 1, at).findLast((e) =>
      e.kind === "phase-intent" && e.body.phase === a.phase
    );
    assert(intent, `attempt ${a.number} (${a.phase}) has a prior intent of its phase`);
    const responses = events.filter((e) => e.kind === "response" && e.body.attempt === a.id);
    assertEquals(responses.length, 1, `attempt ${a.number} (${a.phase}) has one response`);
    const resp = events.indexOf(responses[0]!);
    assert(resp > at, `the response of attempt ${a.number} follows it`);
    const next = events.findIndex((e, i) => i > at && e.kind === "attempt");
    assert(next === -1 || resp < next, `attempt ${a.number} is answered before the next is sent`);
    cursor = resp;
  }
}
