/**
 * A freeze and a breakpoint hold the next commitment on the in-process twin: nothing is committed
 * while the cluster is frozen or while the breakpoint's continuation is missing or not signed by
 * the trust root; the rollout resumes once the freeze is lifted or the signed continuation
 * arrives through the repository.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { workingTreeBoundFiles } from "../../../src/adapters/repo/bound_file_reader.ts";
import {
  CONTINUATION_NAMESPACE,
  continuationPath,
  continuationText,
} from "../../../src/domain/ops/continuation.ts";
import { parseAllowedSigners } from "../../../src/domain/trust/allowed_signers.ts";
import type { BoundFileSource } from "../../../src/ports/dispatch.ts";
import { startInprocWorld } from "../../_helpers/inproc_world.ts";
import { inprocReport } from "../../_helpers/inproc_report.ts";
import { nativeSigner } from "../../_helpers/native_ssh_signer.ts";
import { onlyNodes, ROOT } from "../../_helpers/twin_world.ts";
import { approvedPlan, APPROVER, committed, planInput } from "../../_helpers/journal_world.ts";
import { openJournal } from "../../../src/adapters/journal/libsql_journal.ts";
import { counterIds } from "../../_helpers/journal_world.ts";
import { T0 } from "../../_helpers/journal_world.ts";

Deno.test("a freeze holds the next commitment until an approver unfreezes; the hold names who froze and why", async () => {
  const w = await startInprocWorld({ nodes: ["worker-1"] });
  try {
    await w.journal.setClusterFrozen({
      cluster: "home-ops",
      frozen: true,
      reason: "storage migration tonight",
      actor: { identity: "alice@example.com", role: "author" },
      nowMs: w.twin.clock.now(),
    });
    const unfrozen: Promise<void>[] = [];
    const out = await w.run({
      observer: {
        onHold: (h) => {
          assertEquals(h.reason, "ClusterFrozen");
          // Nothing was committed while frozen.
          unfrozen.push(
            w.operations().then((ops) => {
              assertEquals(ops.length, 0);
              return w.journal.setClusterFrozen({
                cluster: "home-ops",
                frozen: false,
                reason: "",
                actor: { identity: "bob@example.com", role: "approver" },
                nowMs: w.twin.clock.now(),
              });
            }),
          );
        },
      },
    });
    await Promise.all(unfrozen);
    assertEquals(out.state, "completed");
    const events = (await w.journal.planHistory(w.bound.digest))!.rolloutEvents!;
    assertEquals(events.map((e) => [e.kind, e.detail["reason"] ?? e.detail["after"]]), [
      ["hold", "ClusterFrozen"],
      ["resume", "ClusterFrozen"],
    ]);
    assertEquals(events[0]!.detail["why"], "storage migration tonight");
    assert(String(events[0]!.detail["frozenBy"]).startsWith("alice@example.com"));
    const [op] = await w.operations();
    assert(op!.operation.createdAtMs >= events[1]!.atMs);
    const report = await inprocReport(w, out);
    assert(
      /\*\*hold\*\* \| `ClusterFrozen` \| cluster home-ops frozen by alice/.test(report),
      report,
    );
  } finally {
    await w.close();
  }
});

Deno.test("the commitment transaction itself refuses on a frozen cluster (comparison 6), whoever asks", async () => {
  const j = await openJournal({ url: ":memory:", ids: counterIds("f"), nowMs: T0 });
  try {
    const plan = await approvedPlan(j, planInput());
    await j.setClusterFrozen({
      cluster: "home-ops",
      frozen: true,
      reason: "change freeze",
      actor: APPROVER,
      nowMs: T0 + 1500,
    });
    let refused: string | undefined;
    try {
      await committed(j, { plan: plan.digest });
    } catch (e) {
      refused = (e as Error).message;
    }
    assertEquals(refused, "commit refused: gate-frozen cluster home-ops is frozen: change freeze");
    await assertRejects(() =>
      j.setClusterFrozen({
        cluster: "home-ops",
        frozen: false,
        reason: "",
        actor: { identity: "alice@example.com", role: "author" },
        nowMs: T0 + 1600,
      })
    );
    await j.setClusterFrozen({
      cluster: "home-ops",
      frozen: false,
      reason: "",
      actor: APPROVER,
      nowMs: T0 + 1700,
    });
    const ok = await committed(j, { plan: plan.digest });
    assertEquals(ok.op.state, "committed");
  } finally {
    await j.close();
  }
});

async function assertRejects(f: () => Promise<unknown>): Promise<void> {
  try {
    await f();
  } catch {
    return;
  }
  throw new Error("expected a rejection");
}

const BREAKPOINT = "  breakpoints:\n    - name: after-first\n      after: worker-1\n";

/** Two workers with a breakpoint after the first, signed by alice and bob, files from `repo`. */
async function breakpointWorld(repo: Map<string, Uint8Array>) {
  const alice = await nativeSigner("alice@example.com");
  const bob = await nativeSigner("bob@example.com");
  const planFile = `${ROOT}/plans/talos-v1.14.2.yaml`;
  const text = onlyNodes("worker-1", "worker-2")(await Deno.readTextFile(planFile)) + BREAKPOINT;
  const bytes = new TextEncoder().encode(text);
  const signatures = (await alice.sign(bytes)) + (await bob.sign(bytes));
  const real = workingTreeBoundFiles(planFile);
  const files: BoundFileSource = {
    describe: () => "main at test",
    read: (path) => {
      const b = repo.get(path);
      return b ? Promise.resolve({ status: "read", bytes: b }) : real.read(path);
    },
  };
  const signers = [alice, bob].map((p) => p.allowedSignersLine).join("\n");
  const w = await startInprocWorld({
    nodes: ["worker-1", "worker-2"],
    editPlan: (t) => t + BREAKPOINT,
    authority: {
      files,
      signatures,
      trust: { load: () => Promise.resolve(parseAllowedSigners(signers, "allowed_signers")) },
    },
  });
  return { w, bob };
}

