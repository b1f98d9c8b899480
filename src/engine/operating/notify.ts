/**
 * Turns an execution's milestones into notifications (docs/operating.md#notifications): a hold
 * before a commitment, a stall while a step waits, an operation that became `unresolved` (once per
 * operation). Composed with the run's other observer; sending is the Notifier's business and never
 * blocks or fails the step (a notifier never throws).
 */
import type { Notification } from "../../domain/ops/notification.ts";
import type { Clock } from "../../ports/clock.ts";
import type { Notifier } from "../../ports/notifier.ts";
import type { ExecutionObserver } from "../executor/deps.ts";

export interface NotifiedPlan {
  readonly name: string;
  readonly digest: string;
  readonly cluster: string;
}

export function notifyingObserver(
  notifier: Notifier,
  plan: NotifiedPlan,
  clock: Clock,
  also?: ExecutionObserver,
): ExecutionObserver {
  const told = new Set<string>();
  const send = (n: Omit<Notification, "plan" | "digest" | "cluster" | "atMs">) =>
    void notifier.notify({
      ...n,
      plan: plan.name,
      digest: plan.digest,
      cluster: plan.cluster,
      atMs: clock.now(),
    });
  return {
    onOperationState: (m) => {
      also?.onOperationState?.(m);
      if (m.state !== "unresolved" || told.has(m.operationId)) return;
      told.add(m.operationId);
      send({
        event: "unresolved",
        node: m.node,
        text: `operation ${m.operationId} is unresolved; see cairn status and cairn recover`,
      });
    },
    onAttemptResponse: (a) => also?.onAttemptResponse?.(a),
    onHealthRound: (r) => also?.onHealthRound?.(r),
    onHold: (h) => {
      also?.onHold?.(h);
      send({ event: "hold", node: h.node, reason: h.reason, text: h.detail });
    },
    onStall: (st) => {
      also?.onStall?.(st);
      send({ event: "stall", node: st.node, reason: "StepStalled", text: st.detail });
    },
  };
}
