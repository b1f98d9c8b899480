/**
 * Guards of the operating layer (docs/operating.md) pinned one by one: an expected-noise silence is
 * a lease written one lease ahead and renewed only by the controller that still owns the step
 * (owner, generation and epoch), never revived once found expired, and expired by id after a
 * takeover even when the deposed controller recorded it released; node hooks run once, bounded,
 * each post hook exactly when its pre hook was attempted (a post-only hook only after a step that
 * succeeded), every post hook even after one fails, and a post hook not observed complete holds;
 * the cluster's default windows govern a plan without its own, a plan's own replace them.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { parsePlan } from "../../../src/domain/plan/parse.ts";
import type { OperatedPlan } from "../../../src/domain/plan/schema.ts";
import type { StepState } from "../../../src/engine/executor/deps.ts";
import { jobEnd, JOBS, watchJob } from "../../../src/engine/operating/hooks.ts";
import {
  openNoiseLease,
  openSilences,
  releaseOrphanSilences,
  RENEW_EVERY_MS,
  silenceLeaseMs,
} from "../../../src/engine/operating/silences.ts";
import type { Alertmanager, SilenceRecord, SilenceSpec } from "../../../src/ports/alertmanager.ts";
import type { RolloutEventEntry } from "../../../src/ports/journal_history.ts";
import type { Journal } from "../../../src/ports/journal.ts";
import type { Kube } from "../../../src/ports/kube.ts";
import { type InprocWorld, startInprocWorld } from "../../_helpers/inproc_world.ts";
import { ROOT } from "../../_helpers/twin_world.ts";

// ---- expected-noise silences ---------------------------------------------------------------

const T0 = Date.parse("2026-12-01T09:00:00Z");
const NOISE = `  expectedNoise:
    - name: ceph-osd-down
      nodeLabel: hostname
      matchers:
        - { name: alertname, value: CephOSDDownHigh }
`;

/** The shipped TalosUpgrade plan with one expected-noise entry. */
async function noisyPlan(): Promise<OperatedPlan> {
  const path = join(ROOT, "plans/talos-v1.14.2.yaml");
  const text = (await Deno.readTextFile(path)) + NOISE;
  const parsed = await parsePlan(new TextEncoder().encode(text), { file: path });
  return parsed.plan as OperatedPlan;
}

/** An Alertmanager in memory that behaves as the port says (an update of an ended id answers a new one). */
class MemoryAlertmanager implements Alertmanager {
  readonly held = new Map<string, SilenceRecord>();
  readonly calls: string[] = [];
  #next = 0;
  describe() {
    return "memory";
  }
  firingAlerts() {
    return Promise.resolve([]);
  }
  #store(spec: SilenceSpec): string {
    const id = `sil-${++this.#next}`;
    this.held.set(id, { ...spec, id, state: "active" });
    return id;
  }
  createSilence(spec: SilenceSpec) {
    const id = this.#store(spec);
    this.calls.push(`create ${id}`);
    return Promise.resolve(id);
  }
  updateSilence(id: string, spec: SilenceSpec) {
    this.calls.push(`update ${id}`);
    const cur = this.held.get(id);
    if (!cur || cur.state === "expired") return Promise.resolve(this.#store(spec));
    this.held.set(id, { ...cur, endsAtMs: spec.endsAtMs });
    return Promise.resolve(id);
  }
  getSilence(id: string) {
    const s = this.held.get(id);
    return Promise.resolve(s ? { ...s } : undefined);
  }
  expireSilence(id: string) {
    this.calls.push(`expire ${id}`);
    const s = this.held.get(id);
    if (s) this.held.set(id, { ...s, state: "expired" });
    return Promise.resolve();
  }
  silences() {
    return Promise.resolve([...this.held.values()]);
  }
  live(): string[] {
    return [...this.held.values()].filter((s) => s.state !== "expired").map((s) => s.id);
  }
}

