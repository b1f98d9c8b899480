/**
 * `rejected` rests on the response class: only a validation rejection (gRPC InvalidArgument) is
 * recorded `rejected-pre-mutation`; every other answer of the node accounts for the attempt and
 * proves nothing else, and a transport gap accounts for nothing.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { failureSent } from "../../../src/engine/executor/mutation.ts";
import type { TalosFailure } from "../../../src/ports/talos.ts";

function failure(outcome: TalosFailure["outcome"], grpcCode: number): TalosFailure {
  return {
    outcome,
    reason: grpcCode === 7 ? "TalosPermissionDenied" : "TalosUnavailable",
    grpcCode,
    message: "m",
    node: "worker-1",
    method: "/machine.MachineService/Upgrade",
  };
}

Deno.test("failureSent(): only InvalidArgument is a pre-mutation (validation) rejection", () => {
  assertEquals(failureSent(failure("rejected", 3)).responseClass, "rejected-pre-mutation");
  for (const code of [2, 5, 7, 9, 13, 14]) {
    assertEquals(failureSent(failure("rejected", code)).responseClass, "target-error", `${code}`);
  }
});

Deno.test("failureSent(): a lost response or a transport gap accounts for nothing", () => {
  assertEquals(failureSent(failure("sent-no-response", -1)).responseClass, "lost");
  assertEquals(failureSent(failure("transport-failure", 14)).responseClass, "transport-failure");
  assertEquals(failureSent(failure("not-sent", -1)).responseClass, "transport-failure");
});
