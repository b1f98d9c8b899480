/**
 * One round prepares its bindings concurrently, so two readers of one node (etcd and services on
 * a control plane) read it at once. Each must keep what the other wrote: the first round of a
 * process (a step resumed after a takeover starts with verification rounds, no gate round before)
 * lost the etcd status to the services read that finished after it, and verification stayed
 * unreadable until its deadline.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import type { Binding } from "../../../src/domain/health/policy_schema.ts";
import { TalosEvidence } from "../../../src/engine/health/talos_evidence.ts";

function binding(reader: "talos-etcd" | "talos-services"): Binding {
  return {
    name: reader,
    reader,
    timeoutSeconds: 10,
    selection: { names: ["cp-1"] },
  } as unknown as Binding;
}

Deno.test("two readers of one node at once: the etcd status and the services both stay", async () => {
  let servicesDone!: () => void;
  const servicesGate = new Promise<void>((r) => servicesDone = r);
  const talos = {
    version: () => Promise.resolve({ tag: "v1.14.2" }),
    etcdMembers: () => Promise.resolve([{ id: "1", hostname: "cp-1", isLearner: false }]),
    etcdStatus: () => Promise.resolve({ memberId: "1", errors: [] }),
    // The services answer comes last, after the etcd read wrote its part.
    serviceList: async () => {
      await servicesGate;
      return [{ id: "etcd", state: "Running", healthy: true, healthUnknown: false }];
    },
  };
  const clock = { now: () => 0, sleep: () => Promise.resolve() };
  const ev = new TalosEvidence(talos as never, clock, () => []);
  const signal = new AbortController().signal;
  const services = ev.prepare(binding("talos-services"), 10_000, signal);
  await ev.prepare(binding("talos-etcd"), 10_000, signal);
  servicesDone();
  await services;
  const cp1 = ev.view().node("cp-1");
  assert(cp1?.etcd, "the etcd status is kept");
  assertEquals(cp1.etcd.memberId, "1");
  assertEquals(cp1.services?.map((s) => s.id), ["etcd"]);
});

Deno.test("a node-versions binding reads each node's Talos version only when it judges one (talosVersion)", async () => {
  const asked: string[] = [];
  const talos = {
    version: (node: string) => (asked.push(node), Promise.resolve({ tag: "v1.14.2" })),
    etcdMembers: () => Promise.resolve([]),
    etcdStatus: () => Promise.resolve({ memberId: "", errors: [] }),
    serviceList: () => Promise.resolve([]),
  };
  const clock = { now: () => 0, sleep: () => Promise.resolve() };
  const versions = (predicate: Record<string, string>) =>
    ({
      name: "node-versions",
      reader: "node-versions",
      timeoutSeconds: 10,
      selection: { names: ["cp-1", "worker-1"] },
      predicate,
    }) as unknown as Binding;
  const signal = new AbortController().signal;
  // Schematic and kubelet are judged on the Node object: no Talos read of any node.
  const unjudged = new TalosEvidence(talos as never, clock, () => []);
  await unjudged.prepare(versions({ kubeletVersion: "v1.35.2" }), 10_000, signal);
  assertEquals(asked, []);
  assertEquals(unjudged.view().node("cp-1"), undefined);
  // The Talos version is judged: every selected node's is read.
  const judged = new TalosEvidence(talos as never, clock, () => []);
  await judged.prepare(versions({ talosVersion: "v1.14.2" }), 10_000, signal);
  assertEquals(asked.sort(), ["cp-1", "worker-1"]);
  assertEquals(judged.view().node("worker-1")?.version, "v1.14.2");
});
