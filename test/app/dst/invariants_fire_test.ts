/**
 * No invariant of the simulation campaign is vacuous: each fires on a deliberately broken
 * executor, injected through the executor's test seam (`ExecuteOptions.variant`, which rewires
 * the ports the executor reaches the world through) on a fixed seed with the faults that make the
 * broken behaviour matter. The correct executor passes the same seed and schedule (checked too),
 * so what fires is the broken behaviour, not the schedule.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import type { ExecutorDeps } from "../../../src/engine/executor/deps.ts";
import { type InvariantId, INVARIANTS } from "../../../src/app/dst/invariants.ts";
import { runSeed, type Variant } from "../../../src/app/dst/run_seed.ts";
import { describeFailure, shrink } from "../../../src/app/dst/campaign.ts";
import type { DstEvent } from "../../../src/app/dst/schedule.ts";
import type { Shape } from "../../../src/app/dst/world.ts";
import type { AttemptRecord, Journal } from "../../../src/ports/journal.ts";
import type { Kube } from "../../../src/ports/kube.ts";
import type { Talos } from "../../../src/ports/talos.ts";

const catalogue = await Deno.readFile(new URL("../../../catalogue/talos.yaml", import.meta.url));
/** A ci-profile seed whose plan starts with two workers and whose clean run completes. */
const SEED = 3;
/** The seeds here run a TalosUpgrade whatever kind they would draw. */
const TALOS = "TalosUpgrade";

async function planNodes(): Promise<readonly string[]> {
  return (await runSeed({ seed: SEED, kind: TALOS, catalogue, profile: "ci", events: [] }))
    .planNodes;
}

/** Runs the seed correct and broken; the broken run must fail `invariant`, the correct one not. */
async function fires(
  invariant: InvariantId,
  variant: Variant,
  events: readonly DstEvent[],
  extra: { maxPlanNodes?: number; shape?: (s: Shape) => Shape } = {},
) {
  const base = { seed: SEED, kind: TALOS, catalogue, profile: "ci" as const, events, ...extra };
  const correct = await runSeed(base);
  assertEquals(correct.violation, undefined, `the correct executor: ${correct.violation?.detail}`);
  assertEquals(correct.error, undefined);
  const broken = await runSeed({ ...base, variant });
  assert(
    broken.violation,
    `invariant ${invariant} did not fire (end ${broken.end}, ${broken.error ?? ""})`,
  );
  assertEquals(
    broken.violation.invariant,
    invariant,
    `expected ${invariant} (${INVARIANTS[invariant]}), got: ${broken.violation.detail}`,
  );
}

function withKube(f: (k: Kube, d: ExecutorDeps) => Partial<Kube>): Variant {
  return (d) => ({ ...d, kube: { ...spread(d.kube), ...f(d.kube, d) } });
}
function withTalos(f: (t: Talos, d: ExecutorDeps) => Partial<Talos>): Variant {
  return (d) => ({ ...d, talos: { ...spread(d.talos), ...f(d.talos, d) } });
}
function withJournal(f: (j: Journal, d: ExecutorDeps) => Partial<Journal>): Variant {
  return (d) => ({ ...d, journal: { ...spread(d.journal), ...f(d.journal, d) } as Journal });
}
/** Every method of a port (own and inherited, as a proxy over it answers them), bound to it. */
function spread<T extends object>(port: T): T {
  const out: Record<string, unknown> = {};
  let proto: object | null = port;
  const names = new Set<string>();
  while (proto && proto !== Object.prototype) {
    for (const k of Object.getOwnPropertyNames(proto)) names.add(k);
    proto = Object.getPrototypeOf(proto);
  }
  for (const k of names) {
    const v = (port as Record<string, unknown>)[k];
    if (k !== "constructor") out[k] = typeof v === "function" ? v.bind(port) : v;
  }
  return out as T;
}

Deno.test("dst invariant 1 fires when the executor cordons a second node", async () => {
  const [, second] = await planNodes();
  await fires(
    1,
    withKube((k) => ({
      cordon: async (node, rv, opts) => {
        const r = await k.cordon(node, rv, opts);
        const other = await k.getNode(second!);
        if (node !== second && other) await k.cordon(second!, other.resourceVersion);
        return r;
      },
    })),
    [],
  );
});

