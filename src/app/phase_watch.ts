/**
 * Progress for a person watching a run: every phase the executor records in the journal
 * (intent, then fact), every health round and dispatch check of an operation's node, and every
 * operation transition is also told to a listener, with the node it belongs to, the node's place
 * in the plan and what the run now waits for. The journal stays the record; the listener only
 * displays, and a listener that throws never fails the run.
 *
 * A gate round before a commitment names no operation, so it is never attributed to a node; the
 * display says instead, after a node's end, that the next node's gate is what is awaited.
 */
import type { Phase } from "../domain/operation.ts";
import type {
  DispatchCheckInput,
  HealthRoundInput,
  Journal,
  PhaseInput,
  TransitionInput,
} from "../ports/journal.ts";

/** One phase step of one node, as a progress display shows it. */
export interface PhaseEvent {
  readonly node: string;
  /** 1-based position of the node in the plan's order. */
  readonly index: number;
  readonly total: number;
  /** e.g. `drain` (intent) or `drain done` (fact), `health verify`, `completed`. */
  readonly phase: string;
  /** What the run waits for now, in words; absent when it waits for nothing in particular. */
  readonly waiting?: string;
}

/** What an intent waits for until its fact is recorded. */
const WAITING_FOR: Readonly<Record<Phase, string>> = {
  gate: "a passing health gate",
  "pre-hook": "the pre-upgrade hook to finish",
  pull: "the installer image pulled onto the node",
  install: "the installer written to the other boot slot",
  cordon: "the node marked unschedulable",
  drain: "the node's pods evicted",
  // The reboot's answer comes fast; the wait that follows is for the machine itself.
  reboot: "the node to reboot and come back with a new boot ID",
  "boot-observed": "the node back with a new boot ID",
  verify: "a passing verification round",
  uncordon: "the node schedulable again",
  "post-gate": "a passing post-upgrade health round",
  "post-hook": "the post-upgrade hook to finish",
  "config-apply": "the configuration applied",
  "component-config": "the component's new image configured",
  "component-observed": "the component running its new version",
  "kube-proxy-image": "kube-proxy's DaemonSet template changed (its rollout is observed after)",
};

/** A round's verdict from its results: any fail fails, else any unreadable is unreadable. */
function roundVerdict(r: HealthRoundInput): "pass" | "fail" | "unreadable" {
  const outcomes = r.results.map((x) => x.outcome as string);
  if (outcomes.includes("fail")) return "fail";
  return outcomes.every((o) => o === "pass") ? "pass" : "unreadable";
}

/**
 * The drain records its plan, each eviction's intent and outcome, and the bound: none of them
 * ends the drain, so each says what the drain still waits for (with the pod it just asked for).
 */
function drainStep(input: PhaseInput): { phase: string; waiting?: string } | undefined {
  const d = input.detail;
  const evicting = WAITING_FOR.drain;
  if (Array.isArray(d["planned"])) {
    return { phase: "drain", waiting: `${evicting} (${d["planned"].length} to evict)` };
  }
  if (typeof d["evict"] === "string") {
    const outcome = input.kind === "intent"
      ? "asked"
      : d["outcome"] === "blocked"
      ? "held by its budget"
      : String(d["outcome"] ?? "answered");
    return { phase: "drain", waiting: `${evicting} (${d["evict"]}: ${outcome})` };
  }
  if (d["boundReached"] === true && Array.isArray(d["remaining"])) {
    return { phase: `drain bound passed, ${d["remaining"].length} pods left` };
  }
  return undefined;
}

/** The journal, with every recorded phase also reported to `listener`. */
export function watchPhases(
  journal: Journal,
  nodeOrder: readonly string[],
  listener: (e: PhaseEvent) => void,
): Journal {
  const nodeOf = new Map<string, string>();
  const nodeOfOperation = async (operationId: string) => {
    let node = nodeOf.get(operationId);
    if (node === undefined) {
      node = (await journal.getOperation(operationId))?.machine ?? "?";
      nodeOf.set(operationId, node);
    }
    return node;
  };
  const event = (node: string, phase: string, waiting: string | undefined): PhaseEvent => ({
    node,
    index: nodeOrder.indexOf(node) + 1,
    total: nodeOrder.length,
    phase,
    ...(waiting !== undefined ? { waiting } : {}),
  });
  const tellPhase = async (input: PhaseInput) => {
    const node = await nodeOfOperation(input.operationId);
    const drain = input.phase === "drain" ? drainStep(input) : undefined;
    listener(
      drain
        ? event(node, drain.phase, drain.waiting)
        : input.kind === "intent"
        ? event(node, input.phase, WAITING_FOR[input.phase])
        : event(node, `${input.phase} done`, undefined),
    );
  };
  const tellRound = async (input: HealthRoundInput) => {
    if (input.operationId === undefined) return; // a gate before any commitment: no node known
    const node = await nodeOfOperation(input.operationId);
    const verdict = roundVerdict(input);
    const waiting = verdict === "pass"
      ? undefined
      : `a passing health round (last: ${verdict}, ${
        input.results.filter((r) => r.outcome !== "pass").length
      } of ${input.results.length} checks)`;
    listener(event(node, `health ${input.purpose} ${verdict}`, waiting));
  };
  const tellDispatch = (input: DispatchCheckInput) => {
    if (input.node === null) return;
    const waiting = input.verdict === "held"
      ? "evidence the dispatch check could not read"
      : input.verdict === "pass"
      ? "the commitment"
      : undefined;
    listener(event(input.node, `dispatch check ${input.verdict}`, waiting));
  };
  const tellTransition = async (input: TransitionInput) => {
    const node = await nodeOfOperation(input.operationId);
    const index = nodeOrder.indexOf(node) + 1;
    const waiting = input.to === "verifying"
      ? "post-upgrade health and the completion observation"
      : input.to === "completed" && index > 0 && index < nodeOrder.length
      ? "the next node's health gate"
      : undefined;
    listener(event(node, input.to, waiting));
  };
  return new Proxy(journal, {
    get(target, key) {
      if (key === "recordPhase") {
        return async (input: PhaseInput) => {
          await target.recordPhase(input);
          await tellPhase(input).catch(() => {});
        };
      }
      if (key === "recordHealthRound") {
        return async (input: HealthRoundInput) => {
          const id = await target.recordHealthRound(input);
          await tellRound(input).catch(() => {});
          return id;
        };
      }
      if (key === "recordDispatchCheck") {
        return async (input: DispatchCheckInput) => {
          const seq = await target.recordDispatchCheck(input);
          try {
            tellDispatch(input);
          } catch {
            // A display that throws never fails the run.
          }
          return seq;
        };
      }
      if (key === "transition") {
        return async (input: TransitionInput) => {
          const record = await target.transition(input);
          await tellTransition(input).catch(() => {});
          return record;
        };
      }
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