interface Owner {
  owner: string;
  ownerGen: number;
  ownerEpoch: string;
}

/** A committed step of `plan` on worker-1 whose operation the journal shows owned by `op`. */
function stepOf(plan: OperatedPlan, op: Owner) {
  let now = T0;
  const events: Array<{ kind: string; detail: Record<string, unknown> }> = [];
  const journal = {
    getOperation: () => Promise.resolve({ id: "op-1", ...op }),
    recordRolloutEvent: (e: { kind: string; detail: Record<string, unknown> }) => {
      events.push({ kind: e.kind, detail: e.detail });
      return Promise.resolve();
    },
  };
  const s = {
    deps: {
      clock: {
        now: () => now,
        sleep: (ms: number) => {
          now += ms;
          return Promise.resolve();
        },
      },
      journal,
      owner: "ctl_a",
      callTimeoutMs: (ms: number) => ms,
    },
    bound: { digest: "plan-digest", plan },
    node: "worker-1",
    address: "10.5.0.6",
    step: "worker-1/0",
    operationId: "op-1",
    token: { owner: "ctl_a", gen: 1, epoch: "epoch-1" },
  } as unknown as StepState<OperatedPlan>;
  return {
    s,
    events,
    advance: (ms: number) => {
      now += ms;
    },
    now: () => now,
  };
}

const OURS: Owner = { owner: "ctl_a", ownerGen: 1, ownerEpoch: "epoch-1" };

Deno.test("a noise silence is written one lease ahead (two renewals plus the longest call) and renewed in place while the step is ours", async () => {
  const plan = await noisyPlan();
  // The shipped plan's longest transport deadline is the install's 600 s: 20 minutes in all.
  assertEquals(silenceLeaseMs(plan), 2 * RENEW_EVERY_MS + 600_000);
  assertEquals(silenceLeaseMs(plan), 20 * 60_000);
  const am = new MemoryAlertmanager();
  const w = stepOf(plan, OURS);
  const lease = await openNoiseLease(w.s, am);
  const [id] = am.live();
  const created = am.held.get(id!)!;
  assertEquals(created.endsAtMs - T0, silenceLeaseMs(plan));
  assertEquals(
    created.matchers.map((m) => `${m.name}=${m.value}`),
    ["alertname=CephOSDDownHigh", "hostname=worker-1"],
  );
  w.advance(RENEW_EVERY_MS);
  await lease.renewIfDue();
  assertEquals(am.calls, [`create ${id}`, `update ${id}`]);
  assertEquals(am.held.get(id!)!.endsAtMs, w.now() + silenceLeaseMs(plan));
  await lease.close();
  assertEquals(am.live(), []);
});

for (
  const [what, op] of [
    ["another controller", { ...OURS, owner: "ctl_b" }],
    ["a later generation of the same controller", { ...OURS, ownerGen: 2 }],
    ["the same controller in another journal epoch", { ...OURS, ownerEpoch: "epoch-2" }],
  ] as const
) {
  Deno.test(`a step whose operation ${what} now owns never renews its silence`, async () => {
    const plan = await noisyPlan();
    const am = new MemoryAlertmanager();
    const w = stepOf(plan, OURS);
    const lease = await openNoiseLease(w.s, am);
    const [id] = am.live();
    const endsAt = am.held.get(id!)!.endsAtMs;
    // The journal now shows the operation taken over.
    (w.s.deps.journal as unknown as { getOperation: () => Promise<unknown> }).getOperation = () =>
      Promise.resolve({ id: "op-1", ...op });
    w.advance(RENEW_EVERY_MS);
    await lease.renewIfDue();
    w.advance(RENEW_EVERY_MS);
    await lease.renewIfDue();
    assertEquals(am.calls, [`create ${id}`], "no update by a controller that no longer owns it");
    assertEquals(am.held.get(id!)!.endsAtMs, endsAt);
    assertEquals(
      w.events.filter((e) => e.kind === "silence-renewed").map((e) => e.detail["reason"]),
      ["SilenceLeaseReleased"],
    );
  });
}

