/**
 * The eviction loop of a drain, apart from the journal: sends Eviction requests (never a delete,
 * never a force) until every planned pod has left the node or the drain bound passes, and says
 * which. The node step (executor/drain_phase.ts) records each intent and outcome through
 * `record`; the drain benchmark runs the same loop against the twin beside `kubectl drain`.
 *
 * Between passes it waits for the cluster to move rather than for a fixed interval:
 * - a pass stops asking for pods of a workload once one of them was refused by its disruption
 *   budget (the others would be refused by the same budget: asking again only adds requests),
 *   and with events the workload is asked again only once its own budget allows a disruption;
 * - with `wake: "events"` the wait ends as soon as a planned pod changes or leaves the node, or a
 *   PodDisruptionBudget allows a disruption again, with the poll interval as a backstop for a
 *   missed event (a missed event costs one interval, never correctness);
 * - with `wake: "poll"` it waits the poll interval. Virtual-time runs (the twin's driven clock,
 *   the in-process twin) use this: their clock moves only when someone sleeps, so a watch would
 *   race the clock and a seed would no longer give one timeline. Once every planned pod's eviction
 *   was accepted and only their exits are awaited, it looks sooner (`exitWaitMs`).
 */
import type { Clock } from "../ports/clock.ts";
import type {
  EvictionOutcome,
  Kube,
  KubeObject,
  KubePod,
  KubeResourceRef,
  PodRef,
} from "../ports/kube.ts";
import type { Reason } from "../domain/reasons.ts";
import type { DrainPlan } from "./drain_plan.ts";
import { NOT_WANTED } from "./abort_reason.ts";
import { finePollMs } from "./fine_poll.ts";

const PODS: KubeResourceRef = { group: "", version: "v1", plural: "pods", namespaced: true };
const PDBS: KubeResourceRef = {
  group: "policy",
  version: "v1",
  plural: "poddisruptionbudgets",
  namespaced: true,
};

export const podKey = (p: PodRef) => `${p.namespace}/${p.name}`;

export interface DrainRunDeps {
  readonly kube: Kube;
  readonly clock: Clock;
  /** The longest wait between passes (the only wait with `wake: "poll"`). */
  readonly pollIntervalMs: number;
  /** Bound of each Kubernetes call, wall-clock ms. */
  readonly callTimeoutMs: number;
  readonly wake: "events" | "poll";
  /**
   * The drain attempt's recorded transport deadline on `clock`: no eviction is sent from then on
   * (the drain ends as if its bound were reached), whatever the drain bound says.
   */
  readonly sendByMs?: number;
  readonly signal?: AbortSignal;
  /** Records an eviction intent (before the request) or outcome (after it). */
  readonly record: (kind: "intent" | "fact", detail: Record<string, unknown>) => Promise<void>;
  /**
   * Told after each pass which pods a budget holds back: refused in this pass, or not asked
   * because their workload's budget refused (or shows no disruption) — with the last refusal.
   */
  readonly onPass?: (held: readonly HeldPod[], nowMs: number) => Promise<void>;
}

/** A pod a disruption budget holds on the node, with the refusal that said so. */
export interface HeldPod {
  readonly pod: PodRef;
  readonly message: string;
  readonly httpStatus: number;
}

export type DrainRunResult =
  | { readonly kind: "drained"; readonly evicted: number; readonly passes: number }
  /** An eviction refused for a reason retrying will not fix: the drain stops there. */
  | {
    readonly kind: "refused";
    readonly pod: string;
    readonly reason: Reason;
    readonly message: string;
  }
  /** The drain bound passed with planned pods still on the node. */
  | {
    readonly kind: "bound-reached";
    readonly remaining: readonly KubePod[];
    readonly graceDeadlineMs: ReadonlyMap<string, number>;
  };

/**
 * Runs the drain of `plan` (planned from `pods`, the list the plan was made from: it names each
 * pod's workload) for at most `boundMs` of clock time.
 */
