/**
 * The drain's eviction loop (engine/drain_run.ts) reacts to the cluster: a budget that allows a
 * disruption again, or a pod that left the node, starts the next pass at once instead of after
 * the poll interval, and a pass asks once per workload whose budget refused. The cluster here is
 * a scripted Kubernetes port: the test decides when budgets change and pods leave, and the clock
 * never moves unless the test moves it, so "at once" means "without any clock time passing".
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { planDrain } from "../../src/engine/drain_plan.ts";
import { type DrainRunResult, exitWaitMs, runDrain } from "../../src/engine/drain_run.ts";
import type { Clock } from "../../src/ports/clock.ts";
import type {
  EvictionOutcome,
  Kube,
  KubePod,
  KubeWatchEnd,
  KubeWatchEvent,
} from "../../src/ports/kube.ts";

function pod(name: string, owner = "web"): KubePod {
  return {
    namespace: "apps",
    name,
    uid: `uid-${name}`,
    resourceVersion: "1",
    nodeName: "worker-1",
    phase: "Running",
    ready: true,
    labels: { app: owner },
    annotations: {},
    owner: { apiVersion: "apps/v1", kind: "ReplicaSet", name: owner, uid: `rs-${owner}` },
    daemonSet: false,
    mirror: false,
    emptyDir: false,
    terminationGracePeriodSeconds: 1,
    deletionTimestamp: undefined,
  };
}

/** A node's pods under one budget; the test moves the budget and removes pods. */
class ScriptedCluster {
  allowed = 1;
  pods: KubePod[];
  readonly evictions: string[] = [];
  readonly #watchers = new Set<(e: KubeWatchEvent) => void>();
  #opened: (() => void)[] = [];
  failWatches = false;

  constructor(pods: KubePod[]) {
    this.pods = pods;
  }

  /** Resolves once the drain is waiting on its watches. */
  waiting(): Promise<void> {
    return new Promise((r) => this.#opened.push(r));
  }

  podLeaves(name: string): void {
    const p = this.pods.find((x) => x.name === name)!;
    this.pods = this.pods.filter((x) => x !== p);
    this.#emit({ type: "DELETED", object: { metadata: { namespace: p.namespace, name } } });
  }

  budgetAllows(n: number): void {
    this.allowed = n;
    this.#emit({
      type: "MODIFIED",
      object: { metadata: { namespace: "apps", name: "web" }, status: { disruptionsAllowed: n } },
    });
  }

  #emit(e: KubeWatchEvent): void {
    for (const w of [...this.#watchers]) w(e);
  }

  readonly kube = {
    listPdbs: () =>
      Promise.resolve({
        items: [{
          namespace: "apps",
          name: "web",
          selector: { matchLabels: { app: "web" } },
          disruptionsAllowed: this.allowed,
        }],
        resourceVersion: "7",
      }),
    listPods: () => Promise.resolve({ items: [...this.pods], resourceVersion: "7" }),
    getPod: (ref: { name: string }) => Promise.resolve(this.pods.find((p) => p.name === ref.name)),
    evict: (ref: { name: string }): Promise<EvictionOutcome> => {
      this.evictions.push(ref.name);
      if (this.allowed <= 0) {
        return Promise.resolve({
          kind: "blocked",
          httpStatus: 429,
          message: "Cannot evict pod as it would violate the pod's disruption budget.",
          retryAfterSeconds: undefined,
          causes: ["DisruptionBudget"],
        });
      }
      // The disruption controller counts the evicted pod at once: the budget allows one fewer.
      this.budgetAllows(this.allowed - 1);
      return Promise.resolve({ kind: "accepted" });
    },
    watch: (
      ref: { plural: string },
      o: { signal?: AbortSignal },
      onEvent: (e: KubeWatchEvent) => void,
    ): Promise<KubeWatchEnd> => {
      if (this.failWatches) {
        return Promise.resolve({ kind: "failed", reason: "KubeUnreachable", message: "down" });
      }
      this.#watchers.add(onEvent);
      // The drain waits on a pod watch (the budget watch lasts the whole drain).
      if (ref.plural === "pods") {
        const opened = this.#opened;
        this.#opened = [];
        for (const r of opened) r();
      }
      return new Promise((resolve) =>
        o.signal?.addEventListener("abort", () => {
          this.#watchers.delete(onEvent);
          resolve({ kind: "aborted" });
        }, { once: true })
      );
    },
  } as unknown as Kube;
}

