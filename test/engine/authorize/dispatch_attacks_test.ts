/**
 * The attacks of issue 11 against the executor, on the in-process twin: each is refused by the
 * dispatch check before the commitment it would have authorised — nothing is sent for that node
 * (the twin's mutation counters do not move), the refusal is on the journal's hash-chained timeline
 * with its reason code, and the outcome names it.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { parseAllowedSigners } from "../../../src/domain/trust/allowed_signers.ts";
import type { BoundFileSource, InstallerResolver } from "../../../src/ports/dispatch.ts";
import type { Journal } from "../../../src/ports/journal.ts";
import { workingTreeBoundFiles } from "../../../src/adapters/repo/bound_file_reader.ts";
import { type InprocWorld, startInprocWorld } from "../../_helpers/inproc_world.ts";
import { type NativeSigner, nativeSigner } from "../../_helpers/native_ssh_signer.ts";
import { onlyNodes, ROOT } from "../../_helpers/twin_world.ts";

/** The Talos methods that change a machine (the twin's stats name them without `/machine.`). */
const MUTATING = new Set([
  "ImageService/Pull",
  "LifecycleService/Upgrade",
  "MachineService/Upgrade",
  "MachineService/Reboot",
  "MachineService/ApplyConfiguration",
]);

interface DispatchEvent {
  readonly node: string | null;
  readonly verdict: string;
  readonly refusals: { reason: string; message: string }[];
  readonly installers: { digest: string | null; pinned: string; verdict: string }[];
}

async function dispatchEvents(journal: Journal): Promise<DispatchEvent[]> {
  return (await journal.events()).filter((e) => e.kind === "dispatch-check")
    .map((e) => JSON.parse(e.body) as DispatchEvent);
}

function mutations(w: InprocWorld): number {
  return w.twin.talos.stats.totalMutating + w.twin.kube.stats.mutating;
}

/** Signers and a trust root whose text a test can change while the plan runs. */
async function people() {
  const alice = await nativeSigner("alice@example.com");
  const bob = await nativeSigner("bob@example.com");
  const text = { value: [alice, bob].map((p) => p.allowedSignersLine).join("\n") + "\n" };
  return {
    alice,
    bob,
    text,
    trust: { load: () => Promise.resolve(parseAllowedSigners(text.value, "allowed_signers")) },
  };
}

async function signedBy(bytes: Uint8Array, who: readonly NativeSigner[]): Promise<string> {
  return (await Promise.all(who.map((p) => p.sign(bytes)))).join("");
}

const PLAN_FILE = `${ROOT}plans/talos-v1.14.2.yaml`;

Deno.test("a plan for another cluster is refused before any mutation (ClusterIdentityMismatch)", async () => {
  const w = await startInprocWorld({
    nodes: ["worker-1"],
    editPlan: (t) => t.replace("cluster: home-ops", "cluster: prod-eu"),
  });
  try {
    const out = await w.run();
    assertEquals(out.state, "refused");
    assertEquals(out.nodes[0]?.state, "not-committed");
    const ev = (await dispatchEvents(w.journal))[0]!;
    const reasons = ev.refusals.map((r) => r.reason);
    assert(reasons.includes("ClusterIdentityMismatch"), reasons.join());
    assert(
      ev.refusals.some((r) => r.message.includes("prod-eu") && r.message.includes("home-ops")),
    );
    assertEquals(mutations(w), 0, "nothing was sent");
    assertEquals(await w.journal.listOperations(), [], "no operation was committed");
    assert((await w.journal.verifyChain()).ok);
  } finally {
    await w.close();
  }
});

Deno.test("removing a signer while the plan runs stops it before the next node's commitment", async () => {
  const p = await people();
  // Filled once the world exists; the trust root's loader reads it later.
  const seen: { journal?: Journal } = {};
  // The trust root loses bob once the first node has completed (an operator edits the file).
  const trust = {
    load: async () => {
      const ops = seen.journal ? await seen.journal.listOperations() : [];
      if (ops.some((o) => o.state === "completed")) {
        p.text.value = p.alice.allowedSignersLine + "\n";
      }
      return await p.trust.load();
    },
  };
  // Sign exactly the bytes the world runs (the example plan cut to two workers).
  const text = onlyNodes("worker-1", "worker-2")(await Deno.readTextFile(PLAN_FILE));
  const signatures = await signedBy(new TextEncoder().encode(text), [p.alice, p.bob]);
  const w = await startInprocWorld({
    nodes: ["worker-1", "worker-2"],
    authority: { trust, signatures },
  });
  seen.journal = w.journal;
  try {
    const out = await w.run();
    assertEquals(out.nodes.map((n) => [n.node, n.state]), [
      ["worker-1", "completed"],
      ["worker-2", "not-committed"],
    ]);
    assertEquals(out.state, "refused");
    const reason = out.nodes[1]!.reason;
    assert(["SignerNotTrusted", "ApprovalsInsufficient"].includes(reason), reason);
    const ops = await w.journal.listOperations();
    assertEquals(ops.map((o) => o.machine), ["worker-1"], "worker-2 was never committed");
    const sent = Object.keys(w.twin.talos.stats.byNode["worker-2"] ?? {});
    assertEquals(sent.filter((m) => MUTATING.has(m)), [], "only reads reached worker-2");
    const events = await dispatchEvents(w.journal);
    assertEquals(events.at(-1)?.node, "worker-2");
    assertEquals(events.at(-1)?.verdict, "refused");
  } finally {
    await w.close();
  }
});

