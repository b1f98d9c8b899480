/**
 * The recovery uncordon goes through the one mutation path with its own admission: phase intent,
 * fresh cordon-ownership read, a recovery attempt the journal commits, the write, the response
 * recorded against that attempt. A journal refusal of the attempt sends nothing. Real journal
 * (libSQL file), the twin's apiserver over real TLS.
 */
import { deepStrictEqual as assertEquals, ok as assert, rejects } from "node:assert/strict";
import { join } from "node:path";
import { CairnError } from "../../../src/domain/errors.ts";
import type { Journal } from "../../../src/ports/journal.ts";
import { connectRecoveryCluster, recoveryRuntime } from "../../../src/app/recover_wiring.ts";
import { uncordonOwned } from "../../../src/engine/recovery/recover_uncordon.ts";
import { NODES } from "../../../src/engine/executor/kube_phases.ts";
import { onlyNodes, startTwinWorld, type TwinWorld } from "../../_helpers/twin_world.ts";

/** A one-node rollout of worker-2 whose reboot response is lost: the node stays cordoned. */
async function cordonedByLostReboot() {
  const dir = await Deno.makeTempDir({ prefix: "cairn-recover-uncordon-" });
  const w = await startTwinWorld({
    editPlan: onlyNodes("worker-2"),
    journalUrl: `file:${join(dir, "journal.db")}`,
    faults: [{
      kind: "lose-response",
      point: "talos.Reboot",
      target: "worker-2",
      params: { mode: "reset" },
    }],
  });
  const out = await w.run();
  assertEquals(out.nodes.map((n) => n.state), ["unresolved"]);
  const rt = await recoveryRuntime(w.twin.controlUrl);
  const { cluster, close } = await connectRecoveryCluster(rt, {
    kubeconfig: w.twin.kubeconfigPath!,
  });
  return { w, dir, cluster, close, opId: out.nodes[0]!.operationId! };
}

async function stop(w: TwinWorld, dir: string, close: () => void) {
  close();
  await w.stop();
  await Deno.remove(dir, { recursive: true });
}

/** The operation's timeline from the takeover on, as `kind[:phase]`. */
async function recoveryTimeline(journal: Journal, opId: string): Promise<string[]> {
  const d = (await journal.showOperation(opId))!;
  const from = d.events.findLastIndex((e) => e.kind === "ownership");
  return d.events.slice(from).map((e) => {
    const phase = (JSON.parse(e.body) as { phase?: string }).phase;
    return phase ? `${e.kind}:${phase}` : e.kind;
  });
}

Deno.test("the recovery uncordon records intent, recovery attempt and response in order, then the fact", async () => {
  const { w, dir, cluster, close, opId } = await cordonedByLostReboot();
  try {
    const r = await uncordonOwned(w.journal, cluster, { operationId: opId, actor: "carol" });
    assertEquals(r.decision, "uncordon");
    const node = await cluster.kube.getNode("worker-2");
    assertEquals(node?.unschedulable, false);
    assertEquals(await recoveryTimeline(w.journal, opId), [
      "ownership",
      "phase-intent:uncordon",
      "recovery-attempt:uncordon",
      "recovery-response",
      "phase-fact:uncordon",
    ]);
    const d = (await w.journal.showOperation(opId))!;
    const body = (kind: string) =>
      JSON.parse(d.events.find((e) => e.kind === kind)!.body) as Record<string, unknown>;
    const attempt = body("recovery-attempt");
    assertEquals(
      [attempt["actor"], attempt["role"], attempt["decision"]],
      ["carol", "recovery-admin", "uncordonOwnedCordon"],
    );
    assertEquals((attempt["evidence"] as Record<string, unknown>)["cordonOwnedByOperation"], true);
    const response = body("recovery-response");
    assertEquals([response["attempt"], response["class"]], [attempt["attempt"], "accepted"]);
    // The recovery attempt is not one of the plan's attempts: the budget is untouched.
    assertEquals(d.attempts.every((a) => a.phase !== "uncordon"), true);
  } finally {
    await stop(w, dir, close);
  }
});

