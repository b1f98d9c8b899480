/**
 * The activation classification of a whole effective diff for one Talos minor, and what it means
 * for the plan: the class the plan declared must be the class the diff has, an unknown change
 * holds, and the mode must be one that can reach the class (docs/config-apply.md#mode-and-class).
 */
import type { Reason } from "../reasons.ts";
import {
  ACTIVATION_TABLE,
  type ActivationClass,
  type ActivationRule,
  type ChangeMatch,
  ruleFor,
  stricter,
} from "./activation_table.ts";
import type { ConfigChange } from "./config_diff.ts";

/** One changed path with the rule that classified it (none: unknown). */
export interface ClassifiedChange {
  readonly change: ConfigChange;
  readonly class: ActivationClass;
  readonly rule?: ActivationRule;
}

/** The classification of a whole effective diff. */
export interface Classification {
  readonly minor: number;
  readonly changes: readonly ClassifiedChange[];
  /** The most demanding class of any change; `immediate` for an empty diff. */
  readonly overall: ActivationClass;
}

/** Classifies every change of a diff under the table for `minor`. */
export function classifyDiff(
  minor: number,
  changes: readonly ConfigChange[],
  table: readonly ActivationRule[] = ACTIVATION_TABLE,
): Classification {
  const out: ClassifiedChange[] = [];
  let overall: ActivationClass = "immediate";
  for (const change of changes) {
    for (const c of classifyOne(minor, change, table)) {
      out.push(c);
      overall = stricter(overall, c.class);
    }
  }
  return { minor, changes: out, overall };
}

/**
 * A kernel-module change is split: added modules and removed-or-changed ones are classified by
 * their own rules, so an addition cannot hide a removal.
 */
function classifyOne(
  minor: number,
  change: ConfigChange,
  table: readonly ActivationRule[],
): ClassifiedChange[] {
  const parts: Array<{ change: ConfigChange; match: Exclude<ChangeMatch, "any">[] | "any" }> = [];
  if (change.modules) {
    const m = change.modules;
    if (m.removed.length || m.changed.length) {
      parts.push({
        change: { ...change, modules: { added: [], removed: m.removed, changed: m.changed } },
        match: ["module-removed-or-changed"],
      });
    }
    if (m.added.length) {
      parts.push({
        change: { ...change, modules: { added: m.added, removed: [], changed: [] } },
        match: ["module-added"],
      });
    }
  } else parts.push({ change, match: "any" });
  return parts.map((p) => {
    const rule = ruleFor(minor, p.change.path, p.match, table);
    return rule
      ? { change: p.change, class: rule.class, rule }
      : { change: p.change, class: "unknown" };
  });
}

/** A plan's apply mode as written. */
export type PlanApplyMode = "noReboot" | "reboot" | "staged" | "try";

/** The Talos wire mode cairn sends for a plan mode; always explicit (the proto default reboots). */
export function talosMode(mode: PlanApplyMode): "NO_REBOOT" | "REBOOT" | "STAGED" | "TRY" {
  switch (mode) {
    case "noReboot":
      return "NO_REBOOT";
    case "reboot":
      return "REBOOT";
    case "staged":
      return "STAGED";
    case "try":
      return "TRY";
  }
}

/** A reason a mode or class refuses a plan, with words for the report. */
export interface ConfigRefusal {
  readonly reason: Reason;
  readonly message: string;
}

/**
 * Whether the running Talos minor accepts the mode at all (protocols.md A3: from v1.14 REBOOT is
 * `UNIMPLEMENTED` outside maintenance, and AUTO means NO_REBOOT; cairn never sends AUTO).
 */
export function modeRejectedByVersion(
  minor: number,
  mode: PlanApplyMode,
): ConfigRefusal | undefined {
  if (mode === "reboot" && minor >= 14) {
    return {
      reason: "ConfigApplyModeUnsupported",
      message: `Talos 1.${minor} rejects ApplyConfiguration mode REBOOT`,
    };
  }
  return undefined;
}

/**
 * Whether the mode can bring the class about with every step journaled on its own:
 * - `reboot` applies and reboots in one call on 1.13 (one opaque step), never executed;
 * - `try` reverts by itself after its timeout, so a completion could never be established;
 * - `immediate` needs `noReboot`; `explicitActivation` needs `staged` followed by cairn's own
 *   reboot; `installUpgradeOnly` stores with `noReboot` or `staged` (nothing activates it);
 * - `unknown` holds for review whatever the mode.
 */
export function modeFitsClass(
  mode: PlanApplyMode,
  cls: ActivationClass,
): ConfigRefusal | undefined {
  if (cls === "unknown") {
    return {
      reason: "ConfigActivationUnknown",
      message: "the effective change has a setting no activation rule covers; held for review",
    };
  }
  if (mode === "reboot") {
    return {
      reason: "ConfigApplyModeMismatch",
      message: "mode reboot stores and reboots in one call; cairn stages and reboots as two " +
        "journaled operations (use staged)",
    };
  }
  if (mode === "try") {
    return {
      reason: "ConfigApplyModeMismatch",
      message: "mode try reverts on its own after a timeout; its completion cannot be established",
    };
  }
  const fits = cls === "immediate"
    ? mode === "noReboot"
    : cls === "explicitActivation"
    ? mode === "staged"
    : mode === "noReboot" || mode === "staged";
  if (fits) return undefined;
  return {
    reason: "ConfigApplyModeMismatch",
    message: `mode ${mode} cannot bring a ${cls} change into effect (` +
      (cls === "immediate" ? "use noReboot" : cls === "explicitActivation" ? "use staged" : "") +
      ")",
  };
}

/** The class the plan declared must be the class of the effective diff it will send. */
export function declaredClassRefusal(
  declared: ActivationClass,
  c: Classification,
): ConfigRefusal | undefined {
  if (c.overall === "unknown" || declared === c.overall) return undefined;
  const paths = c.changes.filter((x) => x.class === c.overall).map((x) => x.change.path);
  return {
    reason: "ConfigActivationMismatch",
    message: `the plan declares ${declared}, the effective change is ${c.overall} (${
      [...new Set(paths)].join(", ")
    })`,
  };
}
