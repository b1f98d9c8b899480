import type { Clock } from "../../ports/clock.ts";
import type { Talos } from "../../ports/talos.ts";
import type { Binding } from "../../domain/health/policy_schema.ts";
import { selectNodes } from "../../domain/health/readers/common.ts";
import type {
  AlertView,
  EvidenceRead,
  HealthEvidence,
  KubeView,
  RouteView,
  TalosView,
} from "../../domain/health/types.ts";
import type { Kube } from "../../ports/kube.ts";
import { RouteEvidence } from "./route_evidence.ts";
import { AlertEvidence } from "./alert_evidence.ts";
import type { Alertmanager } from "../../ports/alertmanager.ts";
import { KubeEvidence } from "./kube_evidence.ts";
import { TalosEvidence } from "./talos_evidence.ts";
import type { ListWatch } from "./watch_cache.ts";

const CP_LABEL = "node-role.kubernetes.io/control-plane";

/** Kubernetes watch caches and Talos reads behind one `HealthEvidence`. */
export class ClusterEvidence implements HealthEvidence {
  readonly kube: KubeEvidence;
  readonly talos: TalosEvidence | undefined;
  /** Undefined when the Kubernetes client given has no proxy GET: route bindings stay unreadable. */
  readonly routes: RouteEvidence | undefined;
  /** Undefined when no Alertmanager is configured: alert bindings stay unreadable. */
  readonly alerts: AlertEvidence | undefined;
  readonly #ownsCaches: boolean;

  constructor(
    kube: ListWatch & Partial<Pick<Kube, "proxyGet">>,
    talos: Pick<Talos, "version" | "serviceList" | "etcdMembers" | "etcdStatus"> | undefined,
    private readonly clock: Clock,
    /**
     * Declared addresses by node name (the plan's inventory): where Talos reads for those nodes
     * go. Other nodes are read at the InternalIP their Node object reports, else by name.
     */
    private readonly addresses: ReadonlyMap<string, string> = new Map(),
    alertmanager?: Alertmanager,
    /**
     * Watch caches that outlive this evidence (the reconcile loop keeps one set per cluster
     * connection): used instead of caches of its own and left running by `stop()`, so a run
     * after a preview finds them listed and watched. A gate round reads them as it reads its own;
     * a fresh round lists each again whatever its watch says.
     */
    shared?: KubeEvidence,
  ) {
    this.alerts = alertmanager ? new AlertEvidence(alertmanager, clock) : undefined;
    this.#ownsCaches = shared === undefined;
    this.kube = shared ?? new KubeEvidence(kube, clock);
    const proxyGet = kube.proxyGet?.bind(kube);
    this.routes = proxyGet
      ? new RouteEvidence({ proxyGet }, clock, () => this.kube.view())
      : undefined;
    this.talos = talos
      ? new TalosEvidence(talos, clock, (b) => this.#nodesFor(b), (n) => this.#targetOf(n))
      : undefined;
  }

  async prepare(
    b: Binding,
    deadlineMs: number,
    signal: AbortSignal,
    read?: EvidenceRead,
  ): Promise<void> {
    await this.kube.prepare(b, read);
    if (signal.aborted) return;
    await this.talos?.prepare(b, deadlineMs, signal);
    if (signal.aborted) return;
    await this.routes?.prepare(b, deadlineMs, signal);
    if (signal.aborted) return;
    await this.alerts?.prepare(b, deadlineMs, signal);
  }

  /** Undefined without an Alertmanager, so an alert binding reads as unreadable. */
  alertView(): AlertView | undefined {
    return this.alerts?.view();
  }

  routeView(): RouteView {
    return this.routes?.view() ?? { get: () => undefined };
  }

  kubeView(): KubeView {
    return this.kube.view();
  }

  talosView(): TalosView {
    return this.talos?.view() ?? { node: () => undefined };
  }

  /** Stops the watches of caches this evidence made; shared caches keep watching. */
  stop(): void {
    if (this.#ownsCaches) this.kube.stop();
  }

  #targetOf(name: string): string {
    const declared = this.addresses.get(name);
    if (declared !== undefined) return declared;
    const node = (this.kube.view().resource("v1/Node")?.items ?? [])
      .find((n) => n.metadata?.name === name);
    const addresses = (node?.status as { addresses?: Array<{ type?: string; address?: string }> })
      ?.addresses ?? [];
    return addresses.find((a) => a.type === "InternalIP" && a.address)?.address ?? name;
  }

  #nodesFor(b: Binding): string[] {
    if (!("selection" in b) || b.reader === "pdb-feasibility" || b.reader === "workloads") {
      return [];
    }
    const sel = b.selection as { names?: string[]; labelSelector?: object };
    const nodes = this.kube.view().resource("v1/Node")?.items ?? [];
    let chosen = selectNodes(nodes, sel);
    if (b.reader === "talos-etcd" && !sel.names && !sel.labelSelector) {
      chosen = chosen.filter((n) => n.metadata?.labels?.[CP_LABEL] !== undefined);
    }
    return chosen.map((n) => n.metadata?.name ?? "");
  }
}
