/**
 * The reboot wait asks for the boot id once a poll (engine/executor/verify_phase.ts `pollBoot`):
 * a machine that is down answers no sooner for being asked three times through its apid proxy,
 * so the client's immediate retries of an UNAVAILABLE read are not spent there (issue 18).
 */
import { ok as assert } from "node:assert/strict";
import { startInprocWorld } from "../../_helpers/inproc_world.ts";

Deno.test("reboot wait: one boot-id read a poll while the machine is down, not the client's three", async () => {
  const w = await startInprocWorld({ nodes: ["worker-1"] });
  try {
    const out = await w.run();
    assert(out.nodes[0]?.state === "completed", JSON.stringify(out.nodes));
    const [op] = await w.operations();
    const at = (phase: string) => op!.phases.find((p) => p.phase === phase)!.atMs;
    // The wait's polls: from the reboot's intent to the new boot observed, one every 5 s (the
    // in-process rollout's poll interval).
    const polls = (at("boot-observed") - at("reboot")) / 5_000;
    assert(polls >= 10, `the machine was down for ${polls} polls`);
    const reads = w.twin.talos.stats.byNode["worker-1"]?.["MachineService/Read"] ?? 0;
    // One a poll, plus the boot id read before the reboot and the completion's: never three a
    // poll (about 3 × polls).
    assert(reads <= polls + 4, `${reads} boot-id reads over ${polls} polls`);
  } finally {
    await w.close();
  }
});
