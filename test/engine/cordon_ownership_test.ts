import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { decideUncordon, unschedulableOwners } from "../../src/engine/cordon_ownership.ts";
import type { KubeObject } from "../../src/ports/kube.ts";

function node(unschedulable: boolean, managers: string[], annotations = {}): KubeObject {
  return {
    metadata: {
      name: "worker-1",
      resourceVersion: "42",
      annotations,
      managedFields: managers.map((m) => ({
        manager: m,
        operation: "Update",
        fieldsV1: { "f:spec": { "f:unschedulable": {} } },
      })),
    },
    spec: unschedulable ? { unschedulable: true } : {},
  };
}

const owned = {
  priorUnschedulable: false,
  cordonedByOperation: true,
  resourceVersionAfterCordon: "40",
};

Deno.test("decideUncordon() allows undoing only the operation's own cordon with unchanged ownership", () => {
  assertEquals(decideUncordon(owned, node(true, ["cairn"])), {
    kind: "uncordon",
    resourceVersion: "42",
  });
});

Deno.test("decideUncordon() never uncordons a node that was cordoned before the operation", () => {
  const d = decideUncordon(
    { ...owned, priorUnschedulable: true, cordonedByOperation: false },
    node(true, ["cairn"]),
  );
  assertEquals(d.kind === "leave" && d.reason, "NotOwnedCordon");
  // A record that also says the operation wrote a cordon (a write over an existing cordon, or a
  // record taken over from another controller) still leaves it: the prior cordon is a human's.
  const both = decideUncordon(
    { ...owned, priorUnschedulable: true, cordonedByOperation: true },
    node(true, ["cairn"]),
  );
  assertEquals(both.kind === "leave" && both.reason, "NotOwnedCordon");
});

Deno.test("decideUncordon() leaves the node when another manager took over spec.unschedulable", () => {
  const d = decideUncordon(owned, node(true, ["kubectl-cordon"]));
  assertEquals(d.kind === "leave" && d.reason, "CordonOwnershipChanged");
});

Deno.test("decideUncordon() treats missing ownership evidence as unknown, not as ours", () => {
  const d = decideUncordon(owned, node(true, []));
  assertEquals(d.kind === "leave" && d.reason, "CordonOwnershipUnknown");
});

Deno.test("decideUncordon() leaves Talos-annotated cordons and already-schedulable nodes alone", () => {
  const t = decideUncordon(owned, node(true, ["cairn"], { "talos.dev/cordoned": "true" }));
  assertEquals(t.kind === "leave" && t.reason, "TalosOwnedCordon");
  const s = decideUncordon(owned, node(false, ["cairn"]));
  assertEquals(s.kind === "leave" && s.reason, "AlreadySchedulable");
});

Deno.test("unschedulableOwners() ignores status-subresource entries", () => {
  const n: KubeObject = {
    metadata: {
      managedFields: [
        {
          manager: "kubelet",
          subresource: "status",
          fieldsV1: { "f:spec": { "f:unschedulable": {} } },
        },
        { manager: "cairn", fieldsV1: { "f:spec": { "f:unschedulable": {} } } },
      ],
    },
  };
  assertEquals(unschedulableOwners(n), ["cairn"]);
});
