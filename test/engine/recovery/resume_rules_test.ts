/**
 * The recovery rules of a resume after a takeover (docs/recovery.md#resume-after-a-takeover), one
 * test per classification: what a fresh reading establishes about an earlier owner's cordon or
 * drain, what it cannot, how the operation became unresolved, and how far the step got. Then
 * `resumeTakenOver` on fakes: a reading that fails classifies nothing and records nothing.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { CAIRN_FIELD_MANAGER } from "../../../src/engine/cordon_ownership.ts";
import { resumeTakenOver } from "../../../src/engine/recovery/resume.ts";
import {
  intentOf,
  readCordon,
  readDrain,
  ResumeCursor,
  unresolvedBy,
} from "../../../src/engine/recovery/resume_rules.ts";
import type { StepState } from "../../../src/engine/executor/deps.ts";
import type { AttemptRecord, JournalEvent, OperationDetail } from "../../../src/ports/journal.ts";
import type { KubeObject, KubePod } from "../../../src/ports/kube.ts";

function node(rv: string, unschedulable: boolean, managers: string[], talosMark = false) {
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name: "worker-1",
      resourceVersion: rv,
      ...(talosMark ? { annotations: { "talos.dev/cordoned": "true" } } : {}),
      managedFields: managers.map((manager) => ({
        manager,
        operation: "Apply",
        fieldsV1: { "f:spec": { "f:unschedulable": {} } },
      })),
    },
    spec: unschedulable ? { unschedulable: true } : {},
  } as unknown as KubeObject;
}

Deno.test("cordon: still at the precondition's resourceVersion, the patch may still land: undecided", () => {
  const v = readCordon("att_1", "41", node("41", false, []));
  assertEquals(v.kind, "undecided");
});

Deno.test("cordon: moved on and unschedulable, owned by cairn alone: in effect", () => {
  const v = readCordon("att_1", "41", node("42", true, [CAIRN_FIELD_MANAGER]));
  assert(v.kind === "read");
  assertEquals(v.reading.outcome, "observed-in-effect");
  assertEquals(v.reading.evidence["resourceVersion"], "42");
});

Deno.test("cordon: moved on and schedulable, the precondition can never match again: absent", () => {
  const v = readCordon("att_1", "41", node("57", false, []));
  assert(v.kind === "read");
  assertEquals(v.reading.outcome, "observed-absent");
});

Deno.test("cordon: unschedulable but owned by someone else, by nobody, or marked by Talos: undecided", () => {
  assertEquals(readCordon("a", "41", node("42", true, ["kubectl"])).kind, "undecided");
  assertEquals(
    readCordon("a", "41", node("42", true, [CAIRN_FIELD_MANAGER, "kubectl"])).kind,
    "undecided",
  );
  assertEquals(readCordon("a", "41", node("42", true, [])).kind, "undecided");
  assertEquals(
    readCordon("a", "41", node("42", true, [CAIRN_FIELD_MANAGER], true)).kind,
    "undecided",
  );
});

Deno.test("cordon: no precondition recorded, or no node: undecided", () => {
  assertEquals(
    readCordon("a", undefined, node("42", true, [CAIRN_FIELD_MANAGER])).kind,
    "undecided",
  );
  assertEquals(readCordon("a", "41", undefined).kind, "undecided");
});

function pod(namespace: string, name: string, terminating = false): KubePod {
  return {
    namespace,
    name,
    ...(terminating ? { deletionTimestamp: "2026-11-01T00:00:00Z" } : {}),
  } as unknown as KubePod;
}

Deno.test("drain: a planned pod still on the node (terminating counts) makes it incomplete", () => {
  const v = readDrain("att_4", ["db/pg-1", "web/api-0"], [
    pod("web", "api-0", true),
    pod("kube-system", "cilium-x"),
  ]);
  assert(v.kind === "read");
  assertEquals([v.reading.outcome, v.reading.evidence["remaining"]], ["observed-incomplete", [
    "web/api-0",
  ]]);
});

Deno.test("drain: none of the planned pods on the node: in effect", () => {
  const v = readDrain("att_4", ["db/pg-1", "web/api-0"], [pod("kube-system", "cilium-x")]);
  assert(v.kind === "read");
  assertEquals(v.reading.outcome, "observed-in-effect");
});

Deno.test("drain: no planned pods recorded: undecided", () => {
  assertEquals(readDrain("att_4", undefined, []).kind, "undecided");
});

function ev(kind: string, actor: string, body: Record<string, unknown>): JournalEvent {
  return {
    seq: 0,
    atMs: 0,
    kind,
    machine: "worker-1",
    revision: 0,
    operationId: "op_1",
    epoch: "ep_1",
    actor,
    body: JSON.stringify(body),
    prevHash: "",
    hash: "",
  };
}

Deno.test("how it became unresolved: a controller's takeover in flight, its executor's halt, a person", () => {
  const takeover = ev("ownership", "ctl_b (controller)", {
    stateBefore: "sending",
    stateAfter: "unresolved",
  });
  const halt = ev("transition", "ctl_a/1@ep_1", { from: "sending", to: "unresolved" });
  const again = ev("ownership", "ctl_c (controller)", {
    stateBefore: "unresolved",
    stateAfter: "unresolved",
  });
  const admin = ev("ownership", "carol (recovery-admin)", {
    stateBefore: "unresolved",
    stateAfter: "unresolved",
  });
  assertEquals(unresolvedBy([takeover]), "takeover");
  // A second takeover of the same (still taken-over) operation keeps it resumable.
  assertEquals(unresolvedBy([takeover, again]), "takeover");
  assertEquals(unresolvedBy([halt]), "halt");
  assertEquals(unresolvedBy([halt, again]), "halt");
  assertEquals(unresolvedBy([takeover, admin]), "human");
  assertEquals(unresolvedBy([takeover, admin, again]), "human");
  assertEquals(unresolvedBy([]), "none");
});

function attempt(
  number: number,
  phase: AttemptRecord["phase"],
  cls: AttemptRecord["responseClass"],
  at: number,
): AttemptRecord {
  return {
    id: `att_${number}`,
    operationId: "op_1",
    number,
    phase,
    requestDigest: "",
    route: "",
    ownerGen: 1,
    ownerEpoch: "ep_1",
    evidenceId: "",
    sentAtMs: at,
    transportDeadlineMs: at + 1,
    verificationDeadlineMs: at + 2,
    classRevision: null,
    responseClass: cls,
    accountedBy: cls === null ? null : "response",
    accountedRevision: null,
  } as AttemptRecord;
}

function detail(
  attempts: AttemptRecord[],
  phases: Array<[AttemptRecord["phase"], "intent" | "fact", number, Record<string, unknown>]>,
): OperationDetail {
  return {
    operation: {} as OperationDetail["operation"],
    attempts,
    phases: phases.map(([phase, kind, atMs, d]) => ({
      phase,
      kind,
      atMs,
      detail: JSON.stringify(d),
    })),
    events: [],
  };
}

Deno.test("the cursor: accepted and in-effect phases are done; an incomplete drain and an absent cordon are not", () => {
  const d = detail(
    [
      attempt(1, "pull", "accepted", 10),
      attempt(2, "install", "accepted", 20),
      attempt(3, "cordon", "observed-absent", 30),
      attempt(4, "drain", "observed-incomplete", 40),
    ],
    [],
  );
  const c = new ResumeCursor(d);
  assertEquals(["pull", "install", "cordon", "drain", "reboot"].map((p) => c.take(p as "pull")), [
    true,
    true,
    false,
    false,
    false,
  ]);
  assertEquals(c.take("pull"), false, "each done phase is taken once");
});

Deno.test("the cursor: a node already cordoned before the operation has a fact and no attempt; the reboot's boot id comes from its intent", () => {
  const d = detail(
    [attempt(1, "pull", "accepted", 10), attempt(2, "reboot", "accepted", 50)],
    [
      ["cordon", "fact", 30, { priorUnschedulable: true, cordonedByOperation: false }],
      ["reboot", "intent", 49, { rpc: "MachineService.Reboot", bootIdBefore: "boot-a" }],
    ],
  );
  const c = new ResumeCursor(d);
  assert(c.take("cordon"));
  assertEquals(c.cordon?.cordonedByOperation, false);
  assertEquals(c.rebootBootIds, ["boot-a"]);
});

Deno.test("intentOf: the latest intent of the phase at or before the attempt, never an eviction's", () => {
  const a = attempt(5, "drain", null, 100);
  const d = detail([a], [
    ["drain", "intent", 40, { verb: "evict", pods: ["a/x"] }], // an earlier drain never admitted
    ["drain", "intent", 100, { verb: "evict", pods: ["a/x", "b/y"] }],
    ["drain", "intent", 100, { evict: "a/x" }],
  ]);
  assertEquals(intentOf(d, a)?.["pods"], ["a/x", "b/y"]);
  // An intent recorded after the attempt (a later drain that was never admitted) is not its request.
  const later = detail([a], [
    ["drain", "intent", 100, { verb: "evict", pods: ["a/x", "b/y"] }],
    ["drain", "intent", 180, { verb: "evict", pods: ["c/z"] }],
  ]);
  assertEquals(intentOf(later, a)?.["pods"], ["a/x", "b/y"]);
});

Deno.test("resumeTakenOver: a pod list that cannot be read classifies nothing and records nothing", async () => {
  const drain = attempt(4, "drain", null, 40);
  const calls: string[] = [];
  const d: OperationDetail = {
    ...detail([attempt(1, "pull", "accepted", 10), drain], [["drain", "intent", 40, {
      pods: ["a/x"],
    }]]),
    events: [
      ev("ownership", "ctl_b (controller)", { stateBefore: "sending", stateAfter: "unresolved" }),
    ],
  };
  const s = {
    deps: {
      journal: {
        showOperation: () => Promise.resolve(d),
        resumeAfterTakeover: () => {
          calls.push("resume");
          return Promise.reject(new Error("must not be called"));
        },
      },
      kube: { listPods: () => Promise.reject(new Error("KubeTimeout: deadline passed")) },
      clock: { now: () => 0 },
      callTimeoutMs: (ms: number) => ms,
    },
    bound: { plan: { spec: { phases: { deadlines: { drain: { transportSeconds: 30 } } } } } },
    node: "worker-1",
    operationId: "op_1",
    token: { owner: "ctl_b", gen: 2, epoch: "ep_1" },
  } as unknown as StepState;
  const r = await resumeTakenOver(s);
  assert(!r.ok);
  assertEquals(r.reason, "ResumeUndecided");
  assert(r.detail.includes("could not be read"), r.detail);
  assertEquals(calls, []);
});

Deno.test("resumeTakenOver: an install in flight is never read as done", async () => {
  const d: OperationDetail = {
    ...detail([attempt(1, "pull", "accepted", 10), attempt(2, "install", null, 20)], []),
    events: [
      ev("ownership", "ctl_b (controller)", { stateBefore: "sending", stateAfter: "unresolved" }),
    ],
  };
  const s = {
    deps: { journal: { showOperation: () => Promise.resolve(d) } },
    bound: { plan: { spec: {} } },
    operationId: "op_1",
  } as unknown as StepState;
  const r = await resumeTakenOver(s);
  assert(!r.ok);
  assertEquals(r.reason, "ResumeUndecided");
  assert(r.detail.includes("install"), r.detail);
});