Deno.test("a breakpoint holds until a continuation for this digest, signed by the trust root, arrives through git", async () => {
  const mallory = await nativeSigner("mallory@example.com");
  const repo = new Map<string, Uint8Array>();
  const { w, bob } = await breakpointWorld(repo);
  try {
    const path = continuationPath("talos-v1.14.2", "after-first");
    const text = new TextEncoder().encode(continuationText(w.bound.digest, "after-first"));
    const byMallory = await mallory.sign(text, CONTINUATION_NAMESPACE);
    const byBob = await bob.sign(text, CONTINUATION_NAMESPACE);
    const asPlanSignature = await bob.sign(text); // the plan namespace: not a continuation
    const holds: string[] = [];
    const out = await w.run({
      observer: {
        onHold: (h) => {
          holds.push(h.reason);
          const enc = new TextEncoder();
          // The continuation arrives in steps: untrusted signer, wrong namespace, then bob's.
          if (holds.length === 1) {
            repo.set(path, text);
            repo.set(`${path}.sig`, enc.encode(byMallory));
          } else if (holds.length === 2) repo.set(`${path}.sig`, enc.encode(asPlanSignature));
          else repo.set(`${path}.sig`, enc.encode(byBob));
        },
      },
    });
    assertEquals(out.state, "completed");
    assertEquals(holds, ["BreakpointHeld", "ContinuationInvalid", "ContinuationInvalid"]);
    const ops = (await w.operations()).map((o) => o.operation)
      .sort((a, b) => a.createdAtMs - b.createdAtMs);
    const events = (await w.journal.planHistory(w.bound.digest))!.rolloutEvents!;
    assertEquals(events.map((e) => [e.kind, e.node]), [
      ["hold", "worker-2"],
      ["hold", "worker-2"],
      ["hold", "worker-2"],
      ["resume", "worker-2"],
    ]);
    assertEquals(ops.map((o) => o.machine), ["worker-1", "worker-2"]);
    assert(ops[1]!.createdAtMs >= events[3]!.atMs, "worker-2 committed only after the resume");
  } finally {
    await w.close();
  }
});

Deno.test("a continuation of another plan digest does not open the breakpoint", async () => {
  const repo = new Map<string, Uint8Array>();
  const { w, bob } = await breakpointWorld(repo);
  try {
    const path = continuationPath("talos-v1.14.2", "after-first");
    const stale = new TextEncoder().encode(continuationText("0".repeat(64), "after-first"));
    repo.set(path, stale);
    repo.set(
      `${path}.sig`,
      new TextEncoder().encode(await bob.sign(stale, CONTINUATION_NAMESPACE)),
    );
    const stop = new AbortController();
    const holds: string[] = [];
    const out = await w.run({
      signal: stop.signal,
      observer: {
        onHold: (h) => {
          holds.push(`${h.reason}: ${h.detail}`);
          stop.abort();
        },
      },
    });
    assertEquals(out.state, "stopped");
    assertEquals(holds, [
      "ContinuationInvalid: breakpoint after-first after worker-1: continuations/talos-v1.14.2/after-first does not continue plan " +
      `${w.bound.digest.slice(0, 12)} at after-first`,
    ]);
    assertEquals((await w.operations()).map((o) => o.operation.machine), ["worker-1"]);
  } finally {
    await w.close();
  }
});