Deno.test("dst invariant 2 fires when the executor takes someone else's cordon for its own", async () => {
  const [first] = await planNodes();
  await fires(
    2,
    withKube((k) => ({
      getNode: async (name, opts) => {
        const n = await k.getNode(name, opts);
        return n && { ...n, unschedulable: false };
      },
      cordon: async (node, rv, opts) => {
        const r = await k.cordon(node, rv, opts);
        return r.kind === "applied" ? { ...r, priorUnschedulable: false } : r;
      },
    })),
    [{ kind: "operator-cordon", node: first!, atMs: 0, afterCommitOf: first! }],
    { maxPlanNodes: 1 },
  );
});

Deno.test("dst invariant 3 fires when the executor sends without a durable attempt", async () => {
  await fires(
    3,
    withJournal((j) => ({
      beginAttempt: (input) => {
        if (input.phase !== "reboot") return j.beginAttempt(input);
        const fake: AttemptRecord = {
          id: "at_not_recorded",
          operationId: input.operationId,
          number: 1,
          phase: input.phase,
          requestDigest: input.requestDigest,
          route: input.route,
          ownerGen: input.token.gen,
          ownerEpoch: input.token.epoch,
          evidenceId: input.evidenceId,
          sentAtMs: input.nowMs,
          transportDeadlineMs: input.transportDeadlineMs,
          verificationDeadlineMs: input.verificationDeadlineMs,
          classRevision: null,
          responseClass: null,
          accountedBy: null,
          accountedRevision: null,
        };
        return Promise.resolve({ ok: true, attempt: fake });
      },
    })),
    [],
  );
});

Deno.test("dst invariant 4 fires when the executor installs twice before the reboot", async () => {
  await fires(
    4,
    withTalos((t) => ({
      upgrade: async (node, req, digest, opts) => {
        await t.upgrade(node, req, digest, opts);
        return t.upgrade(node, req, digest, opts);
      },
    })),
    [],
  );
});

/** The broken executor's health gate: every round passes, whatever the journal recorded. */
const passingRounds: Variant = (d) => ({
  ...d,
  health: {
    round: async (purpose, opts) => ({ ...(await d.health.round(purpose, opts)), verdict: "pass" }),
  },
});

Deno.test("dst invariant 5 fires when the executor proceeds past a failing gate", async () => {
  // A budget that allows no disruption at all: the gate's drain-feasible check fails for good.
  const zero = (s: Shape): Shape => ({
    ...s,
    pdbLayout: { ...s.pdbLayout, "app-0": "zero-disruption" },
  });
  await fires(5, passingRounds, [], { shape: zero });
});

Deno.test("dst invariant 6 fires when the executor completes on the version it asked for, not the one it reads", async () => {
  const [first] = await planNodes();
  // After its reboot request, this broken executor reads back the version it asked for.
  const rebooted = new Set<string>();
  await fires(
    6,
    (d) =>
      withTalos((t) => ({
        reboot: (node, mode, opts) => (rebooted.add(node), t.reboot(node, mode, opts)),
        version: async (node, opts) => {
          const v = await t.version(node, opts);
          return rebooted.has(node) ? { ...v, tag: "v1.14.2" } : v;
        },
      }))(passingRounds(d)),
    [{ kind: "twin", fault: { kind: "boots-old-version", point: "talos.boot", target: first! } }],
    { maxPlanNodes: 1 },
  );
});

Deno.test("dst invariant 7 fires when the executor takes a lost reboot response for an acceptance", async () => {
  const [first] = await planNodes();
  await fires(
    7,
    withTalos((t) => ({
      reboot: async (node, mode, opts) => {
        const r = await t.reboot(node, mode, opts);
        return r.outcome === "sent-no-response" || r.outcome === "transport-failure"
          ? { outcome: "ok", value: { actorId: "assumed" } }
          : r;
      },
    })),
    [{ kind: "twin", fault: { kind: "lose-response", point: "talos.Reboot", target: first! } }],
    { maxPlanNodes: 1 },
  );
});

