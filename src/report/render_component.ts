/**
 * The execution report of a ComponentUpgrade: the verdict first (it follows the observations: a
 * bump whose operator-rendered workloads still run the old image is NOT LANDED, naming the
 * running image), then what was observed of the delivery, every after-merge check of the
 * component's playbook with what decided it (a delivery observation, a health binding of the
 * last round, or a human), the breaking patterns checked, and the rollback caveats. Pure and
 * deterministic; every string escaped.
 */
import type { DeliveryCheck } from "../domain/component/delivery.ts";
import type { RoundOutcome } from "../domain/health/round.ts";
import type { BindingResult } from "../domain/health/types.ts";
import type { ComponentUpgradePlan } from "../domain/plan/schema.ts";
import type { Playbook } from "../domain/playbook/schema.ts";
import { codeSpan, escapeText, tableHead, tableRow, truncate } from "./escape.ts";

/** What the report is made from (the engine's ComponentOutcome has this shape). */
export interface ComponentReportInput {
  readonly plan: ComponentUpgradePlan;
  readonly digest: string;
  readonly playbook?: Playbook;
  readonly outcome: {
    readonly end:
      | "completed"
      | "not-landed"
      | "not-delivered"
      | "health-failed"
      | "unresolved"
      | "refused";
    readonly refusal?: { readonly reason: string; readonly detail: string };
    readonly delivery?: {
      readonly checks: readonly DeliveryCheck[];
      readonly observations: readonly { readonly atMs: number; readonly check: DeliveryCheck }[];
      readonly passes: number;
      readonly startedAtMs: number;
      readonly endedAtMs: number;
      readonly landedAtMs?: number;
    };
    readonly rounds: readonly { readonly roundId: string; readonly outcome: RoundOutcome }[];
    readonly pins: readonly {
      readonly path: string;
      readonly sha256: string;
      readonly ok: boolean;
    }[];
  };
}

/** The after-merge check's verdict as the report judges it. */
export type AfterMergeVerdict = "pass" | "fail" | "unreadable" | "not checked" | "manual";

/** One playbook after-merge check and what decided it. */
export interface AfterMergeRow {
  readonly id: string;
  readonly summary: string;
  readonly verdict: AfterMergeVerdict;
  readonly evidence: string;
}

/** Playbook readers → the policy readers (result labels) that make the same check. */
const POLICY_READERS: Readonly<Record<string, (label: string) => boolean>> = {
  "ceph-health": (l) => l.startsWith("kube-object ceph.rook.io/"),
  "cnpg-cluster": (l) => l.startsWith("kube-object postgresql.cnpg.io/"),
  "object-store-endpoint": (l) => l === "object-store-endpoint",
  "broker-stream-health": (l) => l === "broker-streams",
  "metrics-storage-operator": (l) => l === "metrics-storage",
  "mqtt-cluster-members": (l) => l === "mqtt-cluster",
  nodes: (l) => l === "nodes",
  workloads: (l) => l === "workloads",
  "kube-object": (l) => l.startsWith("kube-object "),
  "node-versions": (l) => l === "node-versions",
  "talos-etcd": (l) => l === "talos-etcd",
  "talos-services": (l) => l === "talos-services",
};

/** Every after-merge check of the playbook, judged from the outcome. */
export function afterMergeRows(input: ComponentReportInput): AfterMergeRow[] {
  const checks = input.playbook?.spec.afterMerge ?? [];
  const delivery = input.outcome.delivery?.checks ?? [];
  const last = input.outcome.rounds.at(-1)?.outcome;
  return checks.map((c) => {
    const base = { id: c.id, summary: c.summary };
    if (c.reader === "manual") {
      return { ...base, verdict: "manual", evidence: "cairn cannot make this check; a human does" };
    }
    if (c.reader.startsWith("flux-") || c.reader === "workload-images") {
      const mine = delivery.filter((d) =>
        c.reader === "workload-images"
          ? d.id.startsWith("images:")
          : c.reader === "flux-source"
          ? d.id === "source"
          // The release at the target, and the Kustomization that applied it at the merge.
          : d.id === "release" || d.id === "applied"
      );
      if (mine.length === 0) {
        return {
          ...base,
          verdict: "not checked",
          evidence: input.outcome.delivery
            ? "the plan names nothing for this check to observe"
            : "the delivery was not observed",
        };
      }
      return {
        ...base,
        verdict: worst(mine.map((d) => d.verdict)),
        evidence: mine.map((d) => d.detail).join("; "),
      };
    }
    const match = POLICY_READERS[c.reader];
    const results: BindingResult[] = match && last
      ? last.results.filter((r) => match(r.reader))
      : [];
    if (!last) {
      return { ...base, verdict: "not checked", evidence: "no after-merge round ran" };
    }
    if (results.length === 0) {
      return {
        ...base,
        verdict: "not checked",
        evidence: `the bound health policy has no ${c.reader} binding`,
      };
    }
    return {
      ...base,
      verdict: worst(results.map((r) => r.verdict)),
      evidence: results.map((r) => `${r.binding}: ${r.verdict} (${r.message})`).join("; "),
    };
  });
}

