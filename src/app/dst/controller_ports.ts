/**
 * What one simulated controller reaches the world through: the twin's in-process ports and the
 * shared journal, each wrapped so that (1) the invariant checker sees every journal act that
 * returned and every request before it leaves and after its answer, (2) the seed's network
 * partitions, stale reads and clock skew apply to this controller only, and (3) a dead controller
 * (crashed, or the run stopped at a violation) never resumes: every call it made or makes stays
 * pending forever, as a killed process's would.
 */
import { Code, mutationFailure, readError } from "../../adapters/talos/errors.ts";
import { transportError } from "../../adapters/kube/errors.ts";
import { COMPONENT_END_EVENT, type ComponentOutcome } from "../../domain/component/outcome.ts";
import type { Clock } from "../../ports/clock.ts";
import type { Journal } from "../../ports/journal.ts";
import type { Kube, KubeWatchEvent, PodRef } from "../../ports/kube.ts";
import type { Talos } from "../../ports/talos.ts";
import type { InvariantChecker, Send } from "./invariants.ts";
import type { Prng } from "./prng.ts";
import type { DstEvent, StaleRead } from "./schedule.ts";

/** A controller's life: `dead` is set once and never cleared. */
export interface Life {
  dead: boolean;
  /** Called when a wrapped call finds the run must stop (a violation): stops every controller. */
  readonly onViolation: (e: unknown) => void;
}

const never = new Promise<never>(() => {});

/** Passes a result on unless the controller died meanwhile (then it never resumes). */
function guard<T>(life: Life, p: Promise<T>): Promise<T> {
  return p.then(
    (v) => (life.dead ? never : v),
    (e) => (life.dead ? never : Promise.reject(e)),
  );
}

/** Runs a checker step; a violation stops the run and this call never resumes. */
function step(life: Life, fn: () => void): boolean {
  if (life.dead) return false;
  try {
    fn();
    return true;
  } catch (e) {
    life.onViolation(e);
    return false;
  }
}

export interface ControllerContext {
  readonly owner: string;
  readonly life: Life;
  /** How far this controller's clock is ahead of the cluster's (its attempts' deadlines are on it). */
  readonly skewMs: number;
  readonly checker: InvariantChecker;
  readonly events: readonly DstEvent[];
  /** Virtual ms at the start of the run (partitions are relative to it). */
  readonly startMs: number;
  readonly prng: Prng;
  /** Pod → node it runs on (evictions are sends to that node). */
  readonly podNode: (ref: PodRef) => string;
  /** Told after a commitment (after-commit twin faults are armed there). */
  readonly onCommitted: (node: string) => void;
  /** Told when an operation enters `verifying` (world events aimed at the post-gate fire there). */
  readonly onVerifying?: (node: string) => void;
}

function partitioned(c: ControllerContext, api: "kube" | "talos", now: number): boolean {
  const t = now - c.startMs;
  return c.events.some((e) =>
    e.kind === "partition" && e.api === api && t >= e.fromMs && t < e.fromMs + e.forMs
  );
}

function staleRate(c: ControllerContext, read: StaleRead): number {
  let p = 0;
  for (const e of c.events) if (e.kind === "stale" && e.read === read) p = Math.max(p, e.p);
  return p;
}

/** The clock a controller reads: the cluster's time, skewed; a dead controller never wakes. */
export function controllerClock(c: ControllerContext, inner: Clock): Clock {
  return {
    now: () => inner.now() + c.skewMs,
    sleep: (ms, signal) => guard(c.life, inner.sleep(ms, signal)),
  };
}