Deno.test("dst invariant 8 fires when the executor sends under a token it has itself superseded", async () => {
  const state: { last?: AttemptRecord } = {};
  await fires(
    8,
    (d) => {
      const journal = {
        ...spread(d.journal),
        beginAttempt: async (input: Parameters<Journal["beginAttempt"]>[0]) => {
          const r = await d.journal.beginAttempt(input);
          if (r.ok) state.last = r.attempt;
          return r;
        },
      } as Journal;
      const talos = {
        ...spread(d.talos),
        reboot: async (
          node: string,
          mode: Parameters<Talos["reboot"]>[1],
          opts: Parameters<Talos["reboot"]>[2],
        ) => {
          const a = state.last!;
          await d.journal.takeOver({
            operationId: a.operationId,
            newOwner: d.owner,
            seenGen: a.ownerGen,
            epoch: a.ownerEpoch,
            actor: { identity: d.owner, role: "controller" },
            nowMs: d.clock.now(),
          });
          return d.talos.reboot(node, mode, opts);
        },
      } as Talos;
      return { ...d, journal, talos };
    },
    [],
    { maxPlanNodes: 1 },
  );
});

Deno.test("dst invariant 9 fires when a restarted executor reports what its read claimed, not what the journal holds", async () => {
  // The controller dies halfway through its one node; its successor's reads claim completion.
  const clean = await runSeed({
    seed: SEED,
    kind: TALOS,
    catalogue,
    profile: "ci",
    events: [],
    maxPlanNodes: 1,
  });
  const atPoint = Math.floor(clean.writePoints / 2);
  await fires(
    9,
    withJournal((j) => ({
      listOperations: async () =>
        (await j.listOperations()).map((op) =>
          op.state === "completed" ? op : { ...op, state: "completed" as const }
        ),
    })),
    [{ kind: "crash", atPoint, restartAfterMs: 0, skewMs: 0 }],
    { maxPlanNodes: 1 },
  );
});

Deno.test("dst invariant 18 fires: paused past its install attempt's transport deadline, it sends the install anyway", async () => {
  // The controller stops right after its install attempt commits (a stopped process, a long GC)
  // for longer than any transport deadline of the plan (the install's is 600 s). The broken one
  // is handed attempts without that deadline, so it sends when it runs again; the correct one
  // sends nothing and records the attempt unanswered.
  const clean = await runSeed({ seed: SEED, kind: TALOS, catalogue, profile: "ci", events: [] });
  const afterAttempt = clean.pointNames.flatMap((n, i) =>
    n === "attempt:after-commit" ? [i + 1] : []
  );
  // The first node's attempts: its pull's, then its install's.
  const installCommitted = afterAttempt[1]!;
  await fires(
    18,
    withJournal((j) => ({
      beginAttempt: async (input) => {
        const r = await j.beginAttempt(input);
        return r.ok
          ? { ...r, attempt: { ...r.attempt, transportDeadlineMs: Number.MAX_SAFE_INTEGER } }
          : r;
      },
    })),
    [{ kind: "pause", atPoint: installCommitted, forMs: 700_000 }],
  );
});

Deno.test("dst: a failing seed prints its seed, its invariant and a shrunk schedule that still fails", async () => {
  const [first, second] = await planNodes();
  const lost: DstEvent = {
    kind: "twin",
    fault: { kind: "lose-response", point: "talos.Reboot", target: first! },
  };
  const noise: DstEvent[] = [
    { kind: "stale", read: "old-list", p: 0.1 },
    { kind: "twin", fault: { kind: "ignore-sigterm", point: "kube.pod", target: "none" } },
    { kind: "operator-cordon", node: second!, atMs: 10 * 3_600_000 },
  ];
  const variant = withTalos((t) => ({
    reboot: async (node, mode, opts) => {
      const r = await t.reboot(node, mode, opts);
      return r.outcome === "sent-no-response" || r.outcome === "transport-failure"
        ? { outcome: "ok", value: { actorId: "assumed" } }
        : r;
    },
  }));
  const base = {
    seed: SEED,
    kind: TALOS,
    catalogue,
    profile: "ci" as const,
    maxPlanNodes: 1,
    variant,
  };
  const failing = await runSeed({ ...base, events: [noise[0]!, lost, ...noise.slice(1)] });
  assertEquals(failing.violation?.invariant, 7);
  const shrunk = await shrink(base, failing);
  assertEquals(shrunk, [lost]);
  const again = await runSeed({ ...base, events: shrunk });
  assertEquals(again.violation?.invariant, 7);
  const text = describeFailure({ result: failing, shrunk });
  assert(text.startsWith(`seed ${SEED}: invariant 7 (`), text);
  assert(text.includes("shrunk schedule (1 of 4 events)"), text);
  assert(text.includes(`twin lose-response at talos.Reboot on ${first}`), text);
  assert(text.includes(`replay: deno task dst --seed ${SEED} --profile ci`), text);
});