function worst(vs: readonly string[]): AfterMergeVerdict {
  if (vs.includes("fail")) return "fail";
  if (vs.some((v) => v === "unreadable" || v === "pending")) {
    return vs.includes("unreadable") ? "unreadable" : "fail";
  }
  return "pass";
}

/** The headline: it follows the end and the after-merge rows, never more than they show. */
export function componentVerdict(
  input: ComponentReportInput,
  rows: readonly AfterMergeRow[],
): string {
  const o = input.outcome;
  switch (o.end) {
    case "refused":
      return `REFUSED: ${o.refusal?.reason ?? "?"}: ${
        o.refusal?.detail ?? ""
      }; nothing was observed`;
    case "not-landed": {
      const stale =
        o.delivery?.checks.filter((c) => c.id.startsWith("images:") && c.verdict !== "pass") ?? [];
      return `NOT LANDED: Flux delivered ${input.plan.spec.to}, but ${
        stale.map((c) => c.detail).join("; ")
      }; an operator that does not re-render rolls nothing`;
    }
    case "not-delivered": {
      const stuck = o.delivery?.checks.filter((c) => c.verdict !== "pass").map((c) => c.detail) ??
        [];
      return `NOT DELIVERED: by the deadline ${stuck.join("; ")}`;
    }
    case "health-failed":
      return `AFTER-MERGE CHECKS FAILED: ${o.rounds.at(-1)?.outcome.message ?? ""}`;
    case "unresolved":
      return "UNRESOLVED: the evidence could not be read by the deadline; neither completed nor failed";
    case "completed": {
      const unchecked = rows.filter((r) => r.verdict !== "pass" && r.verdict !== "manual");
      const manual = rows.filter((r) => r.verdict === "manual").length;
      if (unchecked.length) {
        return `COMPLETED, NOT VERIFIED: after-merge check(s) ${
          unchecked.map((r) => r.id).join(", ")
        } not seen to pass`;
      }
      return `COMPLETED: delivered, landed and every after-merge check cairn can make passed` +
        (manual ? ` (${manual} left to a human)` : "");
    }
  }
}

function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.000Z$/, "Z");
}