Deno.test("a journal refusal of the recovery attempt sends nothing", async () => {
  const { w, dir, cluster, close, opId } = await cordonedByLostReboot();
  try {
    const before = await cluster.kube.getObject(NODES, "worker-2");
    // Another recovery-admin takes the operation over between this one's takeover and its
    // attempt: the journal's fence refuses the attempt, so the write must not go out.
    const racing = new Proxy(w.journal, {
      get(target, prop) {
        if (prop === "beginRecoveryAttempt") {
          return async (input: Parameters<Journal["beginRecoveryAttempt"]>[0]) => {
            const op = (await target.getOperation(input.operationId))!;
            const { epoch } = await target.installation();
            const won = await target.takeOver({
              operationId: op.id,
              newOwner: "recover:dave",
              seenGen: op.ownerGen,
              epoch,
              actor: { identity: "dave", role: "recovery-admin" },
              nowMs: input.nowMs,
            });
            assert(won.ok);
            return await target.beginRecoveryAttempt(input);
          };
        }
        const v = Reflect.get(target, prop, target);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    await rejects(
      uncordonOwned(racing, cluster, { operationId: opId, actor: "carol" }),
      (e: unknown) =>
        e instanceof CairnError && e.reason === "RecoveryUncordonRefused" &&
        /AttemptRefused/.test(e.message),
    );
    const after = await cluster.kube.getObject(NODES, "worker-2");
    assertEquals(after?.metadata?.resourceVersion, before?.metadata?.resourceVersion, "no write");
    assertEquals((await cluster.kube.getNode("worker-2"))?.unschedulable, true);
    const timeline = await recoveryTimeline(w.journal, opId);
    assertEquals(timeline.slice(-1), ["recovery-attempt-refused:uncordon"]);
    assert(!timeline.some((k) => /^recovery-(attempt|response)(:|$)/.test(k)), timeline.join());
  } finally {
    await stop(w, dir, close);
  }
});

/** The journal, with `hook` run once just before the named method (a race at that point). */
function racingAt(journal: Journal, method: keyof Journal, hook: () => Promise<void>): Journal {
  let done = false;
  return new Proxy(journal, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target);
      if (typeof v !== "function") return v;
      if (prop !== method) return v.bind(target);
      return async (...args: unknown[]) => {
        if (!done) {
          done = true;
          await hook();
        }
        return await (v as (...a: unknown[]) => Promise<unknown>).apply(target, args);
      };
    },
  });
}

Deno.test("a recovery uncordon is refused once the cordon was lifted, and when the node changed after its intent", async () => {
  const { w, dir, cluster, close, opId } = await cordonedByLostReboot();
  try {
    // Someone lifts the cordon and cordons again (cairn's own field manager, still
    // unschedulable): the node is at a new resourceVersion, its cordon looks the same. First
    // between the decision's read and the intent (the intent names the older node), then between
    // the fresh read and the write (the write's precondition fails).
    const rewrite = async () => {
      const rv = (await cluster.kube.getObject(NODES, "worker-2"))!.metadata!.resourceVersion!;
      const lifted = await cluster.kube.uncordon("worker-2", rv);
      assert(lifted.kind === "applied");
      assertEquals((await cluster.kube.cordon("worker-2", lifted.resourceVersion)).kind, "applied");
    };
    const bump = racingAt(w.journal, "beginRecoveryAttempt", async () => {
      await rewrite();
    });
    const changed = racingAt(w.journal, "recordPhase", async () => {
      await rewrite();
    });
    await rejects(
      uncordonOwned(changed, cluster, { operationId: opId, actor: "carol" }),
      (e: unknown) =>
        e instanceof CairnError && e.reason === "RecoveryUncordonRefused" &&
        /changed since the intent/.test(e.message),
    );
    assertEquals((await cluster.kube.getNode("worker-2"))?.unschedulable, true);
    // The write itself answered 409 (the node moved between the read and the write): never
    // reported as done.
    await rejects(
      uncordonOwned(bump, cluster, { operationId: opId, actor: "carol" }),
      (e: unknown) =>
        e instanceof CairnError && e.reason === "RecoveryUncordonRefused" &&
        /not applied/.test(e.message),
    );
    assertEquals((await cluster.kube.getNode("worker-2"))?.unschedulable, true);
    const done = await uncordonOwned(w.journal, cluster, { operationId: opId, actor: "carol" });
    assertEquals(done.decision, "uncordon");
    await rejects(
      uncordonOwned(w.journal, cluster, { operationId: opId, actor: "carol" }),
      (e: unknown) =>
        e instanceof CairnError && e.reason === "RecoveryUncordonRefused" &&
        /already lifted/.test(e.message),
    );
  } finally {
    await stop(w, dir, close);
  }
});
