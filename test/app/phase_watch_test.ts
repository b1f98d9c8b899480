/** Progress hears every phase the executor records, by node and place, without touching the record. */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { type PhaseEvent, watchPhases } from "../../src/app/phase_watch.ts";
import type { Journal, PhaseInput } from "../../src/ports/journal.ts";

function fakeJournal(recorded: PhaseInput[]): Journal {
  const machines: Record<string, string> = { op1: "worker-1", op2: "cp-1" };
  return {
    recordPhase: (input: PhaseInput) => {
      recorded.push(input);
      return Promise.resolve();
    },
    getOperation: (id: string) => Promise.resolve({ id, machine: machines[id] }),
  } as unknown as Journal;
}

const phase = (operationId: string, p: string, kind: "intent" | "fact") =>
  ({ operationId, phase: p, kind, detail: {}, nowMs: 0 }) as unknown as PhaseInput;

Deno.test("every recorded phase is recorded and told, with the node's place in the plan", async () => {
  const recorded: PhaseInput[] = [];
  const told: PhaseEvent[] = [];
  const j = watchPhases(fakeJournal(recorded), ["worker-1", "cp-1"], (e) => told.push(e));
  await j.recordPhase(phase("op1", "drain", "intent"));
  await j.recordPhase(phase("op1", "drain", "fact"));
  await j.recordPhase(phase("op2", "install", "intent"));
  assertEquals(recorded.length, 3);
  assertEquals(told, [
    { node: "worker-1", index: 1, total: 2, phase: "drain" },
    { node: "worker-1", index: 1, total: 2, phase: "drain done" },
    { node: "cp-1", index: 2, total: 2, phase: "install" },
  ]);
});

Deno.test("a failing display never fails the run or loses the record", async () => {
  const recorded: PhaseInput[] = [];
  const j = watchPhases(fakeJournal(recorded), ["worker-1"], () => {
    throw new Error("terminal gone");
  });
  await j.recordPhase(phase("op1", "cordon", "intent"));
  assertEquals(recorded.length, 1);
});
