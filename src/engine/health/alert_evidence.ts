/**
 * Reads Alertmanager for the round's `alertmanager-alerts` bindings, each bounded by the binding's
 * time left. A read that fails is recorded with its reason (unreadable, never dropped); each round
 * replaces the binding's previous reading, so nothing older carries over.
 */
import type { Clock } from "../../ports/clock.ts";
import type { Alertmanager } from "../../ports/alertmanager.ts";
import { CairnError } from "../../domain/errors.ts";
import type { Binding } from "../../domain/health/policy_schema.ts";
import type { AlertObservation, AlertView } from "../../domain/health/types.ts";

export class AlertEvidence {
  readonly #obs = new Map<string, AlertObservation>();

  constructor(private readonly am: Alertmanager, private readonly clock: Clock) {}

  async prepare(b: Binding, deadlineMs: number, signal: AbortSignal): Promise<void> {
    if (b.reader !== "alertmanager-alerts") return;
    this.#obs.delete(b.name);
    const source = this.am.describe();
    try {
      const alerts = await this.am.firingAlerts(b.matchers, {
        timeoutMs: Math.max(1, deadlineMs - this.clock.now()),
      });
      this.#obs.set(b.name, {
        observedAtMs: this.clock.now(),
        source,
        alerts: alerts.map((a) => ({
          fingerprint: a.fingerprint,
          labels: a.labels,
          startsAt: a.startsAt,
        })),
      });
    } catch (e) {
      this.#obs.set(b.name, {
        observedAtMs: this.clock.now(),
        source,
        error: {
          reason: signal.aborted
            ? "HealthReadTimedOut"
            : e instanceof CairnError
            ? e.reason
            : "AlertmanagerUnreadable",
          message: e instanceof Error ? e.message : String(e),
        },
      });
    }
  }

  view(): AlertView {
    return { get: (binding) => this.#obs.get(binding) };
  }
}
