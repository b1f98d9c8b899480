/**
 * The Talos contract: what cairn relies on from apid, as executable cases. Each case gets a
 * fresh environment (clients per role, control over virtual time and faults). The runner
 * (`talos_contract_test.ts`) binds them to the twin running under Node, reached through cairn's
 * own grpc-js client over mutual TLS; `test/sim/inproc/talos_contract_inproc_test.ts` binds them
 * to the in-process Talos port over the same model.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import type { Talos, TalosCallOptions } from "../../src/ports/talos.ts";
import type { Fault } from "../../src/sim/faults.ts";
import type { TalosNodeSnapshot, TalosStatsSnapshot } from "../../src/sim/twin_control.ts";
import { CairnError } from "../../src/domain/errors.ts";

/** What the cases drive on the simulator side: the socket twin's `TwinControl`, or the twin in process. */
export interface TalosContractControl {
  advance(ms: number): Promise<unknown>;
  arm(fault: Fault): Promise<unknown>;
  node(name: string): Promise<TalosNodeSnapshot>;
  stats(): Promise<{ readonly talos: TalosStatsSnapshot }>;
  waitForCalls(method: string, atLeast: number): Promise<unknown>;
}

export interface TalosContractEnv {
  readonly admin: Talos;
  readonly operator: Talos;
  readonly reader: Talos;
  readonly control: TalosContractControl;
}

export const INSTALLER =
  "factory.talos.dev/metal-installer/30684e2ddd0b9d61be817efe9f71ba839dc0e7610d8bc111fe7f70c6b29db08b:v1.14.2@sha256:ab24c2b78ee916b5dbc6ddefe4d83bebd13346573d4c56f9c18210ea9f01a0b3";
export const CTRD = { driver: "CRI", namespace: "NS_SYSTEM" } as const;
const O: TalosCallOptions = { timeoutMs: 5000 };
/** Short real deadline for calls whose answer a fault withholds. */
const SHORT: TalosCallOptions = { timeoutMs: 400 };

async function rejects(p: Promise<unknown>, reason: string): Promise<void> {
  try {
    await p;
  } catch (e) {
    assert(e instanceof CairnError, `expected CairnError, got ${e}`);
    assertEquals(e.reason, reason);
    return;
  }
  throw new Error(`expected ${reason}, but the call succeeded`);
}

/** Pulls the installer on `node`, moving virtual time until the pull finished. */
async function pull(env: TalosContractEnv, node: string, nth: number): Promise<void> {
  const p = env.admin.pull(node, INSTALLER, CTRD, O);
  await env.control.waitForCalls("ImageService/Pull", nth);
  await env.control.advance(15_000);
  assertEquals((await p).outcome, "ok");
}

/** Starts a lifecycle upgrade; resolves (with the pending result) once the server has it. */
async function startUpgrade(env: TalosContractEnv, node: string, nth: number) {
  const pending = env.admin.upgrade(node, INSTALLER, CTRD, O);
  await env.control.waitForCalls("LifecycleService/Upgrade", nth);
  return { pending };
}