export async function runDrain(
  d: DrainRunDeps,
  plan: DrainPlan,
  pods: readonly KubePod[],
  boundMs: number,
): Promise<DrainRunResult> {
  const deadline = Math.min(d.clock.now() + boundMs, d.sendByMs ?? Infinity);
  const workload = new Map(pods.map((p) => [podKey(p), workloadOf(p)]));
  const toEvict = new Map(plan.evict.map((p) => [podKey(p), p]));
  const graceDeadline = new Map<string, number>();
  const opts = { timeoutMs: d.callTimeoutMs };
  const lastRefusal = new Map<string, { message: string; httpStatus: number }>();
  const stop = new AbortController();
  const budgets = d.wake === "events" ? await BudgetView.start(d, pods, stop.signal) : undefined;
  // After a backstop wait every pending workload is asked (an event may have been missed).
  let askAll = true;
  /** Planned pods on the node after the last pass, and passes since one of them last left. */
  let lastRemaining = Infinity;
  let quiet = 0;
  try {
    for (let passes = 1;; passes++) {
      const seen = budgets?.generation ?? 0;
      const asks = (group: string) => askAll || !budgets || budgets.allows(group);
      const pass = await evictionPass(d, toEvict, workload, graceDeadline, asks, lastRefusal);
      if (pass.refused) return pass.refused;
      await d.onPass?.(heldPods(toEvict, workload, lastRefusal), d.clock.now());
      const listed = await d.kube.listPods(plan.node, opts);
      const wanted = new Set(plan.evict.map(podKey));
      const remaining = listed.items.filter((p) => wanted.has(podKey(p)));
      if (remaining.length === 0) return { kind: "drained", evicted: plan.evict.length, passes };
      if (d.clock.now() >= deadline) {
        return { kind: "bound-reached", remaining, graceDeadlineMs: graceDeadline };
      }
      quiet = remaining.length < lastRemaining ? 0 : quiet + 1;
      lastRemaining = remaining.length;
      // Polling with nothing left to ask: only the pods' exits are awaited, and a pass then sends
      // no eviction, only a list.
      const paceMs = d.wake === "poll" && toEvict.size === 0
        ? exitWaitMs(d.pollIntervalMs, quiet)
        : d.pollIntervalMs;
      const waitMs = Math.min(paceMs, Math.max(1, deadline - d.clock.now()));
      if (!budgets) {
        await d.clock.sleep(waitMs, d.signal);
        continue;
      }
      const pending = new Set([...toEvict.keys()].map((k) => workload.get(k) ?? k));
      const ready = () => [...pending].some((g) => budgets.known(g) && budgets.allows(g));
      // A budget that moved while the pass ran is not waited for.
      const woke = budgets.generation !== seen && ready() ? "event" : await waitForProgress(d, {
        node: plan.node,
        sinceVersion: listed.resourceVersion,
        wanted,
        budgets,
        ready,
        ms: waitMs,
      });
      askAll = woke === "slept";
    }
  } finally {
    stop.abort(NOT_WANTED);
  }
}

/**
 * How long a polling drain waits for evicted pods to exit, `quiet` passes after one last left: a
 * fine poll (`finePollMs`) twice, then twice as long each time, up to the interval. At the interval
 * alone a pod that exits 2 s after its eviction was seen gone 5 s after it at 5 s polling, most of
 * a rollout's time beyond what the machines take (issue 18); pods that take long to exit cost a
 * few more lists, never more evictions.
 */
export function exitWaitMs(pollMs: number, quiet: number): number {
  const fine = finePollMs(pollMs);
  return Math.min(pollMs, fine * 2 ** Math.max(0, quiet - 1));
}

/**
 * The budgets of the drained pods' workloads, kept current by one watch for the whole drain
 * (events mode): which budget covers each workload (the one PodDisruptionBudget whose
 * matchLabels select its pods; none, or a selector with expressions: unknown, asked on every
 * pass) and how many disruptions each allows now. Only an optimisation: the eviction's answer
 * decides, and a watch that ends makes every workload "asked on every pass" again.
 */
