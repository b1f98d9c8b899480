/**
 * The loop's ComponentUpgrade execution (engine/reconcile/component_execution.ts) in one process:
 * a run the stop signal cuts short decides nothing (no end journaled, the next run observes
 * again); an observed end is journaled once (a second replica's is refused, and it reports the
 * first) and a later run reports it without reading the cluster again.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { openJournal } from "../../../src/adapters/journal/libsql_journal.ts";
import type { CairnError } from "../../../src/domain/errors.ts";
import { buildStatus, statusText } from "../../../src/cli/status.ts";
import { sha256Hex } from "../../../src/domain/plan/digest.ts";
import { parsePlan } from "../../../src/domain/plan/parse.ts";
import type { ComponentUpgradePlan } from "../../../src/domain/plan/schema.ts";
import { parseAllowedSigners } from "../../../src/domain/trust/allowed_signers.ts";
import { bindComponentUpgrade } from "../../../src/engine/component/run_component.ts";
import {
  COMPONENT_END_EVENT,
  executeComponent,
} from "../../../src/engine/reconcile/component_execution.ts";
import type { BoundFileSource } from "../../../src/ports/dispatch.ts";
import { startInprocTwin } from "../../../src/sim/inproc/cluster.ts";
import { homeOps } from "../../_helpers/inproc_world.ts";
import { counterIds } from "../../_helpers/journal_world.ts";
import { nativeSigner } from "../../_helpers/native_ssh_signer.ts";
import { ROOT } from "../../_helpers/twin_world.ts";

const POLICY = "policies/home-ops.yaml";
const MERGE = "ef".repeat(20);
const ADMIN = { identity: "test-admin", role: "recovery-admin" as const };

Deno.test("a stopped observation journals no end and the next run observes; an end is journaled once and reported after", async () => {
  const twin = startInprocTwin({ description: await homeOps() });
  const journal = await openJournal({
    url: ":memory:",
    ids: counterIds("e"),
    nowMs: twin.clock.now(),
  });
  try {
    const policy = await Deno.readFile(join(ROOT, POLICY));
    // Rook v1.20.2 → v1.21.0 (no change bound: nothing to tie, the release decides).
    const text = [
      "apiVersion: cairn.dev/v1alpha1",
      "kind: ComponentUpgrade",
      "metadata: {name: rook-ceph-v1.21.0, cluster: home-ops, author: alice@example.com, " +
      "expires: 2026-12-20T00:00:00Z}",
      "spec:",
      `  healthPolicy: {path: ${POLICY}, sha256: ${await sha256Hex(policy)}}`,
      "  retry: {maxAttempts: 3}",
      "  component: rook-ceph",
      "  flux: {kind: HelmRelease, namespace: rook-ceph, name: rook-ceph}",
      "  from: v1.20.2",
      "  to: v1.21.0",
      "  phases: {deadlines: {rollout: {transportSeconds: 60, verificationSeconds: 300}}}",
      "",
    ].join("\n");
    const bytes = new TextEncoder().encode(text);
    const people = [await nativeSigner("alice@example.com"), await nativeSigner("bob@example.com")];
    let signatures = "";
    for (const p of people) signatures += await p.sign(bytes);
    const allowed = people.map((p) => p.allowedSignersLine).join("\n") + "\n";
    const trust = { load: () => Promise.resolve(parseAllowedSigners(allowed, "allowed_signers")) };
    const parsed = await parsePlan(bytes, { file: "plans/rook-ceph-v1.21.0.yaml" });
    const { plan, digest } = await bindComponentUpgrade(journal, {
      parsed,
      bytes,
      signatures,
      firstSeenCommit: MERGE,
      approver: { identity: "bob@example.com", role: "approver" },
      nowMs: twin.clock.now(),
    });
    const files: BoundFileSource = {
      describe: () => "test repository",
      read: (p) =>
        Promise.resolve(
          p === POLICY
            ? { status: "read", bytes: policy }
            : { status: "missing", detail: `${p} does not exist` },
        ),
    };
    const settings = {
      journal,
      cluster: { kube: twin.kube, talos: twin.talos },
      clock: twin.clock,
      timeoutClock: twin.timeoutClock,
      owner: "ctl_unit",
      callTimeoutMs: (ms: number) => ms,
      pollIntervalMs: 10_000,
      roundIntervalMs: 30_000,
    };
    const bound = { plan: plan as ComponentUpgradePlan, digest, bytes, signatures, merge: MERGE };
    const auth = { trust, requiredApprovals: 1 };
    const ends = async () =>
      (await journal.planHistory(digest))!.rolloutEvents?.filter((e) =>
        e.kind === COMPONENT_END_EVENT
      ).length ?? 0;

    const stopped = new AbortController();
    stopped.abort();
    const first = await executeComponent(settings, auth, bound, { signal: stopped.signal, files });
    assertEquals(first.state, "stopped");
    assertEquals(await ends(), 0, "a stopped observation decides nothing");
    // `cairn status` says so: bound, no end yet.
    assertEquals((await buildStatus(journal)).components?.map((c) => [c.planName, c.end]), [
      ["rook-ceph-v1.21.0", "not ended"],
    ]);

    // Flux delivers the bump; the next run observes it.
    twin.gitops.merge({
      commit: MERGE,
      ociTags: { "rook-ceph/rook-ceph": "v1.21.0", "rook-ceph/rook-ceph-cluster": "v1.21.0" },
    });

    /**
     * A run by a process whose epoch a journal restore superseded right after its first `act`
     * (recorded, then the restore): its reason, and the kinds journaled after the restore.
     */
    const staleRun = async (act: "recordDispatchCheck" | "recordHealthRound") => {
      const started = (await journal.installation()).epoch;
      let exit: number | undefined;
      const restoring = new Proxy(journal, {
        get(target, p) {
          if (p === act) {
            return async (input: never) => {
              const id = await (journal[act] as (i: never) => Promise<unknown>)(input);
              if (exit === undefined) {
                await journal.enterRecoveryMode(ADMIN, "journal restored", twin.clock.now());
                await journal.exitRecoveryMode(ADMIN, twin.clock.now());
                exit = (await journal.events()).at(-1)!.seq;
              }
              return id;
            };
          }
          const v = Reflect.get(target, p, target);
          return typeof v === "function" ? v.bind(target) : v;
        },
      });
      const reason = await executeComponent(
        { ...settings, journal: restoring, epoch: started },
        auth,
        bound,
        { signal: new AbortController().signal, files },
      ).then(() => "recorded", (e) => (e as CairnError).reason);
      assert(exit !== undefined, `the epoch moved after the stale run's ${act}`);
      const since = (await journal.events()).filter((e) => e.seq > exit!).map((e) => e.kind);
      return { reason, since };
    };
    // Superseded right after its dispatch check: its after-merge round carries the epoch it
    // started in and is refused; nothing more is journaled.
    const fencedRound = await staleRun("recordDispatchCheck");
    assertEquals(fencedRound, { reason: "EpochSuperseded", since: [] });
    // Superseded right after its after-merge round: it records no end (its fact carries the epoch
    // it started in and is refused), and the next run decides.
    const fencedEnd = await staleRun("recordHealthRound");
    assertEquals(fencedEnd, { reason: "EpochSuperseded", since: [] });
    assertEquals(await ends(), 0, "a superseded epoch's end is not journaled");

    // Two replicas of the current epoch observe the delivery at once (no operation token stands
    // between them): the first end journaled is the plan's; the other replica's is refused
    // (ComponentEndRecorded) and it reports the journaled end, never its own reading beside it.
    const [second, replica] = await Promise.all([
      executeComponent(settings, auth, bound, { signal: new AbortController().signal, files }),
      executeComponent({ ...settings, owner: "ctl_replica" }, auth, bound, {
        signal: new AbortController().signal,
        files,
      }),
    ]);
    assertEquals(await ends(), 1, "one end for the plan, whichever replica observed first");
    const journaled = (await journal.planHistory(digest))!.rolloutEvents!
      .find((e) => e.kind === COMPONENT_END_EVENT)!.detail["outcome"];
    const plain = (x: unknown) => JSON.parse(JSON.stringify(x));
    assertEquals([plain(second.component), plain(replica.component)], [journaled, journaled]);
    assertEquals(replica.state, second.state);
    assertEquals(
      [second.state, second.component?.end],
      ["completed", "completed"],
      JSON.stringify({
        c: second.component?.delivery?.checks,
        r: second.component?.rounds.map((x) => x.outcome.message),
      }),
    );
    assertEquals(await ends(), 1);
    const status = await buildStatus(journal);
    assertEquals(status.components?.map((c) => [c.end, c.detail]), [["completed", undefined]]);
    assert(statusText(status).includes("component upgrades (1):"), statusText(status));
    const reads = twin.kube.stats.total;

    const third = await executeComponent(settings, auth, bound, {
      signal: new AbortController().signal,
      files,
    });
    assertEquals(
      third.component,
      second.component ? JSON.parse(JSON.stringify(second.component)) : undefined,
    );
    assertEquals(await ends(), 1, "the end is journaled once");
    assertEquals(
      twin.kube.stats.total,
      reads,
      "the journaled end is reported, the cluster not read",
    );
    assert((await journal.verifyChain()).ok);
  } finally {
    twin.stop();
    await journal.close();
  }
});
