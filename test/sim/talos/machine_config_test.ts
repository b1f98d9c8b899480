/**
 * The twin's machine configuration: persistent, active and running state apart. STAGED moves only
 * the persistent document; NO_REBOOT moves both documents and what activates at once; a boot runs
 * the persistent document; `config-activation-deferred` keeps a service on its old settings.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { parse } from "yaml";
import { SimClock } from "../../../src/sim/clock.ts";
import { FaultSchedule } from "../../../src/sim/faults.ts";
import type { SimNode } from "../../../src/sim/cluster_description.ts";
import { TalosNode } from "../../../src/sim/talos/model.ts";

function node(version: string) {
  const clock = new SimClock(0);
  const faults = new FaultSchedule();
  const desc: SimNode = {
    name: "cp1",
    role: "controlplane",
    address: "10.5.0.3",
    talosVersion: version,
    kubeletVersion: "v1.35.2",
    schematic: "30684e2ddd0b9d61be817efe9f71ba839dc0e7610d8bc111fe7f70c6b29db08b",
    arch: "amd64",
    platform: "metal",
    rebootSeconds: 90,
    installSeconds: 40,
    pullSeconds: 15,
    labels: {},
    unschedulable: false,
    ready: true,
  };
  const n = new TalosNode(desc, {
    clock,
    faults,
    rand: () => 0.5,
    sink: { nodeDown: () => {}, nodeUp: () => {} },
  });
  return { n, clock, faults };
}

function withServers(n: TalosNode, servers: string[], modules = ["br_netfilter"]): string {
  const doc = parse(n.machineConfig.active) as Record<string, Record<string, unknown>>;
  doc["machine"]!["time"] = { servers };
  doc["machine"]!["kernel"] = { modules: modules.map((name) => ({ name })) };
  return JSON.stringify(doc);
}

Deno.test("NO_REBOOT stores and activates; the time service runs the new servers at once", () => {
  const { n } = node("v1.14.2");
  const data = withServers(n, ["pool.ntp.org"]);
  n.applyConfiguration({ data, mode: "NO_REBOOT", dryRun: false, tryTimeoutMs: 0 });
  assertEquals([n.machineConfig.persistent, n.machineConfig.active], [data, data]);
  assertEquals(n.machineConfig.runningTimeServers, ["pool.ntp.org"]);
  const status = n.machineConfig.cosi(
    "network",
    "TimeServerStatuses.net.talos.dev",
    "timeservers",
    true,
  );
  assertEquals((parse(status!.yaml) as { timeServers: string[] }).timeServers, ["pool.ntp.org"]);
});

Deno.test("STAGED moves only the persistent document; the next boot activates it", async () => {
  const { n, clock } = node("v1.14.2");
  const before = n.machineConfig.active;
  const data = withServers(n, ["pool.ntp.org"], []);
  n.applyConfiguration({ data, mode: "STAGED", dryRun: false, tryTimeoutMs: 0 });
  assertEquals([n.machineConfig.persistent, n.machineConfig.active], [data, before]);
  assertEquals(n.machineConfig.runningTimeServers, ["time.cloudflare.com"]);
  assert(n.machineConfig.loadedModules.has("br_netfilter"));
  n.reboot("DEFAULT");
  await clock.advance(100_000);
  assertEquals(n.machineConfig.active, data);
  assertEquals(n.machineConfig.runningTimeServers, ["pool.ntp.org"]);
  assertEquals(n.machineConfig.loadedModules.has("br_netfilter"), false);
});

Deno.test("a removed kernel module stays loaded until a boot, even after NO_REBOOT", () => {
  const { n } = node("v1.14.2");
  n.applyConfiguration({
    data: withServers(n, ["time.cloudflare.com"], []),
    mode: "NO_REBOOT",
    dryRun: false,
    tryTimeoutMs: 0,
  });
  assert(n.machineConfig.loadedModules.has("br_netfilter"));
  assert(
    n.machineConfig.cosi("runtime", "KernelModuleStatuses.runtime.talos.dev", "br_netfilter", true),
  );
  assertEquals(
    n.machineConfig.cosi(
      "runtime",
      "KernelModuleStatuses.runtime.talos.dev",
      "br_netfilter",
      false,
    ),
    undefined,
    "v1.13 has no KernelModuleStatuses",
  );
});

Deno.test("config-activation-deferred: stored and active as a document, the service keeps its servers", async () => {
  const { n, clock, faults } = node("v1.14.2");
  faults.arm({ kind: "config-activation-deferred", point: "talos.config", target: "cp1" });
  const data = withServers(n, ["pool.ntp.org"]);
  n.applyConfiguration({ data, mode: "NO_REBOOT", dryRun: false, tryTimeoutMs: 0 });
  assertEquals(n.machineConfig.active, data);
  assertEquals(n.machineConfig.runningTimeServers, ["time.cloudflare.com"]);
  n.reboot("DEFAULT");
  await clock.advance(100_000);
  assertEquals(n.machineConfig.runningTimeServers, ["pool.ntp.org"]);
});

Deno.test("MachineConfigs serves v1alpha1 (active) and persistent with their versions", () => {
  const { n } = node("v1.13.9");
  const data = withServers(n, ["pool.ntp.org"]);
  n.applyConfiguration({ data, mode: "STAGED", dryRun: false, tryTimeoutMs: 0 });
  const active = n.machineConfig.cosi(
    "config",
    "MachineConfigs.config.talos.dev",
    "v1alpha1",
    false,
  )!;
  const persistent = n.machineConfig.cosi(
    "config",
    "MachineConfigs.config.talos.dev",
    "persistent",
    false,
  )!;
  assertEquals([active.version, persistent.version], ["1", "2"]);
  assertEquals(persistent.yaml, data);
});
