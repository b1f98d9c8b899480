/**
 * The reconcile loop's execution report of a ComponentUpgrade (`reports/<plan>/execution.md`):
 * while it runs, what cairn is waiting for (the merge it must see delivered); at its end, the
 * component report (`render_component.ts`) of what the run observed, with the component's
 * playbook; an end the executor could not observe (it threw) says so with its reasons. Pure.
 */
import {
  COMPONENT_END_EVENT,
  type ComponentEnd,
  type ComponentOutcome,
} from "../domain/component/outcome.ts";
import type { ComponentUpgradePlan } from "../domain/plan/schema.ts";
import type { Playbook } from "../domain/playbook/schema.ts";
import type { ExecutionFacts } from "../ports/reconcile.ts";
import { codeSpan, escapeText } from "./escape.ts";
import { renderComponentReport } from "./render_component.ts";

/**
 * What the run observed: the end it returned, else the end the journal holds from an earlier run
 * (a restart reports it from the start, never RUNNING again).
 */
function observed(f: ExecutionFacts): ComponentOutcome | undefined {
  if (f.end?.component) return f.end.component;
  const e = f.history?.rolloutEvents?.find((x) => x.kind === COMPONENT_END_EVENT);
  const o = e?.detail["outcome"];
  return o && typeof o === "object" ? o as ComponentOutcome : undefined;
}

/** The outcome word of a ComponentUpgrade's execution report (the loop's log and commits). */
export function componentOutcomeWord(f: ExecutionFacts): string {
  const end: ComponentEnd | undefined = observed(f)?.end;
  if (end) return end;
  return f.end ? (f.end.state === "stopped" ? "stopped" : "halted") : "running";
}

/** The report's markdown. */
export function renderComponentExecution(
  f: ExecutionFacts,
  plan: ComponentUpgradePlan,
  playbooks: readonly Playbook[],
): string {
  const outcome = observed(f);
  if (outcome) {
    const playbook = playbooks.find((p) => p.metadata.name === plan.spec.component);
    return renderComponentReport({
      plan,
      digest: f.facts.digest,
      outcome,
      ...(playbook ? { playbook } : {}),
    });
  }
  const out = [`# Execution report: ${escapeText(plan.metadata.name)}`, ""];
  const merge = codeSpan(f.facts.commit);
  if (!f.end) {
    out.push(
      `**Verdict: RUNNING: cairn is observing Flux deliver the merge ${merge} (no verdict yet)**`,
      "",
    );
  } else {
    const why = f.end.reasons.map((r) => `${r.reason}: ${r.message}`).join("; ");
    out.push(
      `**Verdict: ${f.end.state === "stopped" ? "STOPPED" : "HALTED"}: ${
        escapeText(why)
      }; the delivery was not judged**`,
      "",
    );
  }
  out.push(
    `ComponentUpgrade of ${codeSpan(plan.spec.component)} from ${codeSpan(plan.spec.from)} to ` +
      `${codeSpan(plan.spec.to)} on cluster ${codeSpan(plan.metadata.cluster)}. Plan ` +
      `${codeSpan(`sha256:${f.facts.digest}`)}, merged in ${merge}. cairn observes the ` +
      "delivery; it changes nothing in the cluster.",
    "",
  );
  return out.join("\n");
}
