import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { command } from "../../src/cli/recover.ts";
import { type CommandIO, UsageError } from "../../src/cli/command.ts";
import { parseCommandArgs } from "../../src/cli/command_args.ts";
import { onlyNodes, startTwinWorld, type TwinWorld } from "../_helpers/twin_world.ts";

const KUBECTL = Deno.env.get("CAIRN_KUBECTL") ?? "kubectl";

/** Runs `cairn recover …` in-process as main would (usage errors exit 2). */
async function recover(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const io: CommandIO = {
    stdout: (t) => out += t,
    stderr: (t) => err += t,
    env: {},
    cwd: Deno.cwd(),
    color: false,
    tty: false,
    signal: new AbortController().signal,
  };
  try {
    return { code: await command.run(parseCommandArgs(command, argv), io), out, err };
  } catch (e) {
    if (e instanceof UsageError) return { code: 2, out, err: err + e.message };
    throw e;
  }
}

/** A one-node rollout of worker-2 whose reboot lands but whose response is lost. */
async function lostReboot(): Promise<{ w: TwinWorld; url: string; opId: string; dir: string }> {
  const dir = await Deno.makeTempDir({ prefix: "cairn-recover-" });
  const url = `file:${join(dir, "journal.db")}`;
  const w = await startTwinWorld({
    editPlan: onlyNodes("worker-2"),
    journalUrl: url,
    faults: [{
      kind: "lose-response",
      point: "talos.Reboot",
      target: "worker-2",
      params: { mode: "reset" },
    }],
  });
  const out = await w.run();
  assertEquals(out.nodes.map((n) => [n.node, n.state, n.reason]), [
    ["worker-2", "unresolved", "RebootResponseLost"],
  ]);
  return { w, url, opId: out.nodes[0]!.operationId!, dir };
}

async function kubeNode(w: TwinWorld, name: string) {
  const r = await new Deno.Command(KUBECTL, {
    args: ["--kubeconfig", w.twin.kubeconfigPath!, "get", "node", name, "-o", "json"],
  }).output();
  assert(r.success, new TextDecoder().decode(r.stderr));
  return JSON.parse(new TextDecoder().decode(r.stdout)) as {
    spec: { unschedulable?: boolean };
    metadata: { managedFields: Array<{ manager: string }> };
  };
}