class BudgetView {
  readonly #of = new Map<string, string>();
  readonly #allowed = new Map<string, number>();
  readonly #changed = new Set<() => void>();
  #live = false;
  /** Moves on every budget change the watch reports. */
  generation = 0;

  static async start(
    d: DrainRunDeps,
    pods: readonly KubePod[],
    signal: AbortSignal,
  ): Promise<BudgetView> {
    const view = new BudgetView();
    let listed;
    try {
      listed = await d.kube.listPdbs({ timeoutMs: d.callTimeoutMs });
    } catch {
      return view;
    }
    for (const b of listed.items) {
      view.#allowed.set(`${b.namespace}/${b.name}`, b.disruptionsAllowed);
    }
    for (const p of pods) {
      const matching = listed.items.filter((b) =>
        b.namespace === p.namespace && b.selector?.matchLabels !== undefined &&
        !b.selector.matchExpressions?.length &&
        Object.entries(b.selector.matchLabels).every(([k, v]) => p.labels[k] === v)
      );
      if (matching.length === 1) {
        view.#of.set(workloadOf(p), `${p.namespace}/${matching[0]!.name}`);
      }
    }
    view.#live = true;
    const ended = () => {
      view.#live = false;
      view.#moved();
    };
    d.kube.watch(PDBS, { resourceVersion: listed.resourceVersion, signal }, (e) => {
      if (e.type === "BOOKMARK") return;
      view.#allowed.set(
        objectKey(e.object),
        e.type === "DELETED" ? 0 : disruptionsAllowed(e.object),
      );
      view.#moved();
    }).then(ended, ended);
    return view;
  }

  /** Whether the workload's budget is known and watched. */
  known(group: string): boolean {
    return this.#live && this.#of.has(group);
  }

  /** Whether asking for a pod of the workload can succeed as far as its budget shows. */
  allows(group: string): boolean {
    if (!this.known(group)) return true;
    return (this.#allowed.get(this.#of.get(group)!) ?? 0) > 0;
  }

  /** Resolves at the next budget change (or the watch's end), or when `signal` aborts. */
  changed(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.#changed.delete(done);
        resolve();
      };
      this.#changed.add(done);
      signal.addEventListener("abort", done, { once: true });
    });
  }

  #moved(): void {
    this.generation++;
    for (const f of [...this.#changed]) f();
  }
}

/** The pods still to evict whose workload's budget last refused. */
function heldPods(
  toEvict: ReadonlyMap<string, PodRef>,
  workload: ReadonlyMap<string, string>,
  lastRefusal: ReadonlyMap<string, { message: string; httpStatus: number }>,
): HeldPod[] {
  const held: HeldPod[] = [];
  for (const [k, pod] of toEvict) {
    const r = lastRefusal.get(workload.get(k) ?? k);
    if (r) held.push({ pod, ...r });
  }
  return held;
}

/** True once the drain attempt's transport deadline has passed: no eviction may leave. */
function pastSendBy(d: DrainRunDeps): boolean {
  return d.sendByMs !== undefined && d.clock.now() >= d.sendByMs;
}

/** A pod's workload: its controller, or the pod itself when it has none. */
function workloadOf(p: KubePod): string {
  return p.owner ? `${p.namespace}/${p.owner.kind}/${p.owner.name}` : podKey(p);
}

/**
 * One eviction to every pod not yet accepted, except pods of a workload whose budget already
 * refused one of them in this pass. Returns whether any was refused by a budget.
 */