Deno.test("a silence found expired is never renewed back to life: the step goes on unsilenced", async () => {
  const plan = await noisyPlan();
  const am = new MemoryAlertmanager();
  const w = stepOf(plan, OURS);
  const lease = await openNoiseLease(w.s, am);
  const [id] = am.live();
  // A person expires it mid-step.
  await am.expireSilence(id!);
  am.calls.length = 0;
  w.advance(RENEW_EVERY_MS);
  await lease.renewIfDue();
  w.advance(RENEW_EVERY_MS);
  await lease.renewIfDue();
  await lease.close();
  assertEquals(am.calls, [], "nothing sent for an expired silence: no update, no new silence");
  assertEquals(am.held.size, 1);
  const lapsed = w.events.filter((e) => e.kind === "silence-expired");
  assertEquals(lapsed.map((e) => [e.detail["reason"], e.detail["silence"]]), [
    ["SilenceLapsed", id],
  ]);
});

function event(
  seq: number,
  kind: string,
  detail: Record<string, unknown>,
): RolloutEventEntry {
  return { seq, atMs: T0 + seq, node: "worker-1", kind, actor: "controller ctl_a", detail };
}

Deno.test("a deposed controller's released record leaves the silence open: its successor expires it by id, creating none", async () => {
  const base = { noise: "ceph-osd-down", silence: "sil-7", operation: "op-1" };
  const events = [
    event(1, "silence-created", base),
    event(2, "silence-renewed", base),
    event(3, "silence-renewed", { ...base, reason: "SilenceLeaseReleased" }),
  ];
  assertEquals(openSilences(events), [{
    node: "worker-1",
    noise: "ceph-osd-down",
    id: "sil-7",
    operation: "op-1",
  }]);
  // Once expired (however: confirmed, lapsed, or not confirmed) it is no longer open.
  assertEquals(
    openSilences([...events, event(4, "silence-expired", { ...base, reason: "SilenceLapsed" })]),
    [],
  );
  const am = new MemoryAlertmanager();
  am.held.set("sil-7", {
    id: "sil-7",
    state: "active",
    matchers: [],
    startsAtMs: T0,
    endsAtMs: T0 + 20 * 60_000,
    createdBy: "cairn ctl_a",
    comment: "",
  });
  const recorded: Array<{ kind: string; detail: Record<string, unknown> }> = [];
  const journal = {
    planHistory: () => Promise.resolve({ rolloutEvents: events }),
    recordRolloutEvent: (e: { kind: string; detail: Record<string, unknown> }) => {
      recorded.push({ kind: e.kind, detail: e.detail });
      return Promise.resolve();
    },
  } as unknown as Journal;
  await releaseOrphanSilences(
    {
      journal,
      clock: { now: () => T0, sleep: () => Promise.resolve() },
      owner: "ctl_b",
      callTimeoutMs: (ms) => ms,
    },
    "plan-digest",
    am,
  );
  assertEquals(am.calls, ["expire sil-7"]);
  assertEquals(am.live(), []);
  assertEquals(recorded.map((e) => [e.kind, e.detail["reason"], e.detail["silence"]]), [
    ["silence-expired", "SilenceLeaseReleased", "sil-7"],
  ]);
});

// ---- node hooks ----------------------------------------------------------------------------

const IMAGE = "quay.io/ceph/ceph:v19@sha256:" + "a".repeat(64);

function hook(name: string, o: { pre?: string; post?: string }): string {
  return `    - name: ${name}
      namespace: rook-ceph
      image: ${IMAGE}
      timeoutSeconds: 300
` + (o.pre ? `      pre:\n        command: [${o.pre}]\n` : "") +
    (o.post ? `      post:\n        command: [${o.post}]\n` : "");
}

const hooks = (...h: string[]) => (t: string) => t + "  hooks:\n" + h.join("");

