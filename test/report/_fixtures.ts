/** Report models for tests: the 7-node home-ops rollout, hostile names, and a 500-node run. */
import type { Phase } from "../../src/domain/operation.ts";
import type {
  AttemptAccount,
  ExecutionReportModel,
  HealthRound,
  NodeTimeline,
  PhaseSpan,
  PlanIdentity,
  PreviewReportModel,
  SafeguardResult,
} from "../../src/report/model.ts";
import { SAFEGUARDS } from "../../src/domain/safeguards/table.ts";
import { executionVerdict, previewVerdict } from "../../src/domain/safeguards/verdict.ts";

export const T0 = Date.UTC(2026, 9, 20, 9, 0, 0);
const MIN = 60_000;

export const PLAN: PlanIdentity = {
  name: "talos-v1.14.2",
  kind: "TalosUpgrade",
  cluster: "home-ops",
  digest: "9f2c4e6a0b1d3f5a7c9e1b3d5f7a9c1e3b5d7f9a1c3e5b7d9f1a3c5e7b9d1f3a",
  author: "alice@example.com",
  commit: "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
  branch: "main",
  signers: [
    {
      principal: "alice@example.com",
      role: "author",
      keyFingerprint: "SHA256:aLiCeKeyFingerprint0000000000000000000000000",
      verdict: "valid",
    },
    {
      principal: "bob@example.com",
      role: "approver",
      keyFingerprint: "SHA256:bObKeyFingerprint000000000000000000000000000",
      verdict: "valid",
    },
  ],
  approvals: { required: 1, valid: 1 },
  expiresAt: Date.UTC(2026, 11, 20),
};

const NODES: readonly [string, "worker" | "controlplane"][] = [
  ["worker-1", "worker"],
  ["worker-2", "worker"],
  ["worker-3", "worker"],
  ["worker-4", "worker"],
  ["cp-1", "controlplane"],
  ["cp-2", "controlplane"],
  ["cp-3", "controlplane"],
];

/** Every safeguard passes except a few with honest alternative verdicts. */
export function safeguards(): SafeguardResult[] {
  return SAFEGUARDS.map((s): SafeguardResult => {
    if (s.id === "KubernetesAfterUniformOs" || s.id === "KubernetesSkewChecked") {
      return {
        id: s.id,
        verdict: "not-applicable",
        evidence: "TalosUpgrade plan; no Kubernetes step",
      };
    }
    if (s.id === "MetricsAndMqttHealthy") {
      return {
        id: s.id,
        verdict: "unreadable",
        reason: "ReadTimeout",
        evidence: "no reader bound in policy home-ops@3",
      };
    }
    return {
      id: s.id,
      verdict: "pass",
      evidence: `checked at ${s.placement.join("/")} on current evidence`,
    };
  });
}

const TALOS_STEP: readonly Phase[] = [
  "gate",
  "pull",
  "install",
  "cordon",
  "drain",
  "reboot",
  "boot-observed",
  "verify",
  "uncordon",
  "post-gate",
];

function phasesFor(start: number, last?: Phase): PhaseSpan[] {
  const spans: PhaseSpan[] = [];
  let t = start;
  // A TalosUpgrade node step without hooks, named: phases other kinds or hooks add stay out.
  for (const phase of TALOS_STEP) {
    const took = phase === "drain" || phase === "reboot" ? 3 * MIN : MIN;
    const end = t + took;
    if (phase === last) {
      spans.push({ phase, startedAt: t, outcome: "unresolved", endedAt: end });
      return spans;
    }
    spans.push({ phase, startedAt: t, endedAt: end, outcome: "ok" });
    t = end;
  }
  return spans;
}

function round(
  id: string,
  purpose: HealthRound["purpose"],
  node: string | undefined,
  at: number,
  checks: number,
  failing = 0,
): HealthRound {
  const results = Array.from({ length: checks }, (_, i) => ({
    binding: `binding-${String(i + 1).padStart(2, "0")}`,
    verdict: i < failing ? ("fail" as const) : ("pass" as const),
    ...(i < failing ? { reason: "WorkloadNotReady" } : {}),
    evidence: `Deployment/apps-${i} rv=${1000 + i} observedGeneration=3`,
  }));
  return {
    id,
    purpose,
    ...(node ? { node } : {}),
    startedAt: at,
    endedAt: at + 20_000,
    verdict: failing ? "fail" : "pass",
    results,
  };
}

