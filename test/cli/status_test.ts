/** `cairn status` over a real journal: a libSQL file, and PostgreSQL through `--journal postgres://`. */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { openJournal } from "../../src/adapters/journal/by_url.ts";
import type { CommandIO } from "../../src/cli/command.ts";
import { command, type StatusReport } from "../../src/cli/status.ts";
import type { Journal } from "../../src/ports/journal.ts";
import {
  approvedPlan,
  attemptInput,
  committed,
  CONTROLLER,
  counterIds,
  planInput,
  T0,
} from "../_helpers/journal_world.ts";
import { type JournalStoreKind, LIBSQL_FILE, postgresStore } from "../_helpers/journal_stores.ts";
import { sharedPostgres } from "../_helpers/postgres.ts";

const STORES: readonly JournalStoreKind[] = [LIBSQL_FILE, postgresStore(await sharedPostgres())];

function io(): CommandIO & { out: string[] } {
  const out: string[] = [];
  return {
    out,
    stdout: (t) => void out.push(t),
    stderr: (t) => void out.push(t),
    env: {},
    cwd: "/",
    color: false,
    tty: false,
    signal: new AbortController().signal,
  };
}

/**
 * home-ops: plan A (worker-1..3); worker-1 was sent an install, then taken over → unresolved
 * with an unaccounted attempt, so worker-2 and worker-3 wait for the slot.
 * lab: plan B (lab-1) committed and running. Plan C (lab-2) is proposed only.
 */
async function populate(j: Journal): Promise<void> {
  const steps = ["worker-1", "worker-2", "worker-3"].map((m) => ({
    step: `${m}/0`,
    machine: m,
    preDigest: "v1.13.9",
    postDigest: "v1.14.2",
  }));
  const a = await approvedPlan(j, { steps });
  const c = await committed(j, { plan: a.digest, machine: "worker-1" });
  await j.beginAttempt(attemptInput(c.op.id, c.token, c.evidence, T0 + 3000));
  const { epoch } = await j.installation();
  const taken = await j.takeOver({
    operationId: c.op.id,
    newOwner: "cairn-b",
    seenGen: c.token.gen,
    epoch,
    actor: CONTROLLER,
    nowMs: T0 + 4000,
  });
  assert(taken.ok);
  const lab = [{ step: "lab-1/0", machine: "lab-1", preDigest: "v1.13.9", postDigest: "v1.14.2" }];
  const b = await approvedPlan(j, {
    digest: "b".repeat(64),
    name: "lab-upgrade",
    cluster: "lab",
    steps: lab,
  });
  await committed(j, { plan: b.digest, machine: "lab-1", step: "lab-1/0", at: T0 + 5000 });
  await j.recordPlan(planInput({
    digest: "c".repeat(64),
    name: "lab-next",
    cluster: "lab2",
    steps: [{ step: "lab-2/0", machine: "lab-2", preDigest: "a", postDigest: "b" }],
    nowMs: T0 + 6000,
  }));
}

for (const store of STORES) {
  Deno.test(`${store.name}: cairn status reports running, unresolved and waiting work with reasons`, async () => {
    const { url, dispose } = await store.fresh();
    try {
      const j = await openJournal({ url, ids: counterIds(), nowMs: T0 });
      await populate(j);
      await j.close();

      const json = io();
      assertEquals(
        await command.run({ values: { journal: url, output: "json" }, positionals: [] }, json),
        0,
      );
      const r = JSON.parse(json.out.join("")) as StatusReport;
      assertEquals(r.recoveryMode, false);
      assertEquals(r.running.map((e) => [e.machine, e.state, e.planName]), [
        ["lab-1", "committed", "lab-upgrade"],
      ]);
      assertEquals(r.unresolved.length, 1);
      const u = r.unresolved[0]!;
      assertEquals([u.machine, u.planName, u.attemptsUsed], ["worker-1", "talos-v1.14.2", 1]);
      assert(u.why.some((w) => w.startsWith("taken over from cairn-a/1")), u.why.join("; "));
      assert(u.why.some((w) => w.includes("attempt #1 (install") && w.includes("unaccounted")));
      assertEquals(r.waiting.map((w) => [w.machine, w.why]), [
        ["worker-2", `rollout slot of home-ops held by ${u.operationId} (worker-1, unresolved)`],
        ["worker-3", `rollout slot of home-ops held by ${u.operationId} (worker-1, unresolved)`],
        ["lab-2", "plan awaits approval"],
      ]);

      const text = io();
      assertEquals(await command.run({ values: { journal: url }, positionals: [] }, text), 0);
      const t = text.out.join("");
      assert(
        t.includes("running (1):") && t.includes("unresolved (1):") && t.includes("waiting (3):"),
        t,
      );
      assert(t.includes("    why: taken over from cairn-a/1"), t);
    } finally {
      await dispose();
    }
  });
}

Deno.test("cairn status on an empty journal lists nothing and exits 0", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cairn-status-" });
  try {
    const url = `file:${dir}/journal.db`;
    await (await openJournal({ url, ids: counterIds(), nowMs: T0 })).close();
    const out = io();
    assertEquals(
      await command.run({ values: { journal: url, output: "json" }, positionals: [] }, out),
      0,
    );
    const r = JSON.parse(out.out.join("")) as StatusReport;
    assertEquals([r.running, r.unresolved, r.waiting], [[], [], []]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
