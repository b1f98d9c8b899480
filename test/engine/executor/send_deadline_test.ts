/**
 * A request leaves only inside the transport deadline its attempt recorded
 * (engine/executor/mutation.ts). Recovery's settle floor counts from that deadline, so a
 * controller paused between the attempt's commit and its send — a stopped process, a long GC, a
 * suspended VM — must not send once it runs again past it, and a send that is still in time is
 * bounded by what is left of it, never by a whole new deadline. A drain, which repeats evictions
 * within one attempt, sends none from its attempt's deadline on, and ends there.
 * The pause is the world's virtual clock moved right after the attempt commits.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { openJournal } from "../../../src/adapters/journal/libsql_journal.ts";
import type { Phase } from "../../../src/domain/operation.ts";
import type { AttemptInput, Journal, OperationDetail } from "../../../src/ports/journal.ts";
import type { TalosCallOptions } from "../../../src/ports/talos.ts";
import { type InprocWorld, startInprocWorld } from "../../_helpers/inproc_world.ts";
import { counterIds, T0 } from "../../_helpers/journal_world.ts";

const W1 = ["worker-1", "worker-2"];
/** The example plan's install transport deadline. */
const INSTALL_MS = 600_000;

/** `j`, with `pause` awaited right after an attempt of `phase` commits (before it is sent). */
function pausedAfterAttempt(j: Journal, phase: Phase, pause: () => Promise<void>): Journal {
  return new Proxy(j, {
    get(target, key) {
      if (key === "beginAttempt") {
        return async (input: AttemptInput) => {
          const r = await target.beginAttempt(input);
          if (r.ok && input.phase === phase) await pause();
          return r;
        };
      }
      const v = Reflect.get(target, key);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

/** A world whose controller pauses `ms` of its clock after the first `phase` attempt commits. */
async function pausingWorld(phase: Phase, ms: number, editPlan?: (t: string) => string) {
  const journal = await openJournal({ url: ":memory:", ids: counterIds("s"), nowMs: T0 });
  const ref: { w?: InprocWorld } = {};
  let paused = false;
  const w = await startInprocWorld({
    nodes: W1,
    journal: pausedAfterAttempt(journal, phase, async () => {
      if (paused) return;
      paused = true;
      await ref.w!.twin.clock.sleep(ms);
    }),
    ...(editPlan ? { editPlan } : {}),
  });
  ref.w = w;
  return {
    w,
    close: async () => {
      await w.close();
      await journal.close();
    },
  };
}

async function worker1(w: InprocWorld): Promise<OperationDetail> {
  const d = (await w.operations()).find((x) => x.operation.machine === "worker-1");
  if (!d) throw new Error("no operation for worker-1");
  return d;
}

/** Counts install calls and records the timeout each carried. */
function watchInstalls(w: InprocWorld): number[] {
  const timeouts: number[] = [];
  const upgrade = w.twin.talos.upgrade.bind(w.twin.talos);
  w.twin.talos.upgrade = (node, image, containerd, opts: TalosCallOptions) => {
    timeouts.push(opts.timeoutMs);
    return upgrade(node, image, containerd, opts);
  };
  return timeouts;
}

Deno.test("send deadline: an install admitted but not sent before its transport deadline is never sent; the attempt stays unaccounted", async () => {
  const { w, close } = await pausingWorld("install", INSTALL_MS + 1_000);
  try {
    const installs = watchInstalls(w);
    const out = await w.run();
    assertEquals(out.nodes.map((n) => [n.node, n.state]), [["worker-1", "unresolved"]]);
    assertEquals(installs, [], "nothing reached the node");
    assertEquals(w.twin.talos.stats.mutating["LifecycleService/Upgrade"] ?? 0, 0);
    const d = await worker1(w);
    const install = d.attempts.find((a) => a.phase === "install")!;
    // Conservatively a transport failure: it accounts for nothing, as after any transport gap.
    assertEquals([install.responseClass, install.accountedBy], ["transport-failure", null]);
    assert(
      out.nodes[0]!.detail.includes("TransportDeadlinePassed: not sent"),
      out.nodes[0]!.detail,
    );
    assert(!d.attempts.some((a) => a.phase === "reboot"), "no phase after it");
  } finally {
    await close();
  }
});

Deno.test("send deadline: a send still in time carries what is left of the recorded deadline, not a new one", async () => {
  const { w, close } = await pausingWorld("install", 100_000);
  try {
    const installs = watchInstalls(w);
    await w.run();
    // In process the call timeout is the virtual budget itself (callTimeoutMs is the identity);
    // worker-2's controller did not pause.
    assertEquals(installs, [INSTALL_MS - 100_000, INSTALL_MS]);
    const d = await worker1(w);
    const install = d.attempts.find((a) => a.phase === "install")!;
    assertEquals(install.responseClass, "accepted");
  } finally {
    await close();
  }
});

Deno.test("send deadline: a drain paused before it starts sends no eviction from its attempt's transport deadline on, and ends there", async () => {
  // Drain transport deadline and drain bound 300 s (the longest grace on worker-1); the controller
  // pauses 100 s right after the drain attempt commits, so the drain's own bound would run to 400 s. Echo's budget, tightened
  // after the cordon, refuses its evictions, so the drain keeps asking until it must stop.
  const DRAIN_TRANSPORT_MS = 300_000;
  const { w, close } = await pausingWorld("drain", 100_000, (t) => {
    const drain = "drain: { transportSeconds: 600, verificationSeconds: 900 }";
    if (!t.includes(drain)) throw new Error("the plan's drain deadline moved");
    return t.replace(drain, "drain: { transportSeconds: 300, verificationSeconds: 900 }")
      .replace("drainTimeoutSeconds: 600", "drainTimeoutSeconds: 300");
  });
  try {
    const pdbs = w.twin.controllers.pdbs;
    let tightened = false;
    w.twin.store.watch(w.twin.controllers.nodes, (e) => {
      const cordoned = (e.object.spec as { unschedulable?: boolean } | undefined)
        ?.unschedulable === true;
      if (tightened || e.object.metadata.name !== "worker-1" || !cordoned) return;
      tightened = true;
      const echo = w.twin.store.get(pdbs, "network", "echo")!;
      w.twin.store.put(pdbs, { ...echo, spec: { ...(echo.spec as object), minAvailable: 2 } });
    });
    const sentAt: number[] = [];
    const evict = w.twin.kube.evict.bind(w.twin.kube);
    w.twin.kube.evict = (pod, opts) => {
      sentAt.push(w.twin.clock.now());
      return evict(pod, opts);
    };
    const out = await w.run();
    assertEquals(out.nodes.map((n) => [n.node, n.state, n.reason]), [
      ["worker-1", "unresolved", "DrainIncomplete"],
    ]);
    const d = await worker1(w);
    const drain = d.attempts.find((a) => a.phase === "drain")!;
    assertEquals(drain.transportDeadlineMs - drain.sentAtMs, DRAIN_TRANSPORT_MS);
    assert(sentAt.length > 5, "the refused eviction was asked again while there was time");
    const late = sentAt.filter((t) => t >= drain.transportDeadlineMs);
    assertEquals(late, [], "no eviction at or after the attempt's transport deadline");
    assert(sentAt.every((t) => t >= drain.sentAtMs + 100_000), "nothing sent while paused");
    assert(Math.max(...sentAt) >= drain.transportDeadlineMs - 30_000, "asked until near the end");
    // And it ended there, not at the longer drain bound: nothing more could be asked.
    const ended = d.phases.find((p) =>
      p.phase === "drain" && p.kind === "fact" && JSON.parse(p.detail)["boundReached"] === true
    )!;
    assert(
      ended.atMs - drain.transportDeadlineMs < 30_000,
      `the drain ended ${ended.atMs - drain.sentAtMs} ms after it began`,
    );
  } finally {
    await close();
  }
});
