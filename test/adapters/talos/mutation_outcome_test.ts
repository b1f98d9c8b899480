/**
 * How a Talos mutation stream's end is classified (shared by the gRPC client and the in-process
 * port): only the stream's final item makes an install or pull `ok`; an end without it, or a
 * failure after items arrived, leaves the effect unknown.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import {
  completedInstallTag,
  streamMutationOutcome,
} from "../../../src/adapters/talos/mutation_outcome.ts";
import { Code } from "../../../src/adapters/talos/errors.ts";

const PATH = "/machine.LifecycleService/Upgrade";

Deno.test("a mutation stream that ends OK without its final item is incomplete and landed, never ok", () => {
  const r = streamMutationOutcome(
    { code: Code.OK, message: "", items: [{ progress: { message: "pulling" } }] },
    undefined,
    "worker-1",
    PATH,
  );
  assertEquals(r.outcome === "ok" ? "ok" : [r.outcome, r.reason], [
    "sent-no-response",
    "TalosStreamIncomplete",
  ]);
  const done = streamMutationOutcome(
    { code: Code.OK, message: "", items: [{}] },
    { exitCode: 0 },
    "worker-1",
    PATH,
  );
  assertEquals(done, { outcome: "ok", value: { exitCode: 0 } });
});

Deno.test("a mutation stream cut after items arrived landed: unanswered, unless the server refused", () => {
  const cut = streamMutationOutcome(
    { code: Code.UNAVAILABLE, message: "reset", items: [{}] },
    undefined,
    "worker-1",
    PATH,
  );
  assertEquals(cut.outcome, "sent-no-response");
  const before = streamMutationOutcome(
    { code: Code.UNAVAILABLE, message: "refused", items: [] },
    undefined,
    "worker-1",
    PATH,
  );
  assertEquals(before.outcome, "transport-failure");
  const refused = streamMutationOutcome(
    { code: Code.FAILED_PRECONDITION, message: "locked", items: [{}] },
    undefined,
    "worker-1",
    PATH,
  );
  assertEquals(refused.outcome, "rejected");
});

Deno.test("completedInstallTag() reads the installer's completion line, and nothing else", () => {
  assertEquals(
    completedInstallTag([
      "pulling ghcr.io/siderolabs/installer:v1.14.2",
      "installation of v1.14.2 complete",
    ]),
    "v1.14.2",
  );
  assertEquals(completedInstallTag(["installation of v1.14.2 failed"]), undefined);
  assertEquals(completedInstallTag([]), undefined);
});
