/**
 * ComponentUpgrade in the campaign (src/app/dst/component_kind.ts): a seed's world delivers the
 * merge through its Flux and the reconcile loop's ComponentUpgrade execution observes it; the
 * invariants that are its own fire on a deliberately broken executor (12: a completion the world
 * does not hold; 13: a deadline recorded as a failure), while the correct one holds on the same
 * seed and schedule.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import type { ComponentOutcome } from "../../../src/domain/component/outcome.ts";
import { COMMITS } from "../../../src/app/dst/flux_world.ts";
import { type InvariantId, INVARIANTS } from "../../../src/app/dst/invariants.ts";
import { runSeed, type SeedOptions } from "../../../src/app/dst/run_seed.ts";
import type { DstEvent } from "../../../src/app/dst/schedule.ts";
import type { Journal } from "../../../src/ports/journal.ts";
import type { Kube } from "../../../src/ports/kube.ts";

const catalogue = await Deno.readFile(new URL("../../../catalogue/talos.yaml", import.meta.url));
/** A ci-profile world with three control planes whose ComponentUpgrade completes clean. */
export const COMPONENT_SEED = 4;
const base = { seed: COMPONENT_SEED, kind: "ComponentUpgrade", catalogue, profile: "ci" as const };

Deno.test("dst ComponentUpgrade: a clean seed completes; the Flux faults end it not delivered", async () => {
  const clean = await runSeed({ ...base, events: [] });
  assertEquals(clean.violation, undefined, clean.violation?.detail);
  assertEquals(clean.error, undefined);
  assertEquals(clean.end, "completed");
  const stuck = await runSeed({
    ...base,
    events: [{ kind: "flux", fault: { kind: "applied-old-revision" } }],
  });
  assertEquals(stuck.violation, undefined, stuck.violation?.detail);
  assertEquals([stuck.end, stuck.reason], ["halted", "ComponentNotDelivered"]);
});

async function fires(
  invariant: InvariantId,
  events: DstEvent[],
  broken: Pick<SeedOptions, "portsVariant" | "journalVariant">,
) {
  const correct = await runSeed({ ...base, events });
  assertEquals(correct.violation, undefined, `the correct executor: ${correct.violation?.detail}`);
  assertEquals(correct.error, undefined);
  const r = await runSeed({ ...base, events, ...broken });
  assert(r.violation, `invariant ${invariant} did not fire (end ${r.end}, ${r.reason})`);
  assertEquals(
    r.violation.invariant,
    invariant,
    `expected ${invariant} (${INVARIANTS[invariant]}), got: ${r.violation.detail}`,
  );
}

function withKube(k: Kube, over: Partial<Kube>): Kube {
  return new Proxy(k, {
    get: (target, p) => (over as Record<PropertyKey, unknown>)[p] ?? Reflect.get(target, p),
  });
}

Deno.test("dst invariant 12 fires when the executor believes a Kustomization read that claims the merge", async () => {
  await fires(12, [{ kind: "flux", fault: { kind: "applied-old-revision" } }], {
    portsVariant: (checked) => ({
      talos: checked.talos,
      kube: withKube(checked.kube, {
        // The broken executor reads back what it hopes for: the merge applied.
        getObject: async (ref, name, ns, opts) => {
          const o = await checked.kube.getObject(ref, name, ns, opts);
          if (!o || ref.plural !== "kustomizations") return o;
          const status = { ...(o["status"] as Record<string, unknown>) };
          status["lastAppliedRevision"] = `main@sha1:${COMMITS.merge}`;
          return { ...o, status };
        },
      }),
    }),
  });
});

Deno.test("dst invariant 13 fires when the executor records a delivery deadline as a failure", async () => {
  await fires(13, [{ kind: "flux", fault: { kind: "source-stuck" } }], {
    journalVariant: (j) =>
      new Proxy(j, {
        get(target, p) {
          if (p !== "recordRolloutEvent") return Reflect.get(target, p);
          // The broken executor takes a delivery it never saw land for a failed upgrade.
          const record: Journal["recordRolloutEvent"] = (input) => {
            const o = input.detail["outcome"] as ComponentOutcome | undefined;
            if (!o || o.end !== "not-delivered") return target.recordRolloutEvent(input);
            const failed = { ...o, end: "health-failed" as const };
            return target.recordRolloutEvent({
              ...input,
              detail: { ...input.detail, end: failed.end, outcome: failed },
            });
          };
          return record;
        },
      }),
  });
});
