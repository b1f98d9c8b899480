/**
 * Issue 11's attacks on the reconcile loop over a real git daemon, a real trust-root file and the
 * twin: a merged plan signed for another cluster whose bound health-policy digest matches no file,
 * and a signer removed from allowed_signers while one plan runs and another is queued. Each is
 * refused at the point of dispatch before the commitment it would have authorised; the reports say
 * why with reason codes; nothing is sent.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { type ReconcileWorld, startReconcileWorld } from "../_helpers/reconcile_world.ts";
import { onlyNodes } from "../_helpers/twin_world.ts";

async function reconcile(w: ReconcileWorld): Promise<void> {
  await w.reconciler.cycle();
  await w.reconciler.settled();
}

function renamed(text: string, name: string): string {
  return text.replace("name: talos-v1.14.2", `name: ${name}`);
}

async function mutations(w: ReconcileWorld): Promise<number> {
  const stats = await w.tc.control.stats();
  return stats.talos.totalMutating + (stats.kube as { mutating: number }).mutating;
}

Deno.test("e2e: a merged plan for prod-eu whose bound policy digest matches no file is refused before any mutation", async () => {
  const w = await startReconcileWorld();
  try {
    const attack = renamed(w.planText, "talos-prod-eu").replace(
      "cluster: home-ops",
      "cluster: prod-eu",
    )
      .replace(/(healthPolicy:\n {4}path: .*\n {4}sha256: )[0-9a-f]{64}/, `$1${"ab".repeat(32)}`);
    await w.wt.commit({
      "plans/talos-prod-eu.yaml": attack,
      "plans/talos-prod-eu.yaml.sig": await w.sign(attack, ["alice", "bob"]),
    }, "A plan signed for prod-eu");
    await w.wt.push("main");
    await w.tc.control.resetStats();
    await reconcile(w);
    assertEquals(await mutations(w), 0, "the twin's mutation counters did not move");
    assertEquals(await w.journal.listOperations(), [], "nothing was committed");
    const report = await w.reportAt("reports/talos-prod-eu/execution.md") ?? "";
    assert(report.includes("**Verdict: REFUSED"), report.slice(0, 800));
    for (const why of ["HealthPolicyDigestMismatch", "ClusterIdentityMismatch", "prod-eu"]) {
      assert(report.includes(why), `the report says ${why}`);
    }
    const checks = (await w.journal.events()).filter((e) => e.kind === "dispatch-check");
    assertEquals(checks.map((e) => JSON.parse(e.body).verdict), ["refused"]);
  } finally {
    await w.stop();
  }
});

Deno.test("e2e: removing a signer from allowed_signers stops the running plan before its next node and the queued one before it starts", async () => {
  const w = await startReconcileWorld();
  try {
    const two = onlyNodes("worker-1", "worker-2")(w.planText);
    const running = renamed(two, "talos-running");
    const queued = renamed(two, "talos-queued");
    await w.wt.commit({
      "plans/talos-running.yaml": running,
      "plans/talos-running.yaml.sig": await w.sign(running, ["alice", "bob"]),
    }, "First plan");
    await w.wt.commit({
      "plans/talos-queued.yaml": queued,
      "plans/talos-queued.yaml.sig": await w.sign(queued, ["alice", "bob"]),
    }, "Second plan, same cluster: it queues");
    await w.wt.push("main");
    await w.reconciler.cycle();
    // Once the first plan committed worker-1, bob is removed from the trust root.
    const deadline = Date.now() + 60_000;
    while ((await w.journal.listOperations()).length === 0) {
      assert(Date.now() < deadline, "the first plan never committed a node");
      await new Promise((r) => setTimeout(r, 50));
    }
    const lines = (await Deno.readTextFile(w.trustPath)).split("\n");
    await Deno.writeTextFile(w.trustPath, lines.filter((l) => !l.startsWith("bob@")).join("\n"));
    await w.reconciler.settled();
    const ops = await w.journal.listOperations();
    assertEquals(ops.map((o) => [o.machine, o.state]), [["worker-1", "completed"]]);
    const finished = w.reconciler.finished().map((x) => [x.plan, x.end.state]);
    assertEquals(finished, [["talos-running", "refused"], ["talos-queued", "refused"]]);
    for (const name of ["talos-running", "talos-queued"]) {
      const report = await w.reportAt(`reports/${name}/execution.md`) ?? "";
      assert(report.includes("**Verdict: REFUSED"), `${name}: ${report.slice(0, 600)}`);
      assert(/SignerNotTrusted|ApprovalsInsufficient/.test(report), `${name} says why`);
    }
  } finally {
    await w.stop();
  }
});
