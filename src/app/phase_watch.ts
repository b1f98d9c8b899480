/**
 * Progress for a person watching a run: every phase the executor records in the journal
 * (intent, then fact) is also told to a listener, with the node it belongs to and the node's
 * place in the plan. The journal stays the record; the listener only displays, and a listener
 * that throws never fails the run.
 */
import type { Journal, PhaseInput } from "../ports/journal.ts";

/** One phase step of one node, as a progress display shows it. */
export interface PhaseEvent {
  readonly node: string;
  /** 1-based position of the node in the plan's order. */
  readonly index: number;
  readonly total: number;
  /** e.g. `drain` (intent) or `drain done` (fact). */
  readonly phase: string;
}

/** The journal, with every recorded phase also reported to `listener`. */
export function watchPhases(
  journal: Journal,
  nodeOrder: readonly string[],
  listener: (e: PhaseEvent) => void,
): Journal {
  const nodeOf = new Map<string, string>();
  const tell = async (input: PhaseInput) => {
    let node = nodeOf.get(input.operationId);
    if (node === undefined) {
      node = (await journal.getOperation(input.operationId))?.machine ?? "?";
      nodeOf.set(input.operationId, node);
    }
    const phase = input.kind === "intent" ? input.phase : `${input.phase} done`;
    listener({ node, index: nodeOrder.indexOf(node) + 1, total: nodeOrder.length, phase });
  };
  return new Proxy(journal, {
    get(target, key) {
      if (key === "recordPhase") {
        return async (input: PhaseInput) => {
          await target.recordPhase(input);
          await tell(input).catch(() => {});
        };
      }
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