function hookFacts(phases: ReadonlyArray<{ phase: string; kind: string; detail: string }>) {
  return phases.filter((p) => p.kind === "fact" && p.phase.endsWith("-hook"))
    .map((p) => JSON.parse(p.detail) as Record<string, unknown>)
    .map((d) => `${d["stage"]} ${d["hook"]} ${d["outcome"]}`);
}

async function jobsOf(w: InprocWorld) {
  return (await w.twin.kube.listObjects(JOBS, { namespace: "rook-ceph" })).items;
}

Deno.test("a failed pre hook's post hook still runs; a later hook whose pre never ran gets no post hook", async () => {
  const w = await startInprocWorld({
    nodes: ["worker-1"],
    editPlan: hooks(
      hook("noout", { pre: "ceph, osd, set, noout", post: "ceph, osd, unset, noout" }),
      hook("norebalance", {
        pre: "ceph, osd, set, norebalance",
        post: "ceph, osd, unset, norebalance",
      }),
    ),
    faults: [{ kind: "job-fails", point: "kube.job", target: "noout" }],
  });
  try {
    const out = await w.run();
    assertEquals(out.nodes.map((n) => [n.node, n.state, n.reason]), [
      ["worker-1", "unresolved", "HookFailed"],
    ]);
    const [op] = await w.operations();
    assertEquals(hookFacts(op!.phases), ["pre noout failed", "post noout succeeded"]);
    const jobs = await jobsOf(w);
    assertEquals(
      jobs.map((j) => j.metadata?.labels?.["cairn.dev/hook"]).sort(),
      ["noout", "noout"],
      "norebalance was never set, so it is never unset",
    );
  } finally {
    await w.close();
  }
});

Deno.test("a post-only hook runs after a step that succeeded, never after one that did not", async () => {
  const plan = hooks(hook("notify-done", { post: "echo, done" }));
  const ok = await startInprocWorld({ nodes: ["worker-1"], editPlan: plan });
  try {
    assertEquals((await ok.run()).state, "completed");
    const [op] = await ok.operations();
    assertEquals(hookFacts(op!.phases), ["post notify-done succeeded"]);
  } finally {
    await ok.close();
  }
  const failing = await startInprocWorld({
    nodes: ["worker-1"],
    editPlan: plan,
    faults: [{
      kind: "install-fails",
      point: "talos.LifecycleService.Upgrade",
      target: "worker-1",
    }],
  });
  try {
    const out = await failing.run();
    assert(out.nodes[0]!.state !== "completed", JSON.stringify(out.nodes));
    const [op] = await failing.operations();
    assertEquals(hookFacts(op!.phases), []);
    assertEquals(await jobsOf(failing), []);
  } finally {
    await failing.close();
  }
});

Deno.test("every post hook runs even when an earlier one does not finish; the unfinished one holds the step", async () => {
  const w = await startInprocWorld({
    nodes: ["worker-1"],
    editPlan: hooks(
      hook("noout", { pre: "ceph, osd, set, noout", post: "ceph, osd, unset, noout" }),
      hook("notify-done", { post: "echo, done" }),
    ),
    faults: [{ kind: "job-hangs", point: "kube.job", target: "notify-done" }],
  });
  try {
    const out = await w.run();
    assertEquals(out.nodes.map((n) => [n.node, n.state, n.reason]), [
      ["worker-1", "unresolved", "HookUnresolved"],
    ]);
    const [op] = await w.operations();
    // Reverse plan order: notify-done's post first (never finishes), then noout's.
    assertEquals(hookFacts(op!.phases), [
      "pre noout succeeded",
      "post notify-done unresolved",
      "post noout succeeded",
    ]);
  } finally {
    await w.close();
  }
});