/** A clock that moves only when the test says; `sleeps` counts waits that ran to the end. */
class HeldClock implements Clock {
  t = 0;
  sleeps = 0;
  #pending: { at: number; resolve: () => void }[] = [];
  now = () => this.t;
  sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
    new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const entry = {
        at: this.t + ms,
        resolve: () => {
          this.sleeps++;
          resolve();
        },
      };
      this.#pending.push(entry);
      signal?.addEventListener("abort", () => {
        this.#pending = this.#pending.filter((p) => p !== entry);
        reject(signal.reason);
      }, { once: true });
    });
  advance(ms: number): void {
    this.t += ms;
    const due = this.#pending.filter((p) => p.at <= this.t);
    this.#pending = this.#pending.filter((p) => p.at > this.t);
    for (const p of due) p.resolve();
  }
}

/** A scripted wait that never comes would hang the run: fail it after a real-time bound instead. */
async function within<T>(what: Promise<T>, seconds = 10): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      what,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`not done within ${seconds} s`)), seconds * 1000);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function start(
  c: ScriptedCluster,
  clock: HeldClock,
  wake: "events" | "poll",
  pollIntervalMs = 60_000,
) {
  const plan = planDrain({
    node: "worker-1",
    pods: c.pods,
    drainBoundSeconds: 600,
    partialDrainAuthorized: false,
  });
  const records: string[] = [];
  const done: Promise<DrainRunResult> = runDrain(
    {
      kube: c.kube,
      clock,
      pollIntervalMs,
      callTimeoutMs: 10_000,
      wake,
      record: (kind, detail) =>
        Promise.resolve(void records.push(`${kind} ${JSON.stringify(detail)}`)),
    },
    plan,
    c.pods,
    600_000,
  );
  return { done, records };
}

Deno.test("drain: a budget that allows a disruption again starts the next pass at once, one eviction per workload per pass", async () => {
  const c = new ScriptedCluster([pod("web-a"), pod("web-b"), pod("web-c")]);
  const clock = new HeldClock();
  const { done, records } = start(c, clock, "events");
  await within(c.waiting());
  // First pass: web-a accepted, web-b refused by the budget, web-c not asked (same budget).
  assertEquals(c.evictions, ["web-a", "web-b"]);
  c.podLeaves("web-a");
  await within(c.waiting());
  // A pod leaving wakes a pass, but the budget that refused web-b has not moved: not asked.
  assertEquals(c.evictions, ["web-a", "web-b"]);
  c.budgetAllows(1);
  await within(c.waiting());
  // The budget's event asks again; web-c is not asked while the budget shows no disruption.
  assertEquals(c.evictions, ["web-a", "web-b", "web-b"]);
  c.podLeaves("web-b");
  c.budgetAllows(1);
  await within(c.waiting());
  c.podLeaves("web-c");
  const r = await within(done);
  assertEquals(r.kind, "drained");
  assertEquals(c.evictions, ["web-a", "web-b", "web-b", "web-c"]);
  assertEquals([clock.t, clock.sleeps], [0, 0], "no poll interval was waited");
  // Every request is recorded: an intent before it, its outcome after.
  const intents = records.filter((r) => r.startsWith("intent"));
  assertEquals(intents.length, c.evictions.length);
  assert(records.some((r) => r.includes('"outcome":"blocked"')));
});

Deno.test("drain: with polling (virtual time) or without watches the poll interval paces the passes", async () => {
  for (const setup of ["poll", "watch-fails"] as const) {
    const c = new ScriptedCluster([pod("web-a"), pod("web-b")]);
    c.failWatches = setup === "watch-fails";
    const clock = new HeldClock();
    const { done } = start(c, clock, setup === "poll" ? "poll" : "events");
    // Let the first pass run and the wait begin.
    for (let i = 0; i < 50 && c.evictions.length < 2; i++) await new Promise((r) => setTimeout(r));
    assertEquals(c.evictions, ["web-a", "web-b"]);
    c.podLeaves("web-a");
    c.budgetAllows(1);
    await new Promise((r) => setTimeout(r, 10));
    assertEquals(c.evictions, ["web-a", "web-b"], `${setup}: nothing before the interval`);
    clock.advance(60_000);
    for (let i = 0; i < 50 && c.evictions.length < 3; i++) await new Promise((r) => setTimeout(r));
    assertEquals(c.evictions, ["web-a", "web-b", "web-b"], `${setup}: the interval starts a pass`);
    c.podLeaves("web-b");
    let settled = false;
    void done.finally(() => (settled = true));
    for (let i = 0; i < 50 && !settled; i++) {
      clock.advance(60_000);
      await new Promise((r) => setTimeout(r));
    }
    assertEquals((await done).kind, "drained");
  }
});

