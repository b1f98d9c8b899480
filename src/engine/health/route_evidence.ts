import type { Clock } from "../../ports/clock.ts";
import type { Kube } from "../../ports/kube.ts";
import { CairnError } from "../../domain/errors.ts";
import type { Binding } from "../../domain/health/policy_schema.ts";
import { ROUTE_MAX_BYTES } from "../../domain/health/product_kinds.ts";
import {
  brokerPods,
  brokerTarget,
  objectStoreTarget,
  routeKey,
} from "../../domain/health/routes.ts";
import type {
  KubeView,
  RouteObservation,
  RouteTarget,
  RouteView,
} from "../../domain/health/types.ts";

/**
 * Reads the named proxy routes a row-17 binding needs, each GET bounded by the binding's time
 * left and by `ROUTE_MAX_BYTES`. A route that gives no answer is recorded as unreadable, never
 * dropped; each round replaces the binding's previous readings, so nothing older carries over.
 */
export class RouteEvidence {
  readonly #obs = new Map<string, Map<string, RouteObservation>>();

  constructor(
    private readonly kube: Pick<Kube, "proxyGet">,
    private readonly clock: Clock,
    private readonly kubeView: () => KubeView,
  ) {}

  async prepare(b: Binding, deadlineMs: number, signal: AbortSignal): Promise<void> {
    const targets = this.#targets(b);
    if (targets === undefined) return;
    const mine = new Map<string, RouteObservation>();
    this.#obs.set(b.name, mine);
    await Promise.all(targets.map(async (t) => {
      const o = await this.#read(t, deadlineMs, signal);
      mine.set(routeKey(t), o);
    }));
  }

  view(): RouteView {
    return { get: (binding, key) => this.#obs.get(binding)?.get(key) };
  }

  #targets(b: Binding): RouteTarget[] | undefined {
    if (b.reader === "object-store-endpoint") return [objectStoreTarget(b)];
    if (b.reader === "broker-streams") {
      const pods = this.kubeView().resource("v1/Pod")?.items ?? [];
      return brokerPods(b, pods).map((p) => brokerTarget(b, p));
    }
    return undefined;
  }

  async #read(t: RouteTarget, deadlineMs: number, signal: AbortSignal): Promise<RouteObservation> {
    const timeoutMs = Math.max(0, deadlineMs - this.clock.now());
    try {
      const answer = await this.kube.proxyGet(t, { timeoutMs, maxBytes: ROUTE_MAX_BYTES });
      return { target: t, observedAtMs: this.clock.now(), answer };
    } catch (e) {
      const reason = signal.aborted
        ? "HealthReadTimedOut"
        : e instanceof CairnError
        ? e.reason
        : "HealthReadFailed";
      const message = e instanceof Error ? e.message : String(e);
      return { target: t, observedAtMs: this.clock.now(), error: { reason, message } };
    }
  }
}
