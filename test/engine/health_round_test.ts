import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { SimClock } from "../../src/sim/clock.ts";
import { collectRound } from "../../src/engine/health_round.ts";
import type { HealthPolicy } from "../../src/domain/health/policy_parse.ts";
import type { HealthEvidence } from "../../src/domain/health/types.ts";
import { binding, live, node } from "../domain/health/fixtures.ts";

const policy: HealthPolicy = {
  name: "p",
  cluster: "c",
  bindings: [
    binding({ name: "fast", reader: "nodes", timeoutSeconds: 5 }),
    binding({ name: "slow", reader: "nodes", timeoutSeconds: 60 }),
  ],
  doc: undefined as never,
};

Deno.test("collectRound() bounds each read by the round's remaining time; a timed-out read is unreadable", async () => {
  const clock = new SimClock(Date.UTC(2026, 11, 1));
  const seen: number[] = [];
  const evidence: HealthEvidence = {
    prepare: (b, deadlineMs, signal) => {
      seen.push(deadlineMs - clock.now());
      if (b.name === "fast") return Promise.resolve();
      return new Promise((_, reject) =>
        signal.addEventListener("abort", () => reject(signal.reason))
      );
    },
    kubeView: () => ({
      resource: () => ({
        ...live([node("cp-1")]),
        freshness: { state: "live", confirmedAtMs: clock.now() },
      }),
    }),
    talosView: () => ({ node: () => undefined }),
  };
  const pending = collectRound({ clock, evidence }, policy, { intervalMs: 20_000 });
  await clock.advance(20_000);
  const r = await pending;
  assertEquals(seen, [5_000, 20_000]); // min(binding timeout, time left in the round)
  assertEquals(r.results.map((x) => [x.binding, x.verdict, x.reason]), [
    ["fast", "pass", "HealthCheckPassed"],
    ["slow", "unreadable", "HealthReadTimedOut"],
  ]);
  assertEquals([r.verdict, r.reason], ["unreadable", "HealthReadTimedOut"]);
});
