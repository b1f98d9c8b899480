import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { createCairnMetrics } from "../../../src/adapters/metrics/cairn_metrics.ts";
import { OPERATION_STATES } from "../../../src/domain/operation.ts";
import { parseExposition, type Sample } from "./prom_text_checker.ts";

function value(samples: readonly Sample[], labels: Record<string, string>): number | undefined {
  return samples.find((s) => JSON.stringify(s.labels) === JSON.stringify(labels))?.value;
}

Deno.test("createCairnMetrics() exposes every cairn metric in valid exposition text", () => {
  const m = createCairnMetrics({ version: "0.1.0" });
  m.setOperations({ completed: 3, unresolved: 1 });
  m.healthRound("pass");
  m.healthRound("pass");
  m.healthRound("unreadable");
  m.attempt("install", "accepted");
  m.attempt("install", "transport-failure");
  m.observeGitFetchSeconds(0.02);
  m.observeGitCommitSeconds(1.2);
  m.reconcileError("GitFetchFailed");
  m.hold("MaintenanceWindowClosed");
  m.stall("drain");
  const fams = parseExposition(m.render());
  assertEquals([...fams.keys()].sort(), [
    "cairn_attempts_total",
    "cairn_build_info",
    "cairn_git_commit_seconds",
    "cairn_git_fetch_seconds",
    "cairn_health_rounds_total",
    "cairn_holds_total",
    "cairn_operations",
    "cairn_reconcile_errors_total",
    "cairn_stalls_total",
  ]);
  assertEquals(
    value(fams.get("cairn_holds_total")!.samples, { reason: "MaintenanceWindowClosed" }),
    1,
  );
  assertEquals(value(fams.get("cairn_stalls_total")!.samples, { phase: "drain" }), 1);
  const ops = fams.get("cairn_operations")!;
  assertEquals(ops.type, "gauge");
  assertEquals(ops.samples.length, OPERATION_STATES.length);
  assertEquals(value(ops.samples, { state: "completed" }), 3);
  assertEquals(value(ops.samples, { state: "sending" }), 0);
  const rounds = fams.get("cairn_health_rounds_total")!.samples;
  assertEquals(value(rounds, { verdict: "pass" }), 2);
  const att = fams.get("cairn_attempts_total")!.samples;
  assertEquals(value(att, { phase: "install", response_class: "transport-failure" }), 1);
  assertEquals(fams.get("cairn_git_fetch_seconds")!.type, "histogram");
  assertEquals(value(fams.get("cairn_git_commit_seconds")!.samples, {}), 1.2);
  assertEquals(value(fams.get("cairn_build_info")!.samples, { version: "0.1.0" }), 1);
});

Deno.test("setOperations() resets states that are no longer counted to zero", () => {
  const m = createCairnMetrics({ version: "x" });
  m.setOperations({ sending: 1 });
  m.setOperations({ completed: 1 });
  const ops = parseExposition(m.render()).get("cairn_operations")!.samples;
  assertEquals(value(ops, { state: "sending" }), 0);
  assertEquals(value(ops, { state: "completed" }), 1);
});