Deno.test("cairn recover accounts a lost reboot only after the settle floor, then classifies it completed without re-sending", async () => {
  const { w, url, opId, dir } = await lostReboot();
  try {
    // The reboot landed: the node comes back on the target, yet the operation stays unresolved.
    await w.control.advance(900_000);
    const n = await w.control.node("worker-2");
    assertEquals([n.stage, n.runningVersion], ["running", "v1.14.2"]);
    const base = [opId, "--journal", url, "--twin-control", w.twin.controlUrl];
    const cluster = [
      "--kubeconfig",
      w.twin.kubeconfigPath!,
      "--talosconfig",
      w.twin.talosconfigPath,
    ];
    const policy = ["--health-policy", join(Deno.cwd(), "fixtures/health/home-ops.yaml")];
    const admin = ["--actor", "carol@example.com"];

    const shown = await recover([...base, "--output", "json"]);
    assertEquals(shown.code, 0);
    const view = JSON.parse(shown.out);
    assertEquals(view.operation.state, "unresolved");
    const open = view.attempts.filter((a: { unaccounted: boolean }) => a.unaccounted);
    assertEquals(open.map((a: { phase: string }) => a.phase), ["reboot"]);
    const rebootId = open[0].id as string;
    assertEquals(view.facts.cordon.cordonedByOperation, true);
    const acct = view.decisions.find((d: { kind: string }) => d.kind === "account");
    assertEquals([acct.attempt, acct.possible], [rebootId, false]);
    assert(/possible after the settle floor at/.test(acct.why), acct.why);
    const text = await recover(base);
    assert(text.out.includes("UNACCOUNTED") && text.out.includes(rebootId), text.out);

    // Classification before accounting is refused: a lost reboot is not accounted by a match.
    const early = await recover([...base, "--classify", ...cluster, ...policy, "-o", "json"]);
    assertEquals([early.code, JSON.parse(early.out).reason], [1, "RecoveryAttemptsUnaccounted"]);

    const account = [...base, "--account", rebootId, ...admin, ...cluster, "--evidence", "node "];
    const short = await recover([...account, "--settle-floor-seconds", "10", "-o", "json"]);
    assertEquals([short.code, JSON.parse(short.out).reason], [1, "SettleFloorTooShort"]);
    // First try: takes the operation over and reads the node, which starts the floor: refused.
    const before = await recover([...account, "-o", "json"]);
    assertEquals(before.code, 1);
    const refusal = JSON.parse(before.out);
    assertEquals(refusal.reason, "RecoveryDecisionRefused");
    assert(/settle floor ends at/.test(refusal.message), refusal.message);
    const mid = (await w.journal.showOperation(opId))!;
    assertEquals(mid.attempts.find((a) => a.id === rebootId)!.accountedBy, null);
    assertEquals([mid.operation.owner, mid.operation.ownerGen], ["recover:carol@example.com", 2]);

    await w.control.advance(31_000);
    const after = await recover([...account, "-o", "json"]);
    assertEquals(after.code, 0, after.out + after.err);
    const d1 = (await w.journal.showOperation(opId))!;
    assertEquals(d1.attempts.find((a) => a.id === rebootId)!.accountedBy, "recovery");
    assertEquals(d1.operation.ownerGen, 2, "no second takeover: it would restart the floor");
    assertEquals(d1.operation.state, "unresolved");

    // The plan binds uncordonOwnedCordon and the cordon is the operation's own: lifted.
    const unc = await recover([...base, "--uncordon", ...admin, "--kubeconfig", cluster[1]!]);
    assertEquals(unc.code, 0, unc.out + unc.err);
    assertEquals((await kubeNode(w, "worker-2")).spec.unschedulable, undefined);
    // Through the one mutation path: intent, recovery attempt, response, then the fact.
    const trail = (await w.journal.showOperation(opId))!.events.map((e) => e.kind)
      .filter((k) => k === "phase-intent" || k.startsWith("recovery-") || k === "phase-fact");
    assertEquals(trail.slice(-4), [
      "phase-intent",
      "recovery-attempt",
      "recovery-response",
      "phase-fact",
    ]);

    // Someone cordons another node: the post-gate fails there alone, which says nothing about
    // worker-2, so the classification is refused (never `failed`) and nothing is recorded.
    const kubectl = (...args: string[]) =>
      new Deno.Command(KUBECTL, { args: ["--kubeconfig", cluster[1]!, ...args] }).output();
    assert((await kubectl("cordon", "worker-1")).success);
    const elsewhere = await recover([...base, "--classify", ...cluster, ...policy, "-o", "json"]);
    assertEquals([elsewhere.code, JSON.parse(elsewhere.out).reason], [
      1,
      "RecoveryEvidenceInconclusive",
    ]);
    assert(/NodeCordoned/.test(JSON.parse(elsewhere.out).message), elsewhere.out);
    assertEquals((await w.journal.getOperation(opId))?.state, "unresolved");
    assert((await kubectl("uncordon", "worker-1")).success);

    const done = await recover([...base, "--classify", ...cluster, ...policy, "-o", "json"]);
    assertEquals(done.code, 0, done.out + done.err);
    assertEquals(JSON.parse(done.out).state, "completed");
    assertEquals((await w.journal.getOperation(opId))?.state, "completed");
    // Resume is not rerun: one install and one reboot in all.
    const m = (await w.control.stats()).talos.mutating;
    const count = (suffix: string) =>
      Object.entries(m).filter(([k]) => k.endsWith(suffix)).reduce((a, [, v]) => a + v, 0);
    assertEquals([count("LifecycleService/Upgrade"), count("MachineService/Reboot")], [1, 1]);
  } finally {
    await w.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cairn recover --uncordon refuses a cordon whose ownership another field manager took", async () => {
  const { w, url, opId, dir } = await lostReboot();
  try {
    const patch = await new Deno.Command(KUBECTL, {
      args: [
        "--kubeconfig",
        w.twin.kubeconfigPath!,
        "patch",
        "node",
        "worker-2",
        "--type",
        "merge",
        "-p",
        '{"spec":{"unschedulable":true}}',
        "--field-manager",
        "ops-alice",
      ],
    }).output();
    assert(patch.success, new TextDecoder().decode(patch.stderr));
    const r = await recover([
      opId,
      "--journal",
      url,
      "--twin-control",
      w.twin.controlUrl,
      "--uncordon",
      "--actor",
      "carol@example.com",
      "--kubeconfig",
      w.twin.kubeconfigPath!,
      "-o",
      "json",
    ]);
    assertEquals(r.code, 1);
    const body = JSON.parse(r.out);
    assertEquals(body.reason, "RecoveryUncordonRefused");
    assert(/CordonOwnershipChanged/.test(body.message), body.message);
    assertEquals((await kubeNode(w, "worker-2")).spec.unschedulable, true);
    const d = (await w.journal.showOperation(opId))!;
    assertEquals(d.phases.filter((p) => p.phase === "uncordon"), [], "nothing recorded or sent");
    assertEquals([d.operation.owner, d.operation.ownerGen], ["ctl_test", 1], "not taken over");
    const usage = await recover([opId, "--journal", url, "--uncordon", "--classify"]);
    assertEquals(usage.code, 2);
  } finally {
    await w.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