Deno.test("drain: a stop signal ends an event wait with the signal's reason", async () => {
  const c = new ScriptedCluster([pod("web-a"), pod("web-b")]);
  const clock = new HeldClock();
  const ac = new AbortController();
  const plan = planDrain({
    node: "worker-1",
    pods: c.pods,
    drainBoundSeconds: 600,
    partialDrainAuthorized: false,
  });
  const done = runDrain(
    {
      kube: c.kube,
      clock,
      pollIntervalMs: 60_000,
      callTimeoutMs: 10_000,
      wake: "events",
      signal: ac.signal,
      record: () => Promise.resolve(),
    },
    plan,
    c.pods,
    600_000,
  );
  await within(c.waiting());
  ac.abort(new Error("stop"));
  await done.then(
    () => assert(false, "a stopped drain does not report an outcome"),
    (e) => assertEquals((e as Error).message, "stop"),
  );
});

/** Lets the drain's pending promises run (the scripted port answers at once). */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((r) => setTimeout(r));
}

Deno.test("drain: polling with every eviction accepted looks for the exits sooner, backing off to the interval", async () => {
  assertEquals([0, 1, 2, 3, 4, 5].map((q) => exitWaitMs(5_000, q)), [
    1_000,
    1_000,
    2_000,
    4_000,
    5_000,
    5_000,
  ]);
  const c = new ScriptedCluster([pod("web-a"), pod("web-b")]);
  c.allowed = 2;
  const clock = new HeldClock();
  const { done } = start(c, clock, "poll", 5_000);
  await settle();
  assertEquals(c.evictions, ["web-a", "web-b"]);
  // The pods exit 2 s after their evictions: seen gone at 2 s, not at the 5 s interval.
  clock.advance(1_000);
  await settle();
  c.podLeaves("web-a");
  c.podLeaves("web-b");
  clock.advance(1_000);
  assertEquals((await within(done, 3)).kind, "drained");
  assertEquals(clock.t, 2_000);
  assertEquals(c.evictions, ["web-a", "web-b"], "the sooner passes send no eviction");
});

Deno.test("drain: polling with an eviction still refused waits the whole interval", async () => {
  const c = new ScriptedCluster([pod("web-a"), pod("web-b")]);
  const clock = new HeldClock();
  const { done } = start(c, clock, "poll", 5_000);
  await settle();
  assertEquals(c.evictions, ["web-a", "web-b"]);
  c.budgetAllows(1);
  clock.advance(4_999);
  await settle();
  assertEquals(c.evictions, ["web-a", "web-b"], "no pass before the interval");
  clock.advance(1);
  await settle();
  assertEquals(c.evictions, ["web-a", "web-b", "web-b"]);
  c.podLeaves("web-a");
  c.podLeaves("web-b");
  clock.advance(1_000);
  assertEquals((await within(done)).kind, "drained");
});

Deno.test("drain: an eviction whose intent is recorded past the attempt's transport deadline is not sent", async () => {
  // The controller is paused while it records the second eviction's intent (the journal write
  // before the request) and runs again past the drain attempt's transport deadline.
  const c = new ScriptedCluster([pod("web-a"), pod("web-b", "api")]);
  c.allowed = 2;
  const clock = new HeldClock();
  const records: string[] = [];
  const plan = planDrain({
    node: "worker-1",
    pods: c.pods,
    drainBoundSeconds: 600,
    partialDrainAuthorized: false,
  });
  const out = await within(runDrain(
    {
      kube: c.kube,
      clock,
      pollIntervalMs: 5_000,
      callTimeoutMs: 10_000,
      wake: "poll",
      sendByMs: 60_000,
      record: (kind, detail) => {
        records.push(`${kind} ${JSON.stringify(detail)}`);
        if (kind === "intent" && detail["evict"] === "apps/web-b") clock.t = 60_000;
        return Promise.resolve();
      },
    },
    plan,
    c.pods,
    600_000,
  ));
  assertEquals(c.evictions, ["web-a"], "web-b's eviction never left");
  assertEquals(records.filter((r) => r.includes("web-b")), [
    `intent {"evict":"apps/web-b"}`,
    `fact {"evict":"apps/web-b","outcome":"not-sent","reason":"TransportDeadlinePassed"}`,
  ]);
  // The drain ends at the deadline as at its bound: web-b still on the node.
  assertEquals(out.kind, "bound-reached");
  assert(out.kind === "bound-reached" && out.remaining.map((p) => p.name).includes("web-b"));
});