async function evictionPass(
  d: DrainRunDeps,
  toEvict: Map<string, PodRef>,
  workload: ReadonlyMap<string, string>,
  graceDeadline: Map<string, number>,
  asks: (workload: string) => boolean,
  lastRefusal: Map<string, { message: string; httpStatus: number }>,
): Promise<{ readonly blocked: ReadonlySet<string>; readonly refused?: DrainRunResult }> {
  const opts = { timeoutMs: d.callTimeoutMs };
  const heldBack = new Set<string>();
  for (const [k, pod] of [...toEvict]) {
    const group = workload.get(k) ?? k;
    if (heldBack.has(group) || !asks(group)) continue;
    if (pastSendBy(d)) break;
    await d.record("intent", { evict: k });
    // Checked again right before the request: recording the intent is a journal write, and the
    // process may have been paused across it.
    if (pastSendBy(d)) {
      await d.record("fact", { evict: k, outcome: "not-sent", reason: "TransportDeadlinePassed" });
      break;
    }
    const out: EvictionOutcome = await d.kube.evict(pod, opts);
    const now = d.clock.now();
    if (out.kind === "accepted" || out.kind === "gone") {
      toEvict.delete(k);
      lastRefusal.delete(group);
      const current = out.kind === "accepted" ? await d.kube.getPod(pod, opts) : undefined;
      const grace = current?.terminationGracePeriodSeconds ?? 0;
      graceDeadline.set(k, now + grace * 1000);
      await d.record("fact", { evict: k, outcome: out.kind, graceDeadlineMs: now + grace * 1000 });
    } else if (out.kind === "blocked") {
      heldBack.add(group);
      lastRefusal.set(group, { message: out.message, httpStatus: out.httpStatus });
      await d.record("fact", {
        evict: k,
        outcome: "blocked",
        httpStatus: out.httpStatus,
        message: out.message,
      });
    } else {
      await d.record("fact", {
        evict: k,
        outcome: "failed",
        reason: out.reason,
        message: out.message,
      });
      return {
        blocked: heldBack,
        refused: { kind: "refused", pod: k, reason: out.reason, message: out.message },
      };
    }
  }
  return { blocked: heldBack };
}

/**
 * Waits at most `ms` for a reason to try again: a planned pod modified or deleted on the node
 * since `sinceVersion`, or a pending workload's budget allowing a disruption. A watch that cannot
 * be opened or ends early leaves the backstop sleep to end the wait.
 */
async function waitForProgress(
  d: DrainRunDeps,
  w: {
    readonly node: string;
    readonly sinceVersion: string;
    readonly wanted: ReadonlySet<string>;
    readonly budgets: BudgetView;
    readonly ready: () => boolean;
    readonly ms: number;
  },
): Promise<"event" | "slept"> {
  if (d.signal?.aborted) throw d.signal.reason;
  const ac = new AbortController();
  const stop = () => ac.abort(d.signal?.reason);
  d.signal?.addEventListener("abort", stop, { once: true });
  let wake!: () => void;
  const woke = new Promise<"event">((resolve) => (wake = () => resolve("event")));
  const ignore = () => {};
  d.kube.watch(
    PODS,
    {
      fieldSelector: `spec.nodeName=${w.node}`,
      resourceVersion: w.sinceVersion,
      signal: ac.signal,
    },
    (e) => {
      if (e.type === "BOOKMARK") return;
      if (e.type === "DELETED" || w.wanted.has(objectKey(e.object))) wake();
    },
  ).catch(ignore);
  void (async () => {
    while (!ac.signal.aborted) {
      await w.budgets.changed(ac.signal);
      if (!ac.signal.aborted && w.ready()) wake();
    }
  })();
  const slept = d.clock.sleep(w.ms, ac.signal).then(() => "slept" as const);
  let how: "event" | "slept";
  try {
    how = await Promise.race([woke, slept]);
  } finally {
    d.signal?.removeEventListener("abort", stop);
    ac.abort(NOT_WANTED);
    slept.catch(ignore);
  }
  if (d.signal?.aborted) throw d.signal.reason;
  return how;
}

function objectKey(o: KubeObject): string {
  return `${o.metadata?.namespace ?? ""}/${o.metadata?.name ?? ""}`;
}

function disruptionsAllowed(o: KubeObject): number {
  const status = (o as { status?: { disruptionsAllowed?: unknown } }).status;
  return typeof status?.disruptionsAllowed === "number" ? status.disruptionsAllowed : 0;
}
