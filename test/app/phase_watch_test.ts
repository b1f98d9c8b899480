/**
 * Progress hears every phase the executor records, by node and place, with what the run now
 * waits for, without touching the record.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { type PhaseEvent, watchPhases } from "../../src/app/phase_watch.ts";
import type {
  DispatchCheckInput,
  HealthRoundInput,
  Journal,
  PhaseInput,
  TransitionInput,
} from "../../src/ports/journal.ts";

function fakeJournal(recorded: unknown[]): Journal {
  const machines: Record<string, string> = { op1: "worker-1", op2: "cp-1" };
  const keep = <T>(v: T, answer: unknown) => {
    recorded.push(v);
    return Promise.resolve(answer);
  };
  return {
    recordPhase: (input: PhaseInput) => keep(input, undefined),
    recordHealthRound: (input: HealthRoundInput) => keep(input, "round-1"),
    recordDispatchCheck: (input: DispatchCheckInput) => keep(input, 7),
    transition: (input: TransitionInput) => keep(input, { id: input.operationId }),
    getOperation: (id: string) => Promise.resolve({ id, machine: machines[id] }),
  } as unknown as Journal;
}

const phase = (
  operationId: string,
  p: string,
  kind: "intent" | "fact",
  detail: Record<string, unknown> = {},
) => ({ operationId, phase: p, kind, detail, nowMs: 0 }) as unknown as PhaseInput;

Deno.test("every recorded phase is recorded and told, with the node's place and what it waits for", async () => {
  const recorded: unknown[] = [];
  const told: PhaseEvent[] = [];
  const j = watchPhases(fakeJournal(recorded), ["worker-1", "cp-1"], (e) => told.push(e));
  await j.recordPhase(phase("op1", "cordon", "intent"));
  await j.recordPhase(phase("op1", "cordon", "fact"));
  await j.recordPhase(phase("op2", "install", "intent"));
  await j.recordPhase(phase("op2", "reboot", "intent"));
  assertEquals(recorded.length, 4);
  assertEquals(told, [
    {
      node: "worker-1",
      index: 1,
      total: 2,
      phase: "cordon",
      waiting: "the node marked unschedulable",
    },
    { node: "worker-1", index: 1, total: 2, phase: "cordon done" },
    {
      node: "cp-1",
      index: 2,
      total: 2,
      phase: "install",
      waiting: "the installer written to the other boot slot",
    },
    {
      node: "cp-1",
      index: 2,
      total: 2,
      phase: "reboot",
      waiting: "the node to reboot and come back with a new boot ID",
    },
  ]);
});

Deno.test("a drain's records never read as its end: each names the pod and what is still awaited", async () => {
  const told: PhaseEvent[] = [];
  const j = watchPhases(fakeJournal([]), ["worker-1"], (e) => told.push(e));
  await j.recordPhase(phase("op1", "drain", "fact", { planned: ["a/x", "a/y"] }));
  await j.recordPhase(phase("op1", "drain", "intent", { evict: "a/x" }));
  await j.recordPhase(phase("op1", "drain", "fact", { evict: "a/x", outcome: "accepted" }));
  await j.recordPhase(phase("op1", "drain", "fact", { evict: "a/y", outcome: "blocked" }));
  await j.recordPhase(phase("op1", "drain", "fact", { boundReached: true, remaining: ["a/y"] }));
  assertEquals(told.map((e) => [e.phase, e.waiting]), [
    ["drain", "the node's pods evicted (2 to evict)"],
    ["drain", "the node's pods evicted (a/x: asked)"],
    ["drain", "the node's pods evicted (a/x: accepted)"],
    ["drain", "the node's pods evicted (a/y: held by its budget)"],
    ["drain bound passed, 1 pods left", undefined],
  ]);
});

Deno.test("health rounds, dispatch checks and transitions are told; a gate round with no operation is not guessed", async () => {
  const recorded: unknown[] = [];
  const told: PhaseEvent[] = [];
  const j = watchPhases(fakeJournal(recorded), ["worker-1", "cp-1"], (e) => told.push(e));
  const round = (operationId: string | undefined, outcomes: string[]) =>
    ({
      cluster: "home-ops",
      ...(operationId ? { operationId } : {}),
      purpose: operationId ? "post-gate" : "gate",
      startedAtMs: 0,
      finishedAtMs: 0,
      results: outcomes.map((outcome, i) => ({
        binding: `b${i}`,
        outcome,
        reason: "",
        observedAtMs: 0,
      })),
    }) as unknown as HealthRoundInput;
  assertEquals(await j.recordHealthRound(round(undefined, ["fail"])), "round-1");
  await j.recordDispatchCheck(
    { node: "worker-1", verdict: "pass" } as unknown as DispatchCheckInput,
  );
  await j.recordDispatchCheck({ node: null, verdict: "pass" } as unknown as DispatchCheckInput);
  await j.recordHealthRound(round("op1", ["pass", "fail", "unreadable"]));
  await j.recordHealthRound(round("op1", ["pass", "pass"]));
  await j.transition({ operationId: "op1", to: "completed" } as unknown as TransitionInput);
  await j.transition({ operationId: "op2", to: "completed" } as unknown as TransitionInput);
  assertEquals(recorded.length, 7);
  assertEquals(told.map((e) => [e.node, e.phase, e.waiting]), [
    ["worker-1", "dispatch check pass", "the commitment"],
    [
      "worker-1",
      "health post-gate fail",
      "a passing health round (last: fail, 2 of 3 checks)",
    ],
    ["worker-1", "health post-gate pass", undefined],
    ["worker-1", "completed", "the next node's health gate"],
    ["cp-1", "completed", undefined], // the last node: nothing comes after it
  ]);
});

Deno.test("a failing display never fails the run or loses the record", async () => {
  const recorded: unknown[] = [];
  const j = watchPhases(fakeJournal(recorded), ["worker-1"], () => {
    throw new Error("terminal gone");
  });
  await j.recordPhase(phase("op1", "cordon", "intent"));
  await j.recordDispatchCheck(
    { node: "worker-1", verdict: "held" } as unknown as DispatchCheckInput,
  );
  await j.transition({ operationId: "op1", to: "verifying" } as unknown as TransitionInput);
  assertEquals(recorded.length, 3);
});