/** The journal as this controller sees it: every act that returned is shown to the checker. */
export function controllerJournal(c: ControllerContext, j: Journal): Journal {
  const { checker, life, owner } = c;
  const wrapped: Partial<Journal> = {
    commit: async (input) => {
      const r = await guard(life, j.commit(input));
      if (r.ok && !step(life, () => checker.committed(owner, r.operation))) return never;
      if (r.ok) c.onCommitted(r.operation.machine);
      return r;
    },
    beginAttempt: async (input) => {
      const r = await guard(life, j.beginAttempt(input));
      if (r.ok && !step(life, () => checker.attemptAdmitted(owner, r.attempt))) return never;
      return r;
    },
    recordResponse: async (input) => {
      const r = await guard(life, j.recordResponse(input));
      if (!step(life, () => checker.responseRecorded(input.attemptId, input.responseClass, r))) {
        return never;
      }
      return r;
    },
    transition: async (input) => {
      const r = await guard(life, j.transition(input));
      if (!step(life, () => checker.moved(r, input.observationId))) return never;
      if (r.state === "verifying") c.onVerifying?.(r.machine);
      return r;
    },
    resumeAfterTakeover: async (input) => {
      const r = await guard(life, j.resumeAfterTakeover(input));
      const seen = step(life, () => {
        checker.resumeRead(input.operationId, input.readings);
        checker.moved(r);
      });
      return seen ? r : never;
    },
    takeOver: async (input) => {
      const r = await guard(life, j.takeOver(input));
      if (r.ok && !step(life, () => checker.moved(r.operation))) return never;
      return r;
    },
    recordObservation: async (input) => {
      const r = await guard(life, j.recordObservation(input));
      const seen = step(life, () =>
        checker.observationRecorded({
          id: r.id,
          machine: input.machine,
          ...(input.operationId ? { operationId: input.operationId } : {}),
          ...(input.postcondition ? { postcondition: input.postcondition } : {}),
        }));
      return seen ? r : never;
    },
    recordPhase: async (input) => {
      const r = await guard(life, j.recordPhase(input));
      const seen = step(
        life,
        () => checker.phaseRecorded(input.operationId, input.phase, input.kind, input.detail ?? {}),
      );
      return seen ? r : never;
    },
    recordRolloutEvent: async (input) => {
      const r = await guard(life, j.recordRolloutEvent(input));
      if (input.kind === COMPONENT_END_EVENT) {
        const outcome = input.detail["outcome"] as ComponentOutcome;
        if (!step(life, () => checker.componentEnded(owner, outcome))) return never;
      }
      return r;
    },
    recordHealthRound: async (input) => {
      const r = await guard(life, j.recordHealthRound(input));
      const pass = input.results.length > 0 && input.results.every((x) => x.outcome === "pass");
      if (!step(life, () => checker.healthRound(owner, input.purpose, pass))) return never;
      return r;
    },
  };
  return new Proxy(j, {
    get(target, p) {
      const own = (wrapped as Record<PropertyKey, unknown>)[p] as
        | ((...a: unknown[]) => Promise<unknown>)
        | undefined;
      const v = Reflect.get(target, p, target);
      if (!own && typeof v !== "function") return v;
      const call = own ?? ((...args: unknown[]) => {
        const r = v.apply(target, args);
        return r instanceof Promise ? guard(life, r) : r;
      });
      if (typeof p !== "string" || READS.has(p)) return call;
      return (...args: unknown[]) => {
        // Asked after the checker heard of the restore: the act is queued behind the recovery
        // entry (the restore enqueues it before telling the checker), so it runs in the new epoch
        // and must be refused. One asked before may have landed before the restore replaced it.
        const fenced = checker.ranBeforeRestore(owner);
        const r = call(...args);
        if (!fenced || !(r instanceof Promise)) return r;
        return r.then((v) => {
          const refusal = typeof v === "object" && v !== null && "ok" in v && v.ok === false;
          if (!refusal && !step(life, () => checker.fencedActRecorded(owner, p))) return never;
          return v;
        });
      };
    },
  });
}

/** Journal calls that record nothing (17 judges every other call a fenced controller makes). */
const READS: ReadonlySet<string> = new Set([
  "installation",
  "getPlan",
  "hookObligations",
  "getOperation",
  "listOperations",
  "showOperation",
  "events",
  "verifyChain",
  "exportAll",
  "close",
  // JournalHistory
  "planHistory",
  "listPlans",
  "nameBindings",
  "frozenMachines",
  "clusterFreeze",
  "machineObservations",
]);

