/**
 * The campaign's other plan kinds (src/app/dst/kinds.ts): a KubernetesUpgrade and a ConfigApply
 * run clean on their seeds, and the invariants that are theirs fire on a deliberately broken
 * executor (10: a control-plane component moved on two nodes at once; 11: an activating reboot
 * before the staged configuration was observed stored; 16: a configuration change that takes an
 * earlier one back).
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { type InvariantId, INVARIANTS } from "../../../src/app/dst/invariants.ts";
import { type PortsVariant, runSeed } from "../../../src/app/dst/run_seed.ts";
import { nodeAddress } from "../../../src/app/dst/world.ts";
import type { Talos } from "../../../src/ports/talos.ts";

const catalogue = await Deno.readFile(new URL("../../../catalogue/talos.yaml", import.meta.url));
/** A ci-profile world with three control planes; its KubernetesUpgrade completes clean. */
const K8S_SEED = 38;
/** A ci-profile world whose ConfigApply stages an etcd change on two control planes. */
const STAGED_SEED = 5;

async function fires(
  invariant: InvariantId,
  kind: string,
  seed: number,
  portsVariant: PortsVariant,
) {
  const base = { seed, kind, catalogue, profile: "ci" as const, events: [] };
  const correct = await runSeed(base);
  assertEquals(correct.violation, undefined, `the correct executor: ${correct.violation?.detail}`);
  assertEquals(correct.error, undefined);
  assertEquals(correct.end, "completed", JSON.stringify(correct.states));
  const broken = await runSeed({ ...base, portsVariant });
  assert(broken.violation, `invariant ${invariant} did not fire (end ${broken.end})`);
  assertEquals(
    broken.violation.invariant,
    invariant,
    `expected ${invariant} (${INVARIANTS[invariant]}), got: ${broken.violation.detail}`,
  );
}

function withTalos(t: Talos, over: Partial<Talos>): Talos {
  return new Proxy(t, {
    get: (target, p) => (over as Record<PropertyKey, unknown>)[p] ?? Reflect.get(target, p),
  });
}

Deno.test("dst invariant 10 fires when the executor changes a component on a second control plane too", async () => {
  const first = await runSeed({
    seed: K8S_SEED,
    kind: "KubernetesUpgrade",
    catalogue,
    profile: "ci",
    events: [],
  });
  const [a, b] = first.planNodes;
  assert(a && b, "two control planes");
  await fires(10, "KubernetesUpgrade", K8S_SEED, (checked, unseen) => ({
    kube: checked.kube,
    talos: withTalos(checked.talos, {
      applyConfiguration: async (address, input, opts) => {
        // The broken executor sends the same change to the other control plane as well.
        if (address === nodeAddress(a)) {
          await unseen.talos.applyConfiguration(nodeAddress(b), input, opts);
        }
        return await checked.talos.applyConfiguration(address, input, opts);
      },
    }),
  }));
});

Deno.test("dst invariant 11 fires when the executor reboots before its staged apply", async () => {
  await fires(11, "ConfigApply", STAGED_SEED, (checked) => ({
    kube: checked.kube,
    talos: withTalos(checked.talos, {
      applyConfiguration: async (address, input, opts) => {
        // The broken executor activates first: a reboot before the staged apply is even sent.
        await checked.talos.reboot(address, "DEFAULT", opts);
        return await checked.talos.applyConfiguration(address, input, opts);
      },
    }),
  }));
});

Deno.test("dst invariant 16 fires when the executor bases a change on a document from before its last one", async () => {
  // The broken executor keeps the first machine configuration it read of each node and hands it
  // out again under the version read now, so no version check can tell: each component's
  // whole-document change puts the one before it back to the old version.
  const first = new Map<string, string>();
  await fires(16, "KubernetesUpgrade", K8S_SEED, (checked) => ({
    kube: checked.kube,
    talos: withTalos(checked.talos, {
      resource: async (node, ref, opts) => {
        const r = await checked.talos.resource(node, ref, opts);
        if (ref.type !== "MachineConfigs.config.talos.dev") return r;
        if (!first.has(node)) first.set(node, r.yamlSpec);
        return { ...r, yamlSpec: first.get(node)! };
      },
    }),
  }));
});
