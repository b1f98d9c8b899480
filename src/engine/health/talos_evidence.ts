import type { Clock } from "../../ports/clock.ts";
import type { Talos } from "../../ports/talos.ts";
import { CairnError } from "../../domain/errors.ts";
import type { Binding } from "../../domain/health/policy_schema.ts";
import type { TalosNodeObservation, TalosView } from "../../domain/health/types.ts";

type TalosReads = Pick<Talos, "version" | "serviceList" | "etcdMembers" | "etcdStatus">;

/**
 * Reads the Talos API for a binding's nodes, each call bounded by the time left. A failed or
 * timed-out read is recorded as an unreadable observation, never dropped.
 */
export class TalosEvidence {
  #obs = new Map<string, TalosNodeObservation>();

  constructor(
    private readonly talos: TalosReads,
    private readonly clock: Clock,
    /** Node names for bindings without explicit names (the Kubernetes cache resolves them). */
    private readonly nodesFor: (b: Binding) => readonly string[],
    /** The Talos `node` target of a node name (its address); default the name itself. */
    private readonly targetOf: (node: string) => string = (n) => n,
  ) {}

  async prepare(b: Binding, deadlineMs: number, signal: AbortSignal): Promise<void> {
    if (
      b.reader !== "talos-etcd" && b.reader !== "talos-services" && b.reader !== "node-versions"
    ) {
      return;
    }
    // Of a node-versions binding's checks only `talosVersion` is judged on the Talos API's reading
    // (the schematic and kubelet come from the Node object): without it a round reads no Talos
    // version at all. A round reads what it judges, nothing more (issue 18: on 100 nodes every
    // round read 100 versions no check looked at).
    if (b.reader === "node-versions" && b.predicate.talosVersion === undefined) return;
    const nodes = b.selection.names && !b.selection.labelSelector
      ? b.selection.names
      : this.nodesFor(b);
    await Promise.all(nodes.map((n) => this.#readNode(b, n, deadlineMs, signal)));
  }

  async #readNode(b: Binding, node: string, deadlineMs: number, signal: AbortSignal) {
    const opts = { timeoutMs: Math.max(0, deadlineMs - this.clock.now()), signal };
    const target = this.targetOf(node);
    try {
      const next: TalosNodeObservation = { node, observedAtMs: this.clock.now() };
      let o = next;
      if (b.reader === "node-versions") {
        o = { ...o, version: (await this.talos.version(target, opts)).tag };
      } else if (b.reader === "talos-services") {
        const list = await this.talos.serviceList(target, opts);
        o = {
          ...o,
          services: list.map((s) => ({
            id: s.id,
            state: s.state,
            healthy: s.healthUnknown ? undefined : s.healthy,
          })),
        };
      } else {
        const [members, status] = await Promise.all([
          this.talos.etcdMembers(target, opts),
          this.talos.etcdStatus(target, opts),
        ]);
        o = {
          ...o,
          etcd: {
            members: members.map((m) => ({
              id: m.id,
              hostname: m.hostname,
              isLearner: m.isLearner,
            })),
            memberId: status.memberId,
            errors: status.errors,
            alarms: [],
          },
        };
      }
      // Merged with what the node holds NOW, not before the reads: another binding's read of the
      // same node (services and etcd on a control plane) may have landed meanwhile, and a merge
      // onto the earlier value would drop it (the etcd binding then read HealthResultMissing).
      const cur = this.#obs.get(node);
      this.#obs.set(node, { ...(cur?.error ? {} : cur), ...o, observedAtMs: this.clock.now() });
    } catch (e) {
      const reason = signal.aborted
        ? "HealthReadTimedOut"
        : e instanceof CairnError
        ? e.reason
        : "HealthReadFailed";
      this.#obs.set(node, {
        node,
        observedAtMs: this.clock.now(),
        error: { reason, message: e instanceof Error ? e.message : String(e) },
      });
    }
  }

  view(): TalosView {
    return { node: (name) => this.#obs.get(name) };
  }
}