/** The Kubernetes API as this controller reaches it: partitions, stale reads, sends checked. */
export function controllerKube(c: ControllerContext, k: Kube, now: () => number): Kube {
  const { checker, life, owner } = c;
  const lagging = staleRate(c, "lagging-cache");
  const oldList = staleRate(c, "old-list");
  const skip = staleRate(c, "watch-skip");
  const previous = new Map<string, unknown>();
  /** A read that may come back as the previous answer to the same question (older version). */
  const read = <T>(key: string, p: number, call: () => Promise<T>): Promise<T> => {
    if (life.dead) return never;
    if (partitioned(c, "kube", now())) {
      return Promise.reject(
        transportError(new Error("connect ECONNREFUSED (simulated partition)"), key),
      );
    }
    return guard(
      life,
      call().then((fresh) => {
        const old = previous.get(key) as T | undefined;
        previous.set(key, fresh);
        const stale = old !== undefined && p > 0 && c.prng.chance(p);
        checker.readAnswered(owner, key, stale);
        return stale ? old : fresh;
      }),
    );
  };
  const send = async <T>(s: Send, call: () => Promise<T>): Promise<T> => {
    if (!step(life, () => checker.beforeSend(s, now() + c.skewMs))) return never;
    if (partitioned(c, "kube", now())) {
      step(life, () => checker.afterSend(s, false));
      throw transportError(new Error("connect ECONNREFUSED (simulated partition)"), s.method);
    }
    let answered = false;
    try {
      const r = await call();
      answered = true;
      return r;
    } finally {
      if (!step(life, () => checker.afterSend(s, answered))) await never;
    }
  };
  const wrapped: Partial<Kube> = {
    getNode: (name, opts) => read(`node/${name}`, lagging, () => k.getNode(name, opts)),
    listNodes: (opts) =>
      read(`nodes/${opts?.labelSelector ?? ""}`, oldList, () => k.listNodes(opts)),
    listPods: (onNode, opts) =>
      read(
        `pods/${onNode ?? ""}/${JSON.stringify(opts?.labelSelector ?? "")}`,
        oldList,
        () => k.listPods(onNode, opts),
      ),
    getPod: (ref, opts) =>
      read(`pod/${ref.namespace}/${ref.name}`, lagging, () => k.getPod(ref, opts)),
    listPdbs: (opts) => read(`pdbs`, oldList, () => k.listPdbs(opts)),
    getObject: (ref, name, ns, opts) =>
      read(
        `obj/${ref.plural}/${ns ?? ""}/${name}`,
        lagging,
        () => k.getObject(ref, name, ns, opts),
      ),
    listObjects: (ref, opts) => read(`objs/${ref.plural}`, oldList, () => k.listObjects(ref, opts)),
    cordon: (node, rv, opts) =>
      send(
        { controller: owner, api: "kube", method: "cordon", node },
        () => k.cordon(node, rv, opts),
      ),
    uncordon: (node, rv, opts) =>
      send(
        { controller: owner, api: "kube", method: "uncordon", node },
        () => k.uncordon(node, rv, opts),
      ),
    evict: (pod, opts) =>
      send(
        { controller: owner, api: "kube", method: "evict", node: c.podNode(pod) },
        () => k.evict(pod, opts),
      ),
    setContainerImage: (ref, ns, name, change, opts) =>
      send(
        {
          controller: owner,
          api: "kube",
          method: "set-image",
          node: checker.nodeOfOpenAttempt(owner, "kube-proxy-image"),
        },
        () => k.setContainerImage(ref, ns, name, change, opts),
      ),
    watch: (ref, opts, onEvent) => {
      if (life.dead) return never;
      const deliver = (ev: KubeWatchEvent) => {
        if (life.dead) return;
        // A watch that skips events: the cache behind it lags until the next re-list.
        if (skip > 0 && ev.type !== "BOOKMARK" && c.prng.chance(skip)) return;
        onEvent(ev);
      };
      return guard(life, k.watch(ref, opts, deliver));
    },
  };
  return new Proxy(k, {
    get(target, p) {
      const own = (wrapped as Record<PropertyKey, unknown>)[p];
      if (own) return own;
      const v = Reflect.get(target, p, target);
      if (typeof v !== "function") return v;
      return (...args: unknown[]) => {
        const r = v.apply(target, args);
        return r instanceof Promise ? guard(life, r) : r;
      };
    },
  });
}

const MUTATIONS: Partial<Record<keyof Talos, Send["method"]>> = {
  pull: "pull",
  upgrade: "install",
  legacyUpgrade: "install",
  reboot: "reboot",
  applyConfiguration: "apply",
};

/** The Talos API as this controller reaches it: partitions, sends checked. */
export function controllerTalos(
  c: ControllerContext,
  t: Talos,
  now: () => number,
  nodeOf: (address: string) => string,
): Talos {
  const { checker, life, owner } = c;
  return new Proxy(t, {
    get(target, p) {
      const v = Reflect.get(target, p, target);
      if (typeof v !== "function") return v;
      const method = MUTATIONS[p as keyof Talos];
      if (method) {
        return async (address: string, ...rest: unknown[]) => {
          const s: Send = { controller: owner, api: "talos", method, node: nodeOf(address) };
          if (!step(life, () => checker.beforeSend(s, now() + c.skewMs))) return never;
          if (partitioned(c, "talos", now())) {
            step(life, () => checker.afterSend(s, false));
            return mutationFailure(
              Code.UNAVAILABLE,
              "simulated partition: no route to host",
              address,
              String(p),
              false,
            );
          }
          const r = await guard(
            life,
            v.apply(target, [address, ...rest]) as Promise<{ outcome: string }>,
          );
          // Only the target's own answer (accepted, or a code it returned) answers a request.
          const answered = r.outcome === "ok" || r.outcome === "rejected";
          if (!step(life, () => checker.afterSend(s, answered))) return never;
          return r;
        };
      }
      return (...args: unknown[]) => {
        if (life.dead) return never;
        if (p !== "close" && partitioned(c, "talos", now())) {
          return Promise.reject(
            readError(
              Code.UNAVAILABLE,
              "simulated partition: no route to host",
              String(args[0]),
              String(p),
            ),
          );
        }
        const r = v.apply(target, args);
        return r instanceof Promise ? guard(life, r) : r;
      };
    },
  });
}
