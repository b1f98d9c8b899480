/**
 * The execution rows a ConfigApply judges differently from a TalosUpgrade
 * (docs/config-apply.md#mode-and-class), from what the journal recorded. Row 2 does not apply (no
 * image is installed). Row 20: the apply and, for a change that needs explicit activation, the
 * reboot were each attempted on their own, the reboot only after the store was observed, the
 * node's cordon recorded and its drain completed. Row 21: a node completed only on a completion
 * observation of the bound postcondition (the patch stored and every changed setting observed
 * active), a cordon taken only for a reboot, and only the operation's own cordon lifted (and lifted
 * before it completed); the evidence names, per node, which settings were observed active and
 * which are stored but not yet active. Pure.
 */
import type { RecordedOperation, RecordedPlan } from "./recorded.ts";
import type { Judged } from "./result.ts";
import type { SafeguardId } from "./table.ts";

/** The rows judged here, replacing the TalosUpgrade judges of the same rows. */
export const CONFIG_APPLY_ROWS: ReadonlyArray<
  readonly [SafeguardId, (c: { ops: readonly RecordedOperation[] } & RecordedPlan) => Judged]
> = [
  ["SchematicPreserved", () => ({
    verdict: "not-applicable",
    evidence: "a ConfigApply installs no image; no schematic changes",
  })],
  ["PhasesRecordedSeparately", applyAndRebootSeparate],
  ["PostconditionsThenOwnedUncordon", activationObserved],
];

/** The activation class the apply's intent recorded (`explicitActivation` needs a reboot). */
function activationOf(o: RecordedOperation): string | undefined {
  const intent = o.phases.find((p) => p.phase === "config-apply" && p.kind === "intent");
  const v = intent?.detail["activation"];
  return typeof v === "string" ? v : undefined;
}

function applyAndRebootSeparate(c: { ops: readonly RecordedOperation[] }): Judged {
  const done = c.ops.filter((o) => o.state === "completed");
  if (done.length === 0) {
    return { verdict: "not-evaluated", evidence: "no operation completed yet" };
  }
  const bad: string[] = [];
  let rebooted = 0;
  for (const o of done) {
    const apply = o.attempts.find((a) => a.phase === "config-apply");
    const stored = o.phases.find((p) => p.phase === "config-apply" && p.kind === "fact");
    const reboot = o.attempts.find((a) => a.phase === "reboot");
    if (!apply) bad.push(`${o.machine}: no apply attempt`);
    if (!stored) bad.push(`${o.machine}: the store after the apply was not observed`);
    if (activationOf(o) === "explicitActivation") {
      const cordoned = o.phases.find((p) => p.phase === "cordon" && p.kind === "fact");
      const drain = o.attempts.find((a) => a.phase === "drain");
      if (!reboot) bad.push(`${o.machine}: a change needing explicit activation without a reboot`);
      else if (stored && reboot.sentAtMs < stored.atMs) {
        bad.push(`${o.machine}: the reboot was sent before the store was observed`);
      } else if (!cordoned || cordoned.atMs > reboot.sentAtMs) {
        bad.push(`${o.machine}: rebooted without the node's cordon recorded first`);
      } else if (
        !drain || drain.response?.class !== "accepted" || drain.response.atMs > reboot.sentAtMs
      ) {
        bad.push(`${o.machine}: rebooted without a completed drain first`);
      } else rebooted++;
    } else if (reboot) bad.push(`${o.machine}: rebooted for a change that did not need it`);
  }
  return bad.length ? { verdict: "fail", evidence: bad.join("; "), reason: "SafeguardViolated" } : {
    verdict: "pass",
    evidence: `the apply attempted and its store observed on ${done.length} node(s); ` +
      `${rebooted} explicit reboot(s) attempted separately, each after the store, the node's ` +
      `cordon and a completed drain`,
  };
}

function activationObserved(c: { ops: readonly RecordedOperation[] } & RecordedPlan): Judged {
  const stepOf = new Map(c.plan.steps.map((s) => [s.step, s]));
  const lines: string[] = [];
  const bad: string[] = [];
  for (const o of c.ops) {
    const seen = o.observations.filter((x) => x.purpose === "completion").at(-1);
    if (seen) lines.push(`${o.machine} (${o.state}): ${seen.summary}`);
    const cordon = o.phases.find((p) => p.phase === "cordon" && p.kind === "fact");
    const ours = cordon?.detail["cordonedByOperation"] === true;
    const rebooted = o.attempts.some((a) => a.phase === "reboot");
    if (o.attempts.some((a) => a.phase === "cordon") && !rebooted) {
      bad.push(`${o.machine}: cordoned for a change that needed no reboot`);
    }
    if (o.attempts.some((a) => a.phase === "uncordon") && !ours) {
      bad.push(`${o.machine}: uncordoned a cordon the operation did not record as its own`);
    }
    if (o.state !== "completed") continue;
    const lifted = o.phases.some((p) =>
      p.phase === "uncordon" && p.kind === "fact" && p.detail["decision"] === "uncordoned"
    );
    if (ours && !lifted) bad.push(`${o.machine} completed with its own cordon still in place`);
    if (!seen || seen.digest !== stepOf.get(o.step)?.postDigest) {
      bad.push(`${o.machine} completed without observing every setting active`);
    }
  }
  if (bad.length) return { verdict: "fail", evidence: bad.join("; "), reason: "SafeguardViolated" };
  if (!c.ops.some((o) => o.state === "completed")) {
    return {
      verdict: "not-evaluated",
      evidence: lines.length
        ? `no node completed; ${lines.join("; ")}`
        : "no completion observation recorded yet",
    };
  }
  return {
    verdict: "pass",
    evidence: `completed only on a fresh read of each setting's activation, only an own cordon ` +
      `lifted: ${lines.join("; ")}`,
  };
}
