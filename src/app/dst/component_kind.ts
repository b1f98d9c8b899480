/**
 * ComponentUpgrade in the campaign (issue 16): a Cilium chart bump merged on the watched branch,
 * delivered by the world's Flux (`flux_world.ts`, on the twin's clock, with the seed's Flux
 * faults) and observed by the reconcile loop's own ComponentUpgrade execution
 * (`engine/reconcile/component_execution.ts`: the dispatch check, the pin digests, the delivery
 * tied to the merge through the world's git, the after-merge rounds, the `component-end` event a
 * successor reports instead of observing again). cairn mutates nothing here; what it claims at
 * its end is held by invariants 12 and 13.
 */
import { sha256Hex } from "../../domain/plan/digest.ts";
import { bindComponentUpgrade } from "../../engine/component/run_component.ts";
import { executeComponent } from "../../engine/reconcile/component_execution.ts";
import type { InprocTwin } from "../../sim/inproc/cluster.ts";
import {
  COMMITS,
  COMPONENT,
  deliverMerge,
  deliveryTruth,
  type FluxFault,
  fluxObjects,
  worldContains,
  worldHistory,
} from "./flux_world.ts";
import type { DstEvent } from "./schedule.ts";
import {
  CLUSTER_NAME,
  DST_BINDING,
  memoryFiles,
  type PlanKindDriver,
  policyText,
} from "./world.ts";

const enc = new TextEncoder();

/** The pin file as the reviewed branch's head (and the merged tree) hold it. */
const PIN_TEXT = [
  "apiVersion: source.toolkit.fluxcd.io/v1",
  "kind: OCIRepository",
  `metadata: {name: ${COMPONENT.name}, namespace: ${COMPONENT.namespace}}`,
  `spec: {interval: 1h, url: oci://quay.io/cilium/charts/cilium, ref: {tag: ${COMPONENT.to}}}`,
  "",
].join("\n");

/** What the invariants read of a ComponentUpgrade world (12, 13). */
export interface ComponentFacts {
  /** The merge the plan must see delivered. */
  readonly merge: string;
  /** The world's git: whether `descendant` contains `ancestor` (undefined: unknown). */
  readonly contains: (descendant: string, ancestor: string) => boolean | undefined;
  readonly truth: () => ReturnType<typeof deliveryTruth>;
  /** The chart version the plan moves to. */
  readonly to: string;
}

export const COMPONENT_UPGRADE: PlanKindDriver = {
  kind: "ComponentUpgrade",
  async draw(prng, shape, catalogue) {
    // One control plane's etcd reader never passes (it judges what a disruption would leave);
    // a ComponentUpgrade disrupts no node, and its after-merge rounds would never pass there.
    const policy = enc.encode(policyText(shape, { etcd: shape.controlPlanes.length > 1 }));
    const pin = enc.encode(PIN_TEXT);
    const c = COMPONENT;
    const verificationSeconds = prng.pick([600, 900, 1200]);
    const timings = {
      gitFetchMs: prng.int(5, 60) * 1000,
      applyMs: prng.int(5, 30) * 1000,
      chartFetchMs: prng.int(5, 30) * 1000,
      helmUpgradeMs: prng.int(10, 60) * 1000,
    };
    const text = [
      "apiVersion: cairn.dev/v1alpha1",
      "kind: ComponentUpgrade",
      "metadata:",
      "  name: dst-component",
      `  cluster: ${CLUSTER_NAME}`,
      "  author: dst@example.com",
      "  expires: 2027-01-30T00:00:00Z",
      "spec:",
      "  catalogue:",
      "    path: catalogue/talos.yaml",
      `    sha256: ${await sha256Hex(catalogue)}`,
      "  healthPolicy:",
      "    path: policies/dst.yaml",
      `    sha256: ${await sha256Hex(policy)}`,
      "  retry:",
      "    maxAttempts: 1",
      `  component: ${c.id}`,
      `  flux: {kind: HelmRelease, namespace: ${c.namespace}, name: ${c.name}}`,
      `  from: v${c.from}`,
      `  to: v${c.to}`,
      "  change:",
      `    base: "${COMMITS.base}"`,
      `    head: "${COMMITS.head}"`,
      `    pins: [{path: ${c.pin}, sha256: "${await sha256Hex(pin)}"}]`,
      "  delivery:",
      `    source: {kind: OCIRepository, namespace: ${c.namespace}, name: ${c.name}}`,
      "    images:",
      `      - namespace: ${c.namespace}`,
      `        selector: ${c.selector}`,
      `        container: ${c.container}`,
      `        image: ${c.image(c.to)}`,
      "        renderedBy: the cilium chart (its agent DaemonSet)",
      "  phases:",
      "    deadlines:",
      `      rollout: { transportSeconds: 60, verificationSeconds: ${verificationSeconds} }`,
      "",
    ].join("\n");
    return {
      kind: "ComponentUpgrade",
      text,
      // A ComponentUpgrade commits to no node; the seed's twin faults aim at any of them.
      nodes: [],
      aim: [...shape.workers, ...shape.controlPlanes],
      files: memoryFiles(
        new Map([
          ["catalogue/talos.yaml", catalogue],
          ["policies/dst.yaml", policy],
          [c.pin, pin],
        ]),
      ),
      editDescription: (d) => {
        d.spec.objects.push(...fluxObjects());
      },
      start: (twin: InprocTwin, events: readonly DstEvent[]) => {
        const faults: FluxFault[] = [];
        for (const e of events) if (e.kind === "flux") faults.push(e.fault);
        deliverMerge(twin, timings, faults);
        const facts: ComponentFacts = {
          merge: COMMITS.merge,
          contains: worldContains,
          truth: () => deliveryTruth(twin),
          to: c.to,
        };
        return { component: facts };
      },
    };
  },
  async bind(journal, p) {
    const bound = await bindComponentUpgrade(journal, {
      ...p,
      ...DST_BINDING,
      firstSeenCommit: COMMITS.merge,
    });
    return {
      digest: bound.digest,
      execute: async (o) => {
        const end = await executeComponent(
          {
            journal: o.journal,
            ...(o.epoch ? { epoch: o.epoch } : {}),
            cluster: o.cluster,
            clock: o.clock,
            ...(o.timeoutClock ? { timeoutClock: o.timeoutClock } : {}),
            owner: o.owner,
            callTimeoutMs: o.callTimeoutMs,
            pollIntervalMs: o.pollIntervalMs,
            roundIntervalMs: o.roundIntervalMs,
            commitHistory: worldHistory,
          },
          { requiredApprovals: o.authority.requiredApprovals },
          {
            plan: bound.plan,
            digest: bound.digest,
            bytes: o.authority.bytes,
            signatures: o.authority.signatures,
            merge: COMMITS.merge,
          },
          { signal: o.signal ?? new AbortController().signal, files: o.authority.files },
        );
        const reason = end.reasons[0]?.reason;
        return { state: end.state, nodes: [], ...(reason ? { reason } : {}) };
      },
    };
  },
  untrue: () => "a ComponentUpgrade completes no operation",
};
