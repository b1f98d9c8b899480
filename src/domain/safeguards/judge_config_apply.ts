/**
 * The execution rows a ConfigApply judges differently from a TalosUpgrade
 * (docs/config-apply.md#mode-and-class), from what the journal recorded. Row 2 does not apply (no
 * image is installed). Row 20: the apply and, for a change that needs explicit activation, the
 * reboot were each attempted on their own, the reboot only after the store was observed. Row 21:
 * a node completed only on a completion observation of the bound postcondition (the patch stored
 * and every changed setting observed active), and no cordon was taken, so none was lifted; the
 * evidence names, per node, which settings were observed active and which are stored but not yet
 * active. Pure.
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
      if (!reboot) bad.push(`${o.machine}: a change needing explicit activation without a reboot`);
      else if (stored && reboot.sentAtMs < stored.atMs) {
        bad.push(`${o.machine}: the reboot was sent before the store was observed`);
      } else rebooted++;
    } else if (reboot) bad.push(`${o.machine}: rebooted for a change that did not need it`);
  }
  return bad.length ? { verdict: "fail", evidence: bad.join("; "), reason: "SafeguardViolated" } : {
    verdict: "pass",
    evidence: `the apply attempted and its store observed on ${done.length} node(s); ` +
      `${rebooted} explicit reboot(s) attempted separately, each after the store`,
  };
}

function activationObserved(c: { ops: readonly RecordedOperation[] } & RecordedPlan): Judged {
  const stepOf = new Map(c.plan.steps.map((s) => [s.step, s]));
  const lines: string[] = [];
  const bad: string[] = [];
  for (const o of c.ops) {
    const seen = o.observations.filter((x) => x.purpose === "completion").at(-1);
    if (seen) lines.push(`${o.machine} (${o.state}): ${seen.summary}`);
    if (o.attempts.some((a) => a.phase === "uncordon" || a.phase === "cordon")) {
      bad.push(`${o.machine}: a ConfigApply step cordoned or uncordoned`);
    }
    if (o.state !== "completed") continue;
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
    evidence: `completed only on a fresh read of each setting's activation, no cordon taken: ${
      lines.join("; ")
    }`,
  };
}