/** The report as markdown. */
export function renderComponentReport(input: ComponentReportInput): string {
  const { plan, outcome } = input;
  const spec = plan.spec;
  const rows = afterMergeRows(input);
  const out: string[] = [];
  out.push(`# Execution report: ${escapeText(plan.metadata.name)}`, "");
  out.push(`**Verdict: ${escapeText(truncate(componentVerdict(input, rows), 900))}**`, "");
  out.push(
    `ComponentUpgrade of ${codeSpan(spec.component)} from ${codeSpan(spec.from)} to ` +
      `${codeSpan(spec.to)} on cluster ${codeSpan(plan.metadata.cluster)}, delivered by Flux ` +
      `(${codeSpan(`${spec.flux.kind} ${spec.flux.namespace}/${spec.flux.name}`)}). Plan ` +
      `${codeSpan(`sha256:${input.digest}`)}. cairn observed the delivery; it changed nothing in ` +
      "the cluster.",
    "",
  );
  if (spec.change) {
    out.push("## The reviewed change", "");
    out.push(
      `Base ${codeSpan(spec.change.base)}, head ${codeSpan(spec.change.head)}. Pin files, held ` +
        "to their reviewed digests at dispatch:",
      "",
    );
    out.push(...tableHead(["file", "bound sha256", "as read"]));
    for (const p of spec.change.pins) {
      const seen = outcome.pins.find((x) => x.path === p.path);
      out.push(tableRow([
        codeSpan(p.path),
        codeSpan(p.sha256.slice(0, 16) + "…"),
        seen
          ? (seen.ok ? "matches" : `**differs** (${codeSpan(seen.sha256.slice(0, 16) + "…")})`)
          : "not read",
      ]));
    }
    out.push("");
  }
  if (outcome.delivery) {
    const d = outcome.delivery;
    out.push("## Delivery", "");
    out.push(
      `${d.passes} observation pass(es) from ${iso(d.startedAtMs)} to ${iso(d.endedAtMs)}` +
        (d.landedAtMs !== undefined ? `; landed at ${iso(d.landedAtMs)}` : "; never landed") + ".",
      "",
    );
    out.push(...tableHead(["part", "verdict", "as last read"]));
    for (const c of d.checks) out.push(tableRow([codeSpan(c.id), c.verdict, escapeText(c.detail)]));
    out.push("", "<details><summary>Every change observed</summary>", "");
    out.push(...tableHead(["at", "part", "verdict", "observation"]));
    for (const ob of d.observations) {
      out.push(
        tableRow([
          iso(ob.atMs),
          codeSpan(ob.check.id),
          ob.check.verdict,
          escapeText(ob.check.detail),
        ]),
      );
    }
    out.push("", "</details>", "");
  }
  out.push("## After-merge checks", "");
  if (rows.length === 0) {
    out.push("No playbook was read for this component: no after-merge checks are listed.", "");
  } else {
    out.push(...tableHead(["check", "verdict", "what it checks", "evidence"]));
    for (const r of rows) {
      out.push(
        tableRow([
          codeSpan(r.id),
          r.verdict,
          escapeText(r.summary),
          escapeText(truncate(r.evidence, 600)),
        ]),
      );
    }
    out.push("");
  }
  if (outcome.rounds.length) {
    const last = outcome.rounds.at(-1)!.outcome;
    out.push(
      `${outcome.rounds.length} after-merge round(s) of the bound policy ${
        codeSpan(last.policy)
      }; ` +
        `the last (${iso(last.window.startedAtMs)}) ${
          last.verdict === "pass" ? "passed" : `did not pass: ${escapeText(last.message)}`
        }.`,
      "",
    );
    out.push(...tableHead(["binding", "reader", "verdict", "coverage", "message"]));
    for (const r of last.results) {
      out.push(tableRow([
        codeSpan(r.binding),
        codeSpan(r.reader),
        r.verdict,
        `${r.coverage.observed}/${r.coverage.required}`,
        escapeText(truncate(r.message, 300)),
      ]));
    }
    out.push("");
  }
  const patterns = input.playbook?.spec.breakingPatterns ?? [];
  if (patterns.length) {
    out.push("## Breaking patterns checked", "");
    out.push(...tableHead(["pattern", "detection", "how it was checked", "required action"]));
    for (const p of patterns) {
      const row = p.check ? rows.find((r) => r.id === p.check) : undefined;
      const how = p.detection === "preflight"
        ? "before merge, by `cairn review` on the branch"
        : row
        ? `after merge: ${row.id} ${row.verdict}`
        : "after merge: no check observes it";
      out.push(
        tableRow([
          escapeText(truncate(p.pattern, 300)),
          p.detection,
          how,
          escapeText(truncate(p.action, 400)),
        ]),
      );
    }
    out.push("");
  }
  const caveats = input.playbook?.spec.rollback ?? [];
  if (caveats.length) {
    out.push("## Rollback caveats", "");
    for (const c of caveats) {
      const scope = c.kind === "one-way" && c.scope
        ? ` (${c.scope}${c.companion ? `, ${c.companion}` : ""})`
        : "";
      out.push(`- **${c.kind}**${escapeText(scope)}: ${escapeText(c.text)}`);
    }
    out.push("");
  }
  return out.join("\n");
}
