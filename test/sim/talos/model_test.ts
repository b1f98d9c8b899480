import { deepStrictEqual as assertEquals, ok as assert, throws } from "node:assert/strict";
import { SimClock } from "../../../src/sim/clock.ts";
import { FaultSchedule } from "../../../src/sim/faults.ts";
import type { SimNode } from "../../../src/sim/cluster_description.ts";
import { GRPC, parseInstallerRef, TalosNode, TalosSimError } from "../../../src/sim/talos/model.ts";

const SCHEMATIC = "30684e2ddd0b9d61be817efe9f71ba839dc0e7610d8bc111fe7f70c6b29db08b";
const REF = `factory.talos.dev/metal-installer/${SCHEMATIC}:v1.14.2`;
const CTRD = { driver: "CRI", namespace: "NS_SYSTEM" };

function node(version = "v1.13.9") {
  const clock = new SimClock(0);
  const faults = new FaultSchedule();
  const events: string[] = [];
  const desc: SimNode = {
    name: "w1",
    role: "worker",
    address: "10.5.0.6",
    talosVersion: version,
    kubeletVersion: "v1.35.2",
    schematic: SCHEMATIC,
    arch: "amd64",
    platform: "metal",
    rebootSeconds: 90,
    installSeconds: 40,
    pullSeconds: 15,
    labels: {},
    unschedulable: false,
    ready: true,
  };
  let seed = 0;
  const n = new TalosNode(desc, {
    clock,
    faults,
    rand: () => (seed = (seed * 9301 + 49297) % 233280) / 233280,
    sink: {
      nodeDown: (name) => events.push(`down ${name}`),
      nodeUp: (name, i) => events.push(`up ${name} ${i.osImage}`),
    },
  });
  n.finishPull(REF, CTRD);
  return { n, clock, faults, events };
}

async function install(n: TalosNode, clock: SimClock): Promise<number> {
  const { done } = n.startInstall(REF, CTRD, () => {});
  await clock.advance(40_000);
  return done;
}

Deno.test("parseInstallerRef() reads schematic and tag with or without a digest", () => {
  assertEquals(parseInstallerRef(REF + "@sha256:" + "a".repeat(64)), {
    schematic: SCHEMATIC,
    version: "v1.14.2",
  });
  throws(() => parseInstallerRef("busybox"), TalosSimError);
});

Deno.test("install writes the other slot; a second install before reboot overwrites the fallback", async () => {
  const { n, clock } = node();
  assertEquals(await install(n, clock), 0);
  assertEquals([n.defaultSlot, n.fallbackEntry?.version], ["B", "v1.13.9"]);
  assertEquals(await install(n, clock), 0);
  assertEquals([n.defaultSlot, n.fallbackEntry?.version], ["A", "v1.14.2"]);
  assertEquals(n.runningVersion, "v1.13.9");
});

Deno.test("the install lock refuses a concurrent install with FAILED_PRECONDITION until done", async () => {
  const { n, clock } = node();
  const first = n.startInstall(REF, CTRD, () => {});
  throws(
    () => n.startInstall(REF, CTRD, () => {}),
    (e: unknown) => e instanceof TalosSimError && e.code === GRPC.FAILED_PRECONDITION,
  );
  await clock.advance(40_000);
  assertEquals(await first.done, 0);
  assertEquals(n.isLocked(), false);
});

Deno.test("reboot goes down, boots the default entry with a new boot ID and tells the kube side", async () => {
  const { n, clock, events } = node();
  await install(n, clock);
  const bootId = n.bootId;
  n.reboot("DEFAULT");
  await clock.advance(2_000);
  assertEquals(n.stage, "down");
  await clock.advance(90_000);
  assertEquals([n.stage, n.runningVersion, n.installsSinceBoot], ["running", "v1.14.2", 0]);
  assert(n.bootId !== bootId);
  assertEquals(events, ["down w1", "up w1 Talos (v1.14.2)"]);
});

Deno.test("a second reboot request during a reboot joins it: one boot, one new boot ID", async () => {
  const { n, clock, events } = node();
  n.reboot("DEFAULT");
  n.reboot("DEFAULT");
  await clock.advance(200_000);
  assertEquals(events, ["down w1", "up w1 Talos (v1.13.9)"]);
});

Deno.test("boots-old-version boots the fallback entry after a completed install", async () => {
  const { n, clock, faults } = node();
  await install(n, clock);
  faults.arm({ kind: "boots-old-version", point: "talos.boot", target: "w1" });
  n.reboot("DEFAULT");
  await clock.advance(100_000);
  assertEquals([n.runningVersion, n.defaultEntry?.version], ["v1.13.9", "v1.14.2"]);
});

Deno.test("ApplyConfiguration: 1.13 AUTO may reboot, 1.14 AUTO never does and REBOOT is refused", () => {
  const data = "x\n# cairn-sim: requires-reboot\n";
  const old = node("v1.13.9").n;
  assertEquals(
    old.applyConfiguration({ data, mode: "AUTO", dryRun: false, tryTimeoutMs: 0 }).mode,
    "REBOOT",
  );
  assertEquals(old.stage, "rebooting");
  const cur = node("v1.14.2").n;
  assertEquals(
    cur.applyConfiguration({ data, mode: "AUTO", dryRun: false, tryTimeoutMs: 0 }).mode,
    "NO_REBOOT",
  );
  throws(
    () => cur.applyConfiguration({ data, mode: "REBOOT", dryRun: false, tryTimeoutMs: 0 }),
    (e: unknown) => e instanceof TalosSimError && e.code === GRPC.UNIMPLEMENTED,
  );
  assertEquals(cur.stage, "running");
});
