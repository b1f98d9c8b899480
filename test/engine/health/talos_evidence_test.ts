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