/** Builds an execution over `nodes` nodes; the last node is left unresolved in reboot. */
export function executionModel(count = 7): ExecutionReportModel {
  const names: [string, "worker" | "controlplane"][] = count === 7
    ? NODES.map(([n, r]) => [n, r])
    : Array.from({ length: count }, (_, i) => [
      i < count - 3 ? `worker-${String(i + 1).padStart(3, "0")}` : `cp-${i - count + 4}`,
      i < count - 3 ? "worker" : "controlplane",
    ]);
  const nodes: NodeTimeline[] = [];
  const attempts: AttemptAccount[] = [];
  const rounds: HealthRound[] = [];
  names.forEach(([node, role], i) => {
    const start = T0 + i * 15 * MIN;
    const last = i === names.length - 1 ? "reboot" : undefined;
    const phases = phasesFor(start, last);
    nodes.push({
      node,
      role,
      state: last ? "unresolved" : "completed",
      phases,
      ...(last ? { note: "reboot response lost; boot ID unchanged at deadline" } : {}),
    });
    for (const ph of phases.filter((p) => ["pull", "install", "reboot"].includes(p.phase))) {
      const lost = last !== undefined && ph.phase === "reboot";
      attempts.push({
        node,
        phase: ph.phase,
        attempt: 1,
        intentAt: ph.startedAt,
        sentAt: ph.startedAt + 50,
        transportDeadline: ph.startedAt + 30_000,
        verificationDeadline: ph.startedAt + 30 * MIN,
        responseClass: lost ? "lost" : "accepted",
        accountedBy: lost ? null : "response",
        ...(lost ? { detail: "no response before the transport deadline" } : {}),
      });
    }
    rounds.push(round(`r${2 * i + 1}`, "gate", node, start, count === 7 ? 6 : 20));
    if (!last) {
      rounds.push(
        round(
          `r${2 * i + 2}`,
          "post-gate",
          node,
          start + 13 * MIN,
          count === 7 ? 6 : 20,
          i === 1 ? 1 : 0,
        ),
      );
    }
  });
  return {
    plan: PLAN,
    generatedAt: T0 + names.length * 15 * MIN,
    outcome: "unresolved",
    ...executionVerdict("unresolved", safeguards()),
    reasons: [{
      reason: "RebootResponseLost",
      message: "the reboot request to the last node has no response",
      where: names.at(-1)![0],
    }],
    safeguards: safeguards(),
    sourceChecks: [
      {
        repository: "siderolabs/talos",
        revision: "9abd05af449ebf9cb1827648298291afce18d714",
        path: "cmd/talosctl/cmd/talos/upgrade.go",
        expectedSha256: "a".repeat(64),
        actualSha256: "a".repeat(64),
        verdict: "pass",
        provenance: {
          kind: "fetched",
          repository: "siderolabs/talos",
          revision: "9abd05af449ebf9cb1827648298291afce18d714",
        },
      },
      {
        repository: "siderolabs/go-kubernetes",
        revision: "0caf1f226727cc05f80b92c27c9116e68fb5532d",
        path: "kubernetes/manifests/inventory.go",
        expectedSha256: "b".repeat(64),
        verdict: "unreadable",
        reason: "EvidenceFileMissing",
      },
    ],
    assertions: [{
      name: "install precedes drain in the lifecycle path",
      verdict: "pass",
      detail: "upgradeInternal is called before drainNodes",
    }],
    healthRounds: rounds,
    components: ["talos"],
    startedAt: T0,
    nodes,
    attempts,
    recoveries: [{
      at: T0 + names.length * 15 * MIN - MIN,
      node: names.at(-1)![0],
      decision: "hold scope; observe boot identity",
      actor: "cairn",
      evidence: "boot ID unchanged; version v1.13.9",
      reason: "RebootResponseLost",
    }],
    journal: { headHash: "c0ffee".repeat(10) + "abcd", eventCount: 412 },
  };
}

/** The preview of the same plan. */
export function previewModel(): PreviewReportModel {
  return {
    plan: { ...PLAN, branch: "plan/talos-v1.14.2" },
    generatedAt: T0,
    // The verdict follows from the rows: row 18 is unreadable, so the preview is not ready.
    ...previewVerdict("ready", safeguards()),
    reasons: [],
    safeguards: safeguards(),
    sourceChecks: executionModel().sourceChecks,
    assertions: executionModel().assertions,
    healthRounds: [round("p1", "preflight", undefined, T0 - MIN, 6)],
    components: ["talos"],
    rollout: NODES.map(([node, role]) => ({ node, role, from: "v1.13.9", to: "v1.14.2" })),
    writes: { count: 0, evidence: "API server audit of the preview identity: 0 mutating requests" },
  };
}

/** Strings an attacker could put in an object name or plan field. */
export const HOSTILE = [
  "<img src=x onerror=alert(1)>",
  "| evil | row |",
  "```\n# injected heading\n```",
  "[click](javascript:alert(1))",
  "**bold** _em_ ~~strike~~ ![img](http://x/y.png)",
  "line1\nline2\r\n| a | b |",
  "@everyone #1 $x$ https://evil.example www.evil.example",
  "cp-1: crit, t9, 2020-01-01 00:00:00, 1s\nsection evil;%%",
  "\u202eevil\u200b<script>",
  "section hijack",
];