Deno.test("a hook Job runs once and is ended by Kubernetes at its timeout: no retry, no restart", async () => {
  const w = await startInprocWorld({
    nodes: ["worker-1"],
    editPlan: hooks(
      hook("noout", { pre: "ceph, osd, set, noout", post: "ceph, osd, unset, noout" }),
    ),
  });
  try {
    assertEquals((await w.run()).state, "completed");
    const jobs = await jobsOf(w);
    assertEquals(jobs.length, 2);
    for (const j of jobs) {
      const spec = j.spec as {
        backoffLimit: number;
        activeDeadlineSeconds: number;
        template: { spec: { restartPolicy: string } };
      };
      assertEquals(
        [spec.backoffLimit, spec.activeDeadlineSeconds, spec.template.spec.restartPolicy],
        [0, 300, "Never"],
      );
    }
  } finally {
    await w.close();
  }
});

Deno.test("a hook Job that cannot be read is unresolved at its deadline, never succeeded", async () => {
  let now = T0;
  let reads = 0;
  const ended = await watchJob({
    clock: {
      now: () => now,
      sleep: (ms: number) => {
        now += ms;
        return Promise.resolve();
      },
    },
    kube: {
      getObject: () => {
        reads++;
        return Promise.reject(new Error("connection refused"));
      },
    } as unknown as Kube,
    callTimeoutMs: (ms) => ms,
    pollIntervalMs: 5_000,
  }, { namespace: "rook-ceph", name: "cairn-noout-pre-0123456789", timeoutSeconds: 60 });
  assertEquals(ended.outcome, "unresolved");
  assert(ended.detail.includes("connection refused"), ended.detail);
  assert(reads > 1, "read again until the deadline");
});

Deno.test("only a Complete condition with status True is a succeeded hook Job", () => {
  const job = (conditions: Array<Record<string, string>>) => ({ status: { conditions } });
  assertEquals(jobEnd(job([{ type: "Complete", status: "False" }])), undefined);
  assertEquals(jobEnd(job([{ type: "Complete", status: "Unknown" }])), undefined);
  assertEquals(jobEnd(job([{ type: "Complete", status: "True" }]))?.outcome, "succeeded");
  assertEquals(
    jobEnd(job([{ type: "Complete", status: "False" }, { type: "Failed", status: "True" }]))
      ?.outcome,
    "failed",
  );
});

// ---- windows -------------------------------------------------------------------------------

// The twin starts at 2026-12-01T09:00Z. 22:30 in Berlin (CET) is 21:30Z.
const EVENING = { start: "30 22 * * *", durationMinutes: 240, timeZone: "Europe/Berlin" };
const MORNING = { start: "0 9 * * *", durationMinutes: 600, timeZone: "UTC" };

Deno.test("the cluster's default windows hold a plan that declares none", async () => {
  const w = await startInprocWorld({
    nodes: ["worker-1"],
    operating: { defaultWindows: [EVENING] },
  });
  try {
    assertEquals((await w.run()).state, "completed");
    const [op] = await w.operations();
    assertEquals(
      new Date(op!.operation.createdAtMs).toISOString().slice(0, 16),
      "2026-12-01T21:30",
    );
    const events = (await w.journal.planHistory(w.bound.digest))!.rolloutEvents!;
    assertEquals(events.map((e) => [e.kind, e.detail["reason"] ?? null]), [
      ["hold", "MaintenanceWindowClosed"],
      ["resume", null],
    ]);
  } finally {
    await w.close();
  }
});

Deno.test("a plan's own windows replace the cluster's defaults, even when a default window is open", async () => {
  const w = await startInprocWorld({
    nodes: ["worker-1"],
    editPlan: (t) =>
      t + `  windows:
    - start: "${EVENING.start}"
      durationMinutes: ${EVENING.durationMinutes}
      timeZone: ${EVENING.timeZone}
`,
    operating: { defaultWindows: [MORNING] },
  });
  try {
    assertEquals((await w.run()).state, "completed");
    const [op] = await w.operations();
    assertEquals(
      new Date(op!.operation.createdAtMs).toISOString().slice(0, 16),
      "2026-12-01T21:30",
    );
  } finally {
    await w.close();
  }
});