Deno.test("a bound file changed after approval stops the rollout before the next node", async () => {
  const real = workingTreeBoundFiles(PLAN_FILE);
  // Filled once the world exists; the bound-file reader reads it later.
  const seen: { journal?: Journal } = {};
  // The health policy on disk changes once worker-1 completed (someone edits it after approval).
  const files: BoundFileSource = {
    describe: () => "working tree, edited mid-run",
    read: async (path) => {
      const r = await real.read(path);
      const done = seen.journal &&
        (await seen.journal.listOperations()).some((o) => o.state === "completed");
      if (!done || path !== "policies/home-ops.yaml" || r.status !== "read") return r;
      const edited = new TextDecoder().decode(r.bytes) + "# loosened after approval\n";
      return { status: "read", bytes: new TextEncoder().encode(edited) };
    },
  };
  const w = await startInprocWorld({ nodes: ["worker-1", "worker-2"], authority: { files } });
  seen.journal = w.journal;
  try {
    const out = await w.run();
    assertEquals(out.nodes.map((n) => [n.node, n.state, n.reason]), [
      ["worker-1", "completed", "CompletionObserved"],
      ["worker-2", "not-committed", "HealthPolicyDigestMismatch"],
    ]);
    assertEquals(out.state, "refused");
    assertEquals((await w.journal.listOperations()).length, 1);
  } finally {
    await w.close();
  }
});

Deno.test("a plan that expired before it was dispatched is refused (PlanExpired)", async () => {
  // Approved earlier, run after its expiry: the twin's clock starts at 09:00.
  const w = await startInprocWorld({
    nodes: ["worker-1"],
    editPlan: (t) => t.replace(/^ {2}expires: \S+$/m, "  expires: 2026-12-01T08:59:00Z"),
  });
  try {
    const out = await w.run();
    assertEquals([out.state, out.nodes[0]!.state], ["refused", "not-committed"]);
    assert(out.nodes[0]!.reason === "PlanExpired", out.nodes[0]!.reason);
    assertEquals(mutations(w), 0);
    assertEquals(await w.journal.listOperations(), []);
  } finally {
    await w.close();
  }
});

Deno.test("an installer that resolves to another digest is refused before commitment", async () => {
  const other = `sha256:${"2".repeat(64)}`;
  const installers: InstallerResolver = {
    describe: () => "test registry",
    resolve: (reference, platform) =>
      Promise.resolve({
        ok: true,
        value: {
          reference,
          platform: `${platform.os}/${platform.architecture}`,
          digest: other,
          registry: "test",
        },
      }),
  };
  const w = await startInprocWorld({ nodes: ["worker-1"], authority: { installers } });
  try {
    const out = await w.run();
    assertEquals([out.state, out.nodes[0]!.reason], ["refused", "InstallerDigestMismatch"]);
    assertEquals(mutations(w), 0);
    const pinned = w.bound.plan.spec.hops[0]!.installer.image.split("@")[1];
    const ev = (await dispatchEvents(w.journal))[0]!;
    assertEquals(ev.installers.map((i) => [i.digest, i.pinned, i.verdict]), [
      [other, pinned, "fail"],
    ]);
  } finally {
    await w.close();
  }
});

Deno.test("an unreachable registry holds the rollout; it never passes", async () => {
  const installers: InstallerResolver = {
    describe: () => "test registry",
    resolve: () =>
      Promise.resolve({
        ok: false,
        failure: { reason: "RegistryUnreadable", message: "connection refused" },
      }),
  };
  const w = await startInprocWorld({ nodes: ["worker-1"], authority: { installers } });
  try {
    const out = await w.run();
    assertEquals([out.state, out.nodes[0]!.reason], ["halted", "RegistryUnreadable"]);
    assertEquals(mutations(w), 0);
  } finally {
    await w.close();
  }
});
