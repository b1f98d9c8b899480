/**
 * Expected-noise silences as leases (docs/operating.md#alert-veto-and-silences): for the alerts a
 * plan declares as expected noise of a node step (CephOSDDownHigh while that node's OSDs are
 * down), a silence is created when the step is committed, scoped to that node (the plan's matchers
 * plus `nodeLabel=<node>`) and to the step's expected duration, recorded in the journal, and
 * expired when the step ends. If the step outlives it, the lease lapses on its own and the alerts
 * page again: a stuck step is never hidden. Nothing beyond what the plan declares is silenced.
 *
 * A silence Alertmanager does not confirm is recorded (`SilenceNotCreated`) and the step goes on
 * unsilenced: noise that pages is safe, a step held for a missing silence is not needed.
 */
import type { Alertmanager, AlertMatcher } from "../../ports/alertmanager.ts";
import type { StepState } from "../executor/deps.ts";
import { errorText } from "../executor/mutation.ts";
import { controllerActor } from "../executor/observe.ts";
import { expectedStepMs } from "../../domain/ops/expected_step.ts";

/** Bound on one Alertmanager call (wall-clock ms, through the executor's conversion). */
const CALL_MS = 10_000;

/** The silences opened for one step; `close` expires them (call once, when the step ends). */
export interface NoiseLease {
  close(): Promise<void>;
}

const NONE: NoiseLease = { close: () => Promise.resolve() };

/** Opens the step's expected-noise silences (none when the plan declares none). */
export async function openNoiseLease(
  s: StepState,
  am: Alertmanager | undefined,
): Promise<NoiseLease> {
  const noise = s.bound.plan.spec.expectedNoise ?? [];
  if (noise.length === 0) return NONE;
  const opened: { readonly name: string; readonly id: string }[] = [];
  const now = s.deps.clock.now();
  const endsAtMs = now + expectedStepMs(s.bound.plan);
  for (const n of noise) {
    const matchers: AlertMatcher[] = [
      ...n.matchers.map((m) => ({
        name: m.name,
        value: m.value,
        isRegex: m.isRegex,
        isEqual: m.isEqual,
      })),
      { name: n.nodeLabel, value: s.node, isRegex: false, isEqual: true },
    ];
    if (!am) {
      await record(s, "silence-created", {
        reason: "SilenceNotCreated",
        noise: n.name,
        detail: "no Alertmanager is configured",
      });
      continue;
    }
    try {
      const id = await am.createSilence({
        matchers,
        startsAtMs: now,
        endsAtMs,
        createdBy: `cairn ${s.deps.owner}`,
        comment: `expected noise ${n.name} of plan ${s.bound.plan.metadata.name} on ${s.node} ` +
          `(operation ${s.operationId})`,
      }, { timeoutMs: s.deps.callTimeoutMs(CALL_MS) });
      opened.push({ name: n.name, id });
      await record(s, "silence-created", {
        noise: n.name,
        silence: id,
        matchers: matchers.map((m) =>
          `${m.name}${m.isEqual ? "" : "!"}${m.isRegex ? "=~" : "="}${m.value}`
        ),
        startsAtMs: now,
        endsAtMs,
        at: am.describe(),
      });
    } catch (e) {
      await record(s, "silence-created", {
        reason: "SilenceNotCreated",
        noise: n.name,
        detail: errorText(e),
      });
    }
  }
  return {
    async close() {
      for (const o of opened) {
        try {
          await am!.expireSilence(o.id, { timeoutMs: s.deps.callTimeoutMs(CALL_MS) });
          await record(s, "silence-expired", { noise: o.name, silence: o.id });
        } catch (e) {
          // It still lapses at its end: the lease bounds it whatever happens here.
          await record(s, "silence-expired", {
            reason: "AlertmanagerUnreadable",
            noise: o.name,
            silence: o.id,
            detail: `not confirmed expired (${errorText(e)}); it lapses on its own at its end`,
          });
        }
      }
    },
  };
}

async function record(
  s: StepState,
  kind: "silence-created" | "silence-expired",
  detail: Record<string, unknown>,
): Promise<void> {
  await s.deps.journal.recordRolloutEvent({
    planDigest: s.bound.digest,
    node: s.node,
    kind,
    detail,
    actor: controllerActor(s.deps.owner),
    nowMs: s.deps.clock.now(),
  });
}