export const TALOS_CONTRACT: Record<string, (env: TalosContractEnv) => Promise<void>> = {
  async "roles from the certificate's O= are enforced per method"(env) {
    assertEquals((await env.reader.version("cp-1", O)).tag, "v1.13.9");
    const r = await env.reader.reboot("worker-1", "DEFAULT", O);
    assert(r.outcome === "rejected" && r.reason === "TalosPermissionDenied");
    await rejects(env.reader.bootId("worker-1", O), "TalosPermissionDenied");
    await rejects(env.operator.bootId("worker-1", O), "TalosPermissionDenied");
    const u = await env.operator.upgrade("worker-1", INSTALLER, CTRD, O);
    assert(u.outcome === "rejected" && u.reason === "TalosPermissionDenied");
    const stats = (await env.control.stats()).talos;
    assertEquals(stats.denied, 4);
    assertEquals((await env.control.node("worker-1")).stage, "running");
  },

  async "node metadata routes each call to that node's model, by name or address"(env) {
    assertEquals((await env.admin.version("cp-3", O)).tag, "v1.14.2");
    assertEquals((await env.admin.version("10.0.0.13", O)).tag, "v1.14.2");
    assertEquals((await env.admin.version("worker-2", O)).tag, "v1.13.9");
    const a = await env.admin.bootId("cp-1", O), b = await env.admin.bootId("cp-2", O);
    assert(a !== b && /^[0-9a-f-]{36}$/.test(a));
    assertEquals(a, (await env.control.node("cp-1")).bootId);
    await rejects(env.admin.version("no-such-node", O), "TalosUnavailable");
    // Calls are counted per machine reached: by name and by address, cp-3 answered both.
    const byNode = (await env.control.stats()).talos.byNode;
    assertEquals(byNode["cp-3"]?.["MachineService/Version"], 2);
  },

  async "etcd and services: members on control planes, UNIMPLEMENTED on workers"(env) {
    const members = await env.reader.etcdMembers("cp-2", O);
    assertEquals(members.map((m) => m.hostname), ["cp-1", "cp-2", "cp-3"]);
    const st = await env.reader.etcdStatus("cp-2", O);
    assertEquals(st.leader, members[0]!.id);
    assertEquals(st.memberId, members[1]!.id);
    await rejects(env.reader.etcdMembers("worker-1", O), "TalosNotControlPlane");
    const svcs = await env.reader.serviceList("worker-1", O);
    assert(svcs.some((s) => s.id === "kubelet" && s.healthy && s.state === "Running"));
    assert(!svcs.some((s) => s.id === "etcd"));
  },

  async "pull then lifecycle upgrade streams progress and exit code 0; running version unchanged"(
    env,
  ) {
    const missing = await env.admin.upgrade("worker-1", INSTALLER, CTRD, O);
    assert(missing.outcome !== "ok" && missing.reason === "TalosInternal");
    await pull(env, "worker-1", 1);
    const lines: string[] = [];
    const p = env.admin.upgrade("worker-1", INSTALLER, CTRD, {
      ...O,
      onProgress: (l) => lines.push(l),
    });
    await env.control.waitForCalls("LifecycleService/Upgrade", 2);
    await env.control.advance(40_000);
    const r = await p;
    assert(r.outcome === "ok", JSON.stringify(r));
    assertEquals(r.value.exitCode, 0);
    assertEquals(r.value.completedTag, "v1.14.2");
    // v1.13 splits lines across messages; the adapter re-joins them.
    assert(lines.includes("installation of v1.14.2 complete"), lines.join("|"));
    const n = await env.control.node("worker-1");
    assertEquals(n.runningVersion, "v1.13.9");
    assertEquals(n.defaultEntry?.version, "v1.14.2");
    assertEquals(n.fallbackEntry?.version, "v1.13.9");
    assertEquals((await env.control.stats()).talos.mutating, {
      "ImageService/Pull": 1,
      "LifecycleService/Upgrade": 2,
    });
  },

  async "the install lock is held for installSeconds even after the client disconnects"(env) {
    await pull(env, "worker-2", 1);
    const abort = new AbortController();
    const first = env.admin.upgrade("worker-2", INSTALLER, CTRD, { ...O, signal: abort.signal });
    await env.control.waitForCalls("LifecycleService/Upgrade", 1);
    abort.abort();
    const gone = await first;
    assert(gone.outcome === "sent-no-response", JSON.stringify(gone));
    const retry = await env.admin.upgrade("worker-2", INSTALLER, CTRD, O);
    assert(retry.outcome === "rejected" && retry.reason === "TalosPreconditionFailed");
    assertEquals(retry.grpcCode, 9);
    assertEquals((await env.control.node("worker-2")).installLocked, true);
    await env.control.advance(40_000);
    const n = await env.control.node("worker-2");
    assertEquals([n.installLocked, n.defaultEntry?.version], [false, "v1.14.2"]);
  },

  async "a second install before reboot overwrites the fallback slot"(env) {
    await pull(env, "worker-1", 1);
    for (const nth of [1, 2]) {
      const p = await startUpgrade(env, "worker-1", nth);
      await env.control.advance(40_000);
      assertEquals((await p.pending).outcome, "ok");
    }
    const n = await env.control.node("worker-1");
    assertEquals(n.installsSinceBoot, 2);
    assertEquals(n.runningVersion, "v1.13.9");
    // Both slots now hold v1.14.2: the version still running has no boot entry left.
    assertEquals([n.defaultEntry?.version, n.fallbackEntry?.version], ["v1.14.2", "v1.14.2"]);
  },

  async "reboot is asynchronous: the node goes down and returns with a new boot ID"(env) {
    await pull(env, "worker-1", 1);
    const up = await startUpgrade(env, "worker-1", 1);
    await env.control.advance(40_000);
    assertEquals((await up.pending).outcome, "ok");
    const before = await env.admin.bootId("worker-1", O);
    const r = await env.operator.reboot("worker-1", "DEFAULT", O);
    assert(r.outcome === "ok" && r.value.actorId !== "");
    await env.control.advance(5_000);
    await rejects(env.admin.version("worker-1", O), "TalosUnavailable");
    await env.control.advance(120_000);
    assertEquals((await env.admin.version("worker-1", O)).tag, "v1.14.2");
    const after = await env.admin.bootId("worker-1", O);
    assert(after !== before);
    assertEquals((await env.control.node("worker-1")).installsSinceBoot, 0);
  },

  async "legacy Upgrade installs and reboots server-side"(env) {
    const r = await env.admin.legacyUpgrade("worker-2", INSTALLER, O);
    assert(r.outcome === "ok" && r.value.ack !== "");
    await env.control.advance(40_000 + 90_000 + 1_000);
    assertEquals((await env.admin.version("worker-2", O)).tag, "v1.14.2");
  },

  async "MachineConfigs: only os:admin reads it (Sensitive); STAGED moves the persistent document only"(
    env,
  ) {
    const ref = (id: string) => ({
      namespace: "config",
      type: "MachineConfigs.config.talos.dev",
      id,
    });
    await rejects(env.reader.resource("worker-1", ref("v1alpha1"), O), "TalosPermissionDenied");
    await rejects(env.operator.resource("worker-1", ref("persistent"), O), "TalosPermissionDenied");
    const before = await env.admin.resource("worker-1", ref("v1alpha1"), O);
    const data = new TextEncoder().encode("machine:\n  time:\n    servers: [pool.ntp.org]\n");
    const r = await env.admin.applyConfiguration("worker-1", {
      data,
      mode: "STAGED",
      dryRun: false,
    }, O);
    assert(r.outcome === "ok" && r.value.mode === "STAGED");
    const active = await env.admin.resource("worker-1", ref("v1alpha1"), O);
    const persistent = await env.admin.resource("worker-1", ref("persistent"), O);
    assertEquals(active.yamlSpec, before.yamlSpec);
    assert(persistent.yamlSpec.includes("pool.ntp.org"));
    const time = await env.reader.resource(
      "worker-1",
      { namespace: "network", type: "TimeServerStatuses.net.talos.dev", id: "timeservers" },
      O,
    );
    assert(!time.yamlSpec.includes("pool.ntp.org"), "a staged setting is not running");
  },

  async "ApplyConfiguration follows 1.13 and 1.14 mode semantics"(env) {
    const data = new TextEncoder().encode("machine: {}\n# cairn-sim: requires-reboot\n");
    const r14 = await env.admin.applyConfiguration(
      "cp-3",
      { data, mode: "REBOOT", dryRun: false },
      O,
    );
    assert(r14.outcome === "rejected" && r14.reason === "TalosUnimplemented");
    const auto14 = await env.admin.applyConfiguration(
      "cp-3",
      { data, mode: "AUTO", dryRun: false },
      O,
    );
    assert(auto14.outcome === "ok" && auto14.value.mode === "NO_REBOOT");
    const no13 = await env.admin.applyConfiguration(
      "cp-2",
      { data, mode: "NO_REBOOT", dryRun: false },
      O,
    );
    assert(no13.outcome === "rejected" && no13.reason === "TalosInvalidArgument");
    const dry = await env.admin.applyConfiguration("cp-2", { data, mode: "AUTO", dryRun: true }, O);
    assert(dry.outcome === "ok" && dry.value.mode === "REBOOT");
    assertEquals((await env.control.node("cp-2")).stage, "running");
    const auto13 = await env.admin.applyConfiguration(
      "cp-2",
      { data, mode: "AUTO", dryRun: false },
      O,
    );
    assert(auto13.outcome === "ok" && auto13.value.mode === "REBOOT");
    assertEquals((await env.control.node("cp-2")).stage, "rebooting");
  },

  async "fault lose-response: the reboot happens, the client gets no answer"(env) {
    await env.control.arm({ kind: "lose-response", point: "talos.Reboot", target: "worker-1" });
    const r = await env.admin.reboot("worker-1", "DEFAULT", SHORT);
    assert(r.outcome === "sent-no-response" && r.reason === "TalosDeadlineExceeded");
    assertEquals((await env.control.node("worker-1")).stage, "rebooting");
  },

  async "fault lose-response with mode reset: effect, then UNAVAILABLE at once"(env) {
    await env.control.arm({
      kind: "lose-response",
      point: "talos.Reboot",
      target: "worker-2",
      params: { mode: "reset" },
    });
    const r = await env.admin.reboot("worker-2", "DEFAULT", O);
    assert(r.outcome === "transport-failure" && r.reason === "TalosUnavailable");
    assertEquals((await env.control.node("worker-2")).stage, "rebooting");
    await env.control.arm({
      kind: "delay-landing",
      point: "talos.Reboot",
      target: "worker-1",
      params: { mode: "reset", delayMs: 10_000 },
    });
    const d = await env.admin.reboot("worker-1", "DEFAULT", O);
    assertEquals(d.outcome, "transport-failure");
    assertEquals((await env.control.node("worker-1")).stage, "running");
    await env.control.advance(10_000);
    assertEquals((await env.control.node("worker-1")).stage, "rebooting");
  },

  async "fault delay-landing: the reboot lands after the client gave up"(env) {
    await env.control.arm({
      kind: "delay-landing",
      point: "talos.Reboot",
      target: "worker-1",
      params: { delayMs: 30_000 },
    });
    const r = await env.admin.reboot("worker-1", "DEFAULT", SHORT);
    assertEquals(r.outcome, "sent-no-response");
    assertEquals((await env.control.node("worker-1")).stage, "running");
    await env.control.advance(30_000);
    assertEquals((await env.control.node("worker-1")).stage, "rebooting");
  },

  async "fault unavailable: a mutation is reported, not retried; a read is retried"(env) {
    await env.control.arm({ kind: "unavailable", point: "talos.Reboot", target: "worker-1" });
    const r = await env.admin.reboot("worker-1", "DEFAULT", O);
    assert(r.outcome === "transport-failure" && r.reason === "TalosUnavailable");
    assertEquals((await env.control.stats()).talos.calls["MachineService/Reboot"], 1);
    assertEquals((await env.control.node("worker-1")).stage, "running");
    await env.control.arm({ kind: "unavailable", point: "talos.Version", target: "cp-1" });
    assertEquals((await env.admin.version("cp-1", O)).tag, "v1.13.9");
    assertEquals((await env.control.stats()).talos.calls["MachineService/Version"], 2);
    await env.control.arm({ kind: "deadline-exceeded", point: "talos.Version", target: "cp-1" });
    await rejects(env.admin.version("cp-1", O), "TalosDeadlineExceeded");
  },

  async "fault lose-response on the install stream: cut, yet the install completes"(env) {
    await pull(env, "worker-1", 1);
    await env.control.arm({
      kind: "lose-response",
      point: "talos.LifecycleService.Upgrade",
      target: "worker-1",
    });
    const r = await env.admin.upgrade("worker-1", INSTALLER, CTRD, O);
    assert(r.outcome === "sent-no-response", JSON.stringify(r));
    await env.control.advance(40_000);
    assertEquals((await env.control.node("worker-1")).defaultEntry?.version, "v1.14.2");
  },

  async "faults install-fails and install-lock-held"(env) {
    await pull(env, "worker-1", 1);
    await env.control.arm({
      kind: "install-lock-held",
      point: "talos.install",
      target: "worker-1",
      params: { durationMs: 10_000 },
    });
    const held = await env.admin.upgrade("worker-1", INSTALLER, CTRD, O);
    assert(held.outcome === "rejected" && held.reason === "TalosPreconditionFailed");
    await env.control.advance(10_000);
    await env.control.arm({ kind: "install-fails", point: "talos.install", target: "worker-1" });
    const p = await startUpgrade(env, "worker-1", 2);
    await env.control.advance(40_000);
    const r = await p.pending;
    assert(r.outcome === "ok" && r.value.exitCode === 7);
    assertEquals((await env.control.node("worker-1")).defaultEntry?.version, "v1.13.9");
  },

  async "fault install-invalid: refused as invalid before any output; nothing is written"(env) {
    await pull(env, "worker-1", 1);
    await env.control.arm({ kind: "install-invalid", point: "talos.install", target: "worker-1" });
    const lines: string[] = [];
    const r = await env.admin.upgrade("worker-1", INSTALLER, CTRD, {
      ...O,
      onProgress: (l) => lines.push(l),
    });
    assert(r.outcome === "rejected" && r.reason === "TalosInvalidArgument", JSON.stringify(r));
    assertEquals([r.grpcCode, lines], [3, []]);
    const n = await env.control.node("worker-1");
    assertEquals([n.installLocked, n.installsSinceBoot, n.defaultEntry?.version], [
      false,
      0,
      "v1.13.9",
    ]);
  },

  async "faults boots-old-version, no-return-from-reboot, service-unhealthy"(env) {
    for (const [node, nth] of [["worker-1", 1], ["worker-2", 2]] as const) {
      await pull(env, node, nth);
      const p = await startUpgrade(env, node, nth);
      await env.control.advance(40_000);
      assertEquals((await p.pending).outcome, "ok");
    }
    await env.control.arm({ kind: "boots-old-version", point: "talos.boot", target: "worker-1" });
    await env.control.arm({
      kind: "no-return-from-reboot",
      point: "talos.boot",
      target: "worker-2",
    });
    await env.control.arm({
      kind: "service-unhealthy",
      point: "talos.service",
      target: "worker-1",
      params: { service: "kubelet", durationMs: 60_000 },
    });
    const before = await env.admin.bootId("worker-1", O);
    for (const node of ["worker-1", "worker-2"]) {
      assertEquals((await env.admin.reboot(node, "DEFAULT", O)).outcome, "ok");
    }
    await env.control.advance(300_000);
    assertEquals((await env.admin.version("worker-1", O)).tag, "v1.13.9");
    assert((await env.admin.bootId("worker-1", O)) !== before);
    await rejects(env.admin.version("worker-2", O), "TalosUnavailable");
    const kubelet = async () =>
      (await env.admin.serviceList("worker-1", O)).find((s) => s.id === "kubelet")!.healthy;
    assertEquals(await kubelet(), true); // 300 s after boot the 60 s fault is over
    await env.control.arm({
      kind: "service-unhealthy",
      point: "talos.service",
      target: "worker-1",
      params: { durationMs: 60_000 },
    });
    assertEquals((await env.admin.reboot("worker-1", "DEFAULT", O)).outcome, "ok");
    await env.control.advance(121_000); // worker-1 takes 120 s to reboot
    assertEquals(await kubelet(), false);
    await env.control.advance(60_000);
    assertEquals(await kubelet(), true);
  },
};
