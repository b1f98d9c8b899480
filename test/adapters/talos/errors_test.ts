import { deepStrictEqual as assertEquals } from "node:assert/strict";
import {
  Code,
  mutationFailure,
  outcomeForGrpc,
  reasonForGrpc,
} from "../../../src/adapters/talos/errors.ts";

Deno.test("only a refusal the server stated before acting counts as rejected", () => {
  for (const c of [Code.PERMISSION_DENIED, Code.INVALID_ARGUMENT, Code.FAILED_PRECONDITION]) {
    assertEquals(outcomeForGrpc(c), "rejected");
  }
  assertEquals(outcomeForGrpc(Code.DEADLINE_EXCEEDED), "sent-no-response");
  assertEquals(outcomeForGrpc(Code.CANCELLED), "sent-no-response");
  for (const c of [Code.UNAVAILABLE, Code.INTERNAL, Code.UNKNOWN]) {
    assertEquals(outcomeForGrpc(c), "transport-failure");
  }
});

Deno.test("a stream cut after items arrived is sent-no-response, never transport-failure", () => {
  const f = mutationFailure(
    Code.UNAVAILABLE,
    "reset",
    "w1",
    "/machine.LifecycleService/Upgrade",
    true,
  );
  assertEquals([f.outcome, f.reason], ["sent-no-response", "TalosUnavailable"]);
  const r = mutationFailure(Code.FAILED_PRECONDITION, "locked", "w1", "m", true);
  assertEquals(r.outcome, "rejected");
});

Deno.test("reasonForGrpc() tells a worker's etcd refusal from an old API", () => {
  assertEquals(
    reasonForGrpc(Code.UNIMPLEMENTED, "etcd is only available on control plane nodes"),
    "TalosNotControlPlane",
  );
  assertEquals(reasonForGrpc(Code.UNIMPLEMENTED, "unknown service"), "TalosUnimplemented");
  assertEquals(reasonForGrpc(Code.FAILED_PRECONDITION, "x"), "TalosPreconditionFailed");
});
