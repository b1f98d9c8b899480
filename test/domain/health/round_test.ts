import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import type { HealthPolicy } from "../../../src/domain/health/policy_parse.ts";
import { readBinding } from "../../../src/domain/health/readers/index.ts";
import {
  evaluateRound,
  gateVerdict,
  journalRows,
  objectRef,
} from "../../../src/domain/health/round.ts";
import type { BindingResult } from "../../../src/domain/health/types.ts";
import { inputs, node, nodesB, NOW, versionsB } from "./fixtures.ts";

const policy: HealthPolicy = {
  name: "home-ops",
  cluster: "home-ops",
  bindings: [nodesB, versionsB],
  doc: undefined as never,
};
const window = (start: number) => ({ startedAtMs: start, deadlineMs: start + 30_000 });

function roundAt(start: number, nodes: ReturnType<typeof node>[]) {
  const snap = { items: nodes, freshness: { state: "live" as const, confirmedAtMs: start + 1000 } };
  const ins = { ...inputs({ "v1/Node": snap }), nowMs: start + 1000 };
  return evaluateRound(policy, window(start), [
    readBinding(nodesB, ins, start),
    readBinding(versionsB, ins, start),
  ]);
}

Deno.test("an earlier passing round does not mask a failure in the next round", () => {
  const r1 = roundAt(NOW, [node("cp-1"), node("worker-1")]);
  assertEquals(r1.verdict, "pass");
  const r2 = roundAt(NOW + 60_000, [node("cp-1"), node("worker-1", { ready: false })]);
  assertEquals([r2.verdict, r2.reason], ["fail", "NodeNotReady"]);
  assertEquals(gateVerdict([r1, r2]), "fail");
  assertEquals(gateVerdict([r2, roundAt(NOW + 120_000, [node("cp-1")])]), "pass");
  assertEquals(gateVerdict([]), "unreadable");
});

Deno.test("within a round a later pass never masks an earlier fail of the same binding", () => {
  const ok = readBinding(
    nodesB,
    { ...inputs({ "v1/Node": [node("cp-1")] }), nowMs: NOW + 1000 },
    NOW,
  );
  const bad = readBinding(nodesB, {
    ...inputs({ "v1/Node": [node("cp-1", { ready: false })] }),
    nowMs: NOW + 2000,
  }, NOW);
  const v = readBinding(
    versionsB,
    { ...inputs({ "v1/Node": [node("cp-1")] }), nowMs: NOW + 1000 },
    NOW,
  );
  assertEquals(evaluateRound(policy, window(NOW), [bad, ok, v]).verdict, "fail");
});

Deno.test("a round with a missing, late or unreadable binding does not pass", () => {
  const ins = { ...inputs({ "v1/Node": [node("cp-1")] }), nowMs: NOW + 1000 };
  const n = readBinding(nodesB, ins, NOW);
  const missing = evaluateRound(policy, window(NOW), [n]);
  assertEquals([missing.verdict, missing.results[1]?.reason], [
    "unreadable",
    "HealthResultMissing",
  ]);
  const lateV: BindingResult = { ...readBinding(versionsB, ins, NOW), completedAtMs: NOW + 31_000 };
  const late = evaluateRound(policy, window(NOW), [n, lateV]);
  assertEquals([late.verdict, late.results[1]?.reason], ["unreadable", "HealthRoundLate"]);
  const earlier: BindingResult = { ...readBinding(versionsB, ins, NOW), startedAtMs: NOW - 5 };
  assertEquals(evaluateRound(policy, window(NOW), [n, earlier]).verdict, "unreadable");
  const staleIns = inputs({ "v1/Node": { items: [node("cp-1")], freshness: { state: "stale" } } });
  const unread = evaluateRound(policy, window(NOW), [n, readBinding(versionsB, staleIns, NOW)]);
  assertEquals([unread.verdict, unread.reason], ["unreadable", "HealthCacheStale"]);
  assertEquals(journalRows(unread).map((r) => [r.binding, r.outcome]), [["nodes", "pass"], [
    "versions",
    "unreadable",
  ]]);
});

Deno.test("journal rows name each object read as Kind namespace/name beside its UID", () => {
  const ins = { ...inputs({ "v1/Node": [node("cp-1")] }), nowMs: NOW + 1000 };
  const round = evaluateRound(policy, window(NOW), [
    readBinding(nodesB, ins, NOW),
    readBinding(versionsB, ins, NOW),
  ]);
  const rows = journalRows(round).filter((r) => r.objectUid !== undefined);
  ok(rows.length > 0, "the nodes binding reads the Node");
  for (const r of rows) assertEquals(r.objectRef, "Node cp-1");
  assertEquals(
    objectRef({ kind: "Deployment", namespace: "apps", name: "web" }),
    "Deployment apps/web",
  );
});
