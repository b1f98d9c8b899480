/**
 * Notifications from a rollout on the in-process twin: a hold before a commitment and an
 * operation that became unresolved are told once each, with the plan, the node and the reason.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import type { Notification } from "../../../src/domain/ops/notification.ts";
import { notifyingObserver } from "../../../src/engine/operating/notify.ts";
import { startInprocWorld } from "../../_helpers/inproc_world.ts";

const IMAGE = "quay.io/ceph/ceph:v19@sha256:" + "a".repeat(64);

Deno.test("a hold and an unresolved operation are notified once each, naming node and reason", async () => {
  const w = await startInprocWorld({
    nodes: ["worker-1"],
    editPlan: (t) =>
      t + `  windows:
    - start: "0 12 * * *"
      durationMinutes: 120
      timeZone: UTC
  hooks:
    - name: ceph-noout
      namespace: rook-ceph
      image: ${IMAGE}
      timeoutSeconds: 300
      pre:
        command: [ceph, osd, set, noout]
`,
    faults: [{ kind: "job-fails", point: "kube.job", target: "ceph-noout" }],
  });
  try {
    const sent: Notification[] = [];
    const notifier = {
      notify: (n: Notification) => {
        sent.push(n);
        return Promise.resolve();
      },
    };
    const plan = { name: "talos-v1.14.2", digest: w.bound.digest, cluster: "home-ops" };
    const out = await w.run({ observer: notifyingObserver(notifier, plan, w.twin.clock) });
    assertEquals(out.nodes.map((n) => n.reason), ["HookFailed"]);
    assertEquals(sent.map((n) => [n.event, n.node, n.reason ?? null]), [
      ["hold", "worker-1", "MaintenanceWindowClosed"],
      ["unresolved", "worker-1", null],
    ]);
    assertEquals(sent[0]!.atMs, Date.parse("2026-12-01T09:00:00Z"));
    assertEquals(sent.every((n) => n.plan === "talos-v1.14.2" && n.cluster === "home-ops"), true);
  } finally {
    await w.close();
  }
});
