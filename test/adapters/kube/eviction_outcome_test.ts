import { deepStrictEqual as assertEquals, throws } from "node:assert/strict";
import { classifyEviction } from "../../../src/adapters/kube/eviction_outcome.ts";
import { CairnError } from "../../../src/domain/errors.ts";

const status = (code: number, message: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    kind: "Status",
    apiVersion: "v1",
    status: code < 400 ? "Success" : "Failure",
    code,
    message,
    ...extra,
  });

Deno.test("classifyEviction() does not accept a 2xx whose body is a Failure Status", () => {
  const body = status(500, "This pod has more than one PodDisruptionBudget, which …");
  assertEquals(classifyEviction(201, body, {}), {
    kind: "failed",
    reason: "EvictionMultiplePdbs",
    httpStatus: 500,
    message: "This pod has more than one PodDisruptionBudget, which …",
  });
  assertEquals(classifyEviction(201, status(201, ""), {}), { kind: "accepted" });
  assertEquals(classifyEviction(200, '{"kind":"Eviction"}', {}), { kind: "accepted" });
});

Deno.test("classifyEviction() reads 429 causes and Retry-After, 404 as gone, 403 as refused", () => {
  const body = status(429, "budget", {
    details: { causes: [{ reason: "DisruptionBudget", message: "budget" }] },
  });
  assertEquals(classifyEviction(429, body, { "retry-after": "10" }), {
    kind: "blocked",
    httpStatus: 429,
    message: "budget",
    retryAfterSeconds: 10,
    causes: ["DisruptionBudget"],
  });
  assertEquals(classifyEviction(404, status(404, "not found"), {}), { kind: "gone" });
  const ns = classifyEviction(403, status(403, "namespace terminating"), {});
  assertEquals(ns.kind === "failed" && ns.reason, "EvictionRefused");
  throws(() => classifyEviction(503, status(503, "down"), {}), CairnError);
});

Deno.test("classifyEviction() accepts nothing outside 2xx, whatever the body (a proxy's error page, no body at all)", () => {
  for (
    const [code, body] of [
      [503, "upstream connect error or disconnect/reset before headers"],
      [502, ""],
      [500, "<html><body>Internal Server Error</body></html>"],
      [302, ""],
    ] as const
  ) {
    throws(() => classifyEviction(code, body, {}), CairnError, `${code} ${body}`);
  }
});
