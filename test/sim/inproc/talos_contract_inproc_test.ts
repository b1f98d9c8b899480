/**
 * The Talos port contract (`test/contract/talos_contract.ts`) run against the in-process Talos
 * port: the same cases cairn's grpc-js client passes against the socket twin, so the executor
 * sees the same outcome classes, reasons and machine behaviour from both. As on the socket twin
 * for this suite, time moves only when a case moves it (manual time).
 */
import { join } from "node:path";
import { parse } from "yaml";
import { ClusterDescriptionSchema } from "../../../src/sim/cluster_description.ts";
import { startInprocTwin } from "../../../src/sim/inproc/cluster.ts";
import { InprocTalos } from "../../../src/sim/inproc/talos.ts";
import type { TalosNodeSnapshot, TalosStatsSnapshot } from "../../../src/sim/twin_control.ts";
import { TALOS_CONTRACT, type TalosContractEnv } from "../../contract/talos_contract.ts";
import { ROOT } from "../../_helpers/twin_world.ts";

const description = ClusterDescriptionSchema.parse(
  parse(await Deno.readTextFile(join(ROOT, "fixtures/clusters/talos-mini.yaml"))),
);

async function withInproc(fn: (env: TalosContractEnv) => Promise<void>) {
  const twin = startInprocTwin({ description: structuredClone(description), manualTime: true });
  // One port per role (the client certificate's O=), sharing the machines and the counters.
  const as = (roles: string[]) =>
    new InprocTalos({
      cluster: twin.cluster,
      time: twin.time,
      faults: twin.faults,
      roles,
      stats: twin.talos.stats,
      manualTime: true,
    });
  try {
    await fn({
      admin: twin.talos,
      operator: as(["os:operator"]),
      reader: as(["os:reader"]),
      control: {
        advance: (ms) => twin.time.advanceTo(twin.sim.now() + ms),
        arm: (f) => Promise.resolve(twin.faults.arm(f)),
        node: (name) =>
          Promise.resolve(twin.cluster.nodes.get(name)!.snapshot() as unknown as TalosNodeSnapshot),
        stats: () =>
          Promise.resolve({ talos: twin.talos.stats.toJSON() as unknown as TalosStatsSnapshot }),
        waitForCalls: (method, atLeast) => twin.talos.stats.waitForCalls(method, atLeast),
      },
    });
  } finally {
    twin.stop();
  }
}

for (const [name, run] of Object.entries(TALOS_CONTRACT)) {
  Deno.test(`Talos contract in process: ${name}`, () => withInproc((env) => run(env)));
}
