// The twin's server-side printing: cells as the apiserver's printers compute them.
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import {
  humanDuration,
  nodeRoles,
  nodeStatus,
  podStatus,
  toTable,
  wantsTable,
} from "../../../src/sim/kube/table.ts";
import type { Obj, ResourceType } from "../../../src/sim/kube/store.ts";

const PODS: ResourceType = {
  group: "",
  version: "v1",
  kind: "Pod",
  plural: "pods",
  namespaced: true,
};

const S = 1000, M = 60 * S, H = 60 * M, D = 24 * H;

Deno.test("ages read as kubectl's short durations, and a future time is <invalid>", () => {
  const cases: [number, string][] = [
    [-5 * S, "<invalid>"],
    [-500, "0s"],
    [0, "0s"],
    [119 * S, "119s"],
    [2 * M, "2m"],
    [3 * M + 20 * S, "3m20s"],
    [12 * M + 30 * S, "12m"],
    [179 * M, "179m"],
    [5 * H + 30 * M, "5h30m"],
    [6 * H, "6h"],
    [30 * H, "30h"],
    [2 * D + 4 * H, "2d4h"],
    [3 * D, "3d"],
    [400 * D, "400d"],
    [3 * 365 * D + 20 * D, "3y20d"],
    [9 * 365 * D, "9y"],
  ];
  for (const [ms, text] of cases) assertEquals([ms, humanDuration(ms)], [ms, text]);
});

const node = (
  labels: Record<string, string>,
  ready: string | undefined,
  cordoned = false,
): Obj => ({
  apiVersion: "v1",
  kind: "Node",
  metadata: { name: "n", labels },
  spec: cordoned ? { unschedulable: true } : {},
  status: { conditions: ready === undefined ? [] : [{ type: "Ready", status: ready }] },
});

Deno.test("node STATUS follows the Ready condition and adds SchedulingDisabled when cordoned", () => {
  assertEquals(nodeStatus(node({}, "True")), "Ready");
  assertEquals(nodeStatus(node({}, "True", true)), "Ready,SchedulingDisabled");
  assertEquals(nodeStatus(node({}, "False", true)), "NotReady,SchedulingDisabled");
  assertEquals(nodeStatus(node({}, "Unknown")), "Unknown");
  assertEquals(nodeStatus(node({}, undefined)), "Unknown");
});

Deno.test("node ROLES come from node-role.kubernetes.io/* keys, <none> without any", () => {
  assertEquals(nodeRoles(node({}, "True")), "<none>");
  assertEquals(
    nodeRoles(node({
      "node-role.kubernetes.io/worker": "",
      "node-role.kubernetes.io/control-plane": "",
      "kubernetes.io/role": "edge",
      "node-role.kubernetes.io/": "",
    }, "True")),
    "control-plane,edge,worker",
  );
});

const pod = (status: Record<string, unknown>, deleting = false): Obj => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: {
    name: "p",
    ...(deleting ? { deletionTimestamp: "2026-12-01T00:00:00Z" } : {}),
  },
  spec: { containers: [{ name: "a" }, { name: "b" }] },
  status,
});

Deno.test("pod STATUS: phase, container reasons, Terminating while deleted", () => {
  assertEquals(podStatus(pod({ phase: "Running" })), "Running");
  assertEquals(podStatus(pod({ phase: "Running" }, true)), "Terminating");
  assertEquals(
    podStatus(pod({
      phase: "Pending",
      containerStatuses: [{ state: { waiting: { reason: "CrashLoopBackOff" } } }],
    })),
    "CrashLoopBackOff",
  );
  assertEquals(
    podStatus(
      pod({ phase: "Failed", containerStatuses: [{ state: { terminated: { exitCode: 2 } } }] }),
    ),
    "ExitCode:2",
  );
  assertEquals(podStatus(pod({ phase: "Failed", reason: "Evicted" })), "Evicted");
});

Deno.test("a pod row: READY n/m counts ready containers, RESTARTS sums them, NODE and IP or <none>", () => {
  const now = Date.parse("2026-12-01T10:00:00Z");
  const p: Obj = {
    ...pod({
      phase: "Running",
      podIP: "10.244.1.7",
      containerStatuses: [
        {
          name: "a",
          ready: true,
          restartCount: 2,
          state: { running: {} },
          lastState: { terminated: { finishedAt: "2026-12-01T09:55:00Z" } },
        },
        { name: "b", ready: false, restartCount: 1, state: { running: {} } },
      ],
    }),
    metadata: { name: "p", namespace: "ns", creationTimestamp: "2026-12-01T09:00:00Z" },
  };
  p.spec = { ...(p.spec as object), nodeName: "worker-1" };
  const table = toTable(PODS, [p], now, "Metadata") as {
    columnDefinitions: { name: string; priority: number }[];
    rows: { cells: unknown[]; object: { kind: string; metadata: { namespace: string } } }[];
  };
  assertEquals(
    table.columnDefinitions.map((c) => [c.name, c.priority]),
    [
      ["Name", 0],
      ["Ready", 0],
      ["Status", 0],
      ["Restarts", 0],
      ["Age", 0],
      ["IP", 1],
      ["Node", 1],
      ["Nominated Node", 1],
      ["Readiness Gates", 1],
    ],
  );
  assertEquals(table.rows[0]!.cells, [
    "p",
    "1/2",
    "Running",
    "3 (5m ago)",
    "60m",
    "10.244.1.7",
    "worker-1",
    "<none>",
    "<none>",
  ]);
  // kubectl reads the namespace column (-A) from the row's partial object metadata.
  assertEquals(table.rows[0]!.object.kind, "PartialObjectMetadata");
  assertEquals(table.rows[0]!.object.metadata.namespace, "ns");
});

Deno.test("only a meta.k8s.io/v1 Table in Accept asks for a Table", () => {
  assertEquals(
    wantsTable(
      "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json",
    ),
    true,
  );
  assertEquals(wantsTable("application/json"), false);
  assertEquals(wantsTable("application/json;as=Table;v=v1beta1;g=meta.k8s.io"), false);
  assertEquals(wantsTable(undefined), false);
});
