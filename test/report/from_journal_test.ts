import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { executionReportFromJournal, type PlanNode } from "../../src/report/from_journal.ts";
import type { PlanHistory } from "../../src/ports/journal_history.ts";
import { HOPS, recorded } from "./_rollout_history.ts";
import { renderExecutionReport } from "../../src/report/render_execution.ts";
import type { PlanIdentity } from "../../src/report/model.ts";
import { checkMarkdown } from "./_markdown_check.ts";

const GOLDEN = new URL("./golden/execution_from_journal.md.golden", import.meta.url);

const NODES: PlanNode[] = [
  ...["worker-1", "worker-2", "worker-3", "worker-4"].map((name) => ({
    name,
    role: "worker" as const,
  })),
  ...["cp-1", "cp-2", "cp-3"].map((name) => ({ name, role: "controlplane" as const })),
];

function identity(digest: string): PlanIdentity {
  return {
    name: "talos-v1.14.2",
    kind: "TalosUpgrade",
    cluster: "home-ops",
    digest,
    author: "alice@example.com",
    commit: "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
    branch: "main",
    signers: [],
    approvals: { required: 1, valid: 1 },
  };
}

async function model() {
  const { history, head, count } = await recorded();
  return executionReportFromJournal({
    history,
    identity: identity(history.plan.digest),
    nodes: NODES,
    hops: HOPS,
    head: { headHash: head, eventCount: count },
    generatedAt: Date.UTC(2026, 11, 1, 10),
  });
}

Deno.test("executionReportFromJournal() renders a recorded twin rollout byte-identically to the golden", async () => {
  const md = renderExecutionReport(await model());
  if (Deno.env.get("UPDATE") === "1") await Deno.writeTextFile(GOLDEN, md);
  assertEquals(md, await Deno.readTextFile(GOLDEN));
  assertEquals(renderExecutionReport(await model()), md, "re-rendering changed bytes");
  assertEquals(checkMarkdown(md), []);
});

Deno.test("executionReportFromJournal() accounts every attempt with intent, send, deadlines and response", async () => {
  const m = await model();
  assertEquals(m.outcome, "completed");
  assertEquals(m.nodes.map((n) => n.state), Array(7).fill("completed"));
  assertEquals(m.attempts.length, 42);
  for (const a of m.attempts) {
    assert(a.intentAt <= a.sentAt!, `${a.node} ${a.phase}: intent after send`);
    assert(a.transportDeadline <= a.verificationDeadline);
    assertEquals([a.responseClass, a.accountedBy], ["accepted", "response"]);
  }
  const w1 = m.attempts.filter((a) => a.node === "worker-1").map((a) => a.phase);
  assertEquals(w1, ["pull", "install", "cordon", "drain", "reboot", "uncordon"]);
});

Deno.test("executionReportFromJournal() lays each node's phases end to end in journal order", async () => {
  const m = await model();
  for (const n of m.nodes) {
    assertEquals(n.phases[0]?.phase, "gate", n.node);
    assertEquals(n.phases.at(-1)?.phase, "post-gate", n.node);
    for (let i = 1; i < n.phases.length; i++) {
      assertEquals(n.phases[i]!.startedAt, n.phases[i - 1]!.endedAt, `${n.node} gap`);
    }
  }
  const order = m.nodes.map((n) => n.phases[0]!.startedAt);
  assertEquals(order, order.slice().sort((a, b) => a - b), "nodes not in plan order");
  const failedPostGates = m.healthRounds.filter((r) =>
    r.purpose === "post-gate" && r.verdict !== "pass"
  );
  assert(failedPostGates.length > 0, "the recorded rollout waited on failing post-gates");
  assertEquals(m.safeguards.find((s) => s.id === "PostGateBeforeNextNode")?.verdict, "pass");
});

Deno.test("executionReportFromJournal() turns an operation left unresolved into an unresolved outcome naming the node and reason", async () => {
  const { history, head, count } = await recorded();
  const lost: PlanHistory = {
    ...history,
    operations: history.operations.map((o) =>
      o.machine !== "cp-3" ? o : {
        ...o,
        state: "unresolved",
        attempts: o.attempts.map((a) =>
          a.phase === "reboot" ? { ...a, response: null, accountedBy: null } : a
        ),
        transitions: [...o.transitions, {
          seq: 1e6,
          atMs: 0,
          from: "sending",
          to: "unresolved",
          reason: "RebootResponseLost: no answer before the deadline",
        }],
      }
    ),
  };
  const m = executionReportFromJournal({
    history: lost,
    identity: identity(history.plan.digest),
    nodes: NODES,
    hops: HOPS,
    head: { headHash: head, eventCount: count },
    generatedAt: Date.UTC(2026, 11, 1, 10),
  });
  assertEquals(m.outcome, "unresolved");
  assertEquals(m.reasons[0], {
    reason: "RebootResponseLost",
    message: "no answer before the deadline",
    where: "cp-3",
  });
  const reboot = m.attempts.find((a) => a.node === "cp-3" && a.phase === "reboot")!;
  assertEquals([reboot.responseClass, reboot.accountedBy], [null, null]);
  const md = renderExecutionReport(m);
  assert(md.includes("UNRESOLVED"));
  assertEquals(checkMarkdown(md), []);
});

Deno.test("executionReportFromJournal() never shows a word outside the reason catalogue as a reason code", async () => {
  const { history, head, count } = await recorded();
  const odd: PlanHistory = {
    ...history,
    operations: history.operations.map((o) =>
      o.machine !== "cp-3" ? o : {
        ...o,
        state: "unresolved",
        transitions: [...o.transitions, {
          seq: 1e6,
          atMs: 0,
          from: "verifying",
          to: "unresolved",
          reason: "NotACatalogueCode: written by something else",
        }],
      }
    ),
  };
  const m = executionReportFromJournal({
    history: odd,
    identity: identity(history.plan.digest),
    nodes: NODES,
    hops: HOPS,
    head: { headHash: head, eventCount: count },
    generatedAt: Date.UTC(2026, 11, 1, 10),
  });
  assertEquals(m.reasons[0], {
    reason: "ExecutionHalted",
    message: "NotACatalogueCode: written by something else",
    where: "cp-3",
  });
});
