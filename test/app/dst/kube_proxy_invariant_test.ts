/**
 * Invariant 10 for kube-proxy (issue 16): cairn moves kube-proxy by one change of its DaemonSet's
 * image, and the DaemonSet controller's rolling update replaces one node's pod at a time; the
 * checker holds the world to that (kube-proxy never unavailable on two nodes at once) after every
 * step. A deliberately broken executor that "speeds the rollout up" by evicting the old pods after
 * its image change fails exactly invariant 10; the correct one passes the same seed.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { type PortsVariant, runSeed } from "../../../src/app/dst/run_seed.ts";
import type { Kube } from "../../../src/ports/kube.ts";

const catalogue = await Deno.readFile(new URL("../../../catalogue/talos.yaml", import.meta.url));
/** A ci-profile world with three control planes; its KubernetesUpgrade completes clean. */
const K8S_SEED = 38;

function withKube(k: Kube, over: Partial<Kube>): Kube {
  return new Proxy(k, {
    get: (target, p) => (over as Record<PropertyKey, unknown>)[p] ?? Reflect.get(target, p),
  });
}

/** After its DaemonSet image change, the broken executor evicts every kube-proxy pod at once. */
const evictsTheOldPods: PortsVariant = (checked, unseen) => ({
  talos: checked.talos,
  kube: withKube(checked.kube, {
    setContainerImage: async (ref, ns, name, change, opts) => {
      const r = await checked.kube.setContainerImage(ref, ns, name, change, opts);
      const pods = await unseen.kube.listPods(undefined, {});
      for (const p of pods.items.filter((x) => x.name.startsWith("kube-proxy-"))) {
        await unseen.kube.evict({ namespace: p.namespace, name: p.name });
      }
      return r;
    },
  }),
});

Deno.test("dst invariant 10 fires when kube-proxy is taken down on two nodes at once", async () => {
  const base = {
    seed: K8S_SEED,
    kind: "KubernetesUpgrade",
    catalogue,
    profile: "ci" as const,
    events: [],
  };
  const correct = await runSeed(base);
  assertEquals(correct.violation, undefined, `the correct executor: ${correct.violation?.detail}`);
  assertEquals(correct.end, "completed", JSON.stringify(correct.states));
  const broken = await runSeed({ ...base, portsVariant: evictsTheOldPods });
  assert(broken.violation, `invariant 10 did not fire (end ${broken.end})`);
  assertEquals(broken.violation.invariant, 10, broken.violation.detail);
  assert(broken.violation.detail.includes("kube-proxy unavailable"), broken.violation.detail);
});
