import { deepStrictEqual as assertEquals, ok as assert, throws } from "node:assert/strict";
import {
  accountsForAttempt,
  canTransition,
  encodeId,
  holdsScope,
  isTerminal,
  OPERATION_STATES,
  type OperationState,
  REFUSAL_CAUSES,
  refusalUnsettlesCommitted,
  rejectionProven,
  RESPONSE_CLASSES,
} from "../../src/domain/operation.ts";

// docs/operation-model.md#transitions, written out independently of TRANSITIONS so a slip in
// either shows up.
const ER: Record<string, readonly OperationState[]> = {
  none: ["committed", "completed"],
  committed: ["sending", "unresolved"],
  sending: ["verifying", "rejected", "unresolved"],
  verifying: ["completed", "failed", "unresolved"],
  unresolved: ["completed", "failed", "rejected", "sending", "cancelled"],
  completed: [],
  rejected: [],
  failed: [],
  cancelled: [],
};

Deno.test("canTransition() allows exactly ER's transitions and refuses every other pair", () => {
  let legal = 0;
  for (const from of [null, ...OPERATION_STATES]) {
    for (const to of OPERATION_STATES) {
      const want = ER[from ?? "none"]!.includes(to);
      assertEquals(canTransition(from, to), want, `${from} → ${to}`);
      if (want) legal++;
    }
  }
  assertEquals(legal, 15);
});

Deno.test("terminal states hold no scope; every non-terminal state holds it", () => {
  for (const s of OPERATION_STATES) assertEquals(holdsScope(s), !isTerminal(s), s);
  assertEquals(OPERATION_STATES.filter(isTerminal), [
    "completed",
    "rejected",
    "failed",
    "cancelled",
  ]);
});

Deno.test("only the target's responses, or a resume's fresh reading of the target, account for an attempt", () => {
  assertEquals(RESPONSE_CLASSES.filter(accountsForAttempt), [
    "accepted",
    "rejected-pre-mutation",
    "target-error",
    // A takeover's resume (docs/recovery.md) accounts an in-flight attempt from what it read.
    "observed-in-effect",
    "observed-absent",
    "observed-incomplete",
  ]);
});

Deno.test("attempt refusals by comparisons 1, 2, 3 and 6 unsettle a committed operation", () => {
  for (const [cause, n] of Object.entries(REFUSAL_CAUSES)) {
    const c = cause as keyof typeof REFUSAL_CAUSES;
    assertEquals(refusalUnsettlesCommitted(c), [1, 2, 3, 6].includes(n), cause);
  }
});

Deno.test("encodeId() renders 128 bits as 26 lower-case base32 characters", () => {
  assertEquals(encodeId("ep", new Uint8Array(16)), "ep_" + "a".repeat(26));
  const ones = encodeId("ep", new Uint8Array(16).fill(255));
  assertEquals(ones, "ep_" + "7".repeat(25) + "4");
  const bytes = new Uint8Array(16);
  bytes[0] = 0b10000100; // 10000|100 00… → "q", "q"
  assert(encodeId("op", bytes).startsWith("op_qqa"));
  throws(() => encodeId("ep", new Uint8Array(15)), RangeError);
});

Deno.test("rejected is proven by a validation refusal of every request to the machine; a node hook's Job create needs only its answer", () => {
  const att = (phase: string, responseClass: string | null) => ({ phase, responseClass });
  const refused = att("config-apply", "rejected-pre-mutation");
  assertEquals(rejectionProven([refused]), true);
  // The hook's Job was created: the machine still never changed.
  assertEquals(rejectionProven([att("pre-hook", "accepted"), refused]), true);
  assertEquals(rejectionProven([att("pre-hook", "target-error"), refused]), true);
  // A hook create with no answer leaves the operation open; so does no request to the machine.
  assertEquals(rejectionProven([att("pre-hook", null), refused]), false);
  assertEquals(rejectionProven([att("pre-hook", "transport-failure"), refused]), false);
  assertEquals(rejectionProven([att("pre-hook", "rejected-pre-mutation")]), false);
  assertEquals(rejectionProven([]), false);
  // Any other answer from the machine, before or after, is not a rejection of every request.
  assertEquals(
    rejectionProven([att("pull", "accepted"), att("install", "rejected-pre-mutation")]),
    false,
  );
  assertEquals(rejectionProven([refused, att("config-apply", "target-error")]), false);
});
