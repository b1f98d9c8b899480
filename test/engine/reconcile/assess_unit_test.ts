/**
 * assessPlan (engine/reconcile/assess.ts) reads a plan's bound files ahead, at once, when its
 * source can (two git processes instead of two or three per file), and a read-ahead never changes
 * what the assessment finds.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { assessPlan } from "../../../src/engine/reconcile/assess.ts";
import { parseAllowedSigners } from "../../../src/domain/trust/allowed_signers.ts";
import type { PlanSource } from "../../../src/ports/plan_source.ts";
import { MemoryPlanSource } from "../../_helpers/memory_git.ts";
import { ROOT } from "../../_helpers/twin_world.ts";

const PLAN = "talos-v1.14.2";
const PLAN_PATH = `plans/${PLAN}.yaml`;

async function world() {
  const source = new MemoryPlanSource("main", () => Date.parse("2026-06-01T00:00:00Z"));
  const files: Record<string, string> = {};
  for (
    const f of [
      "catalogue/talos.yaml",
      "policies/home-ops.yaml",
      "evidence/upgrade-order.yaml",
      PLAN_PATH,
    ]
  ) {
    files[f] = await Deno.readTextFile(join(ROOT, f));
  }
  const commit = await source.commit("main", files);
  const file = (await source.listPlans(commit)).plans.find((p) => p.name === PLAN)!;
  return { source, commit, file };
}

/** The source with a read-ahead that records, in order with the reads, what it was asked. */
function recording(
  source: PlanSource,
  prefetch: (c: string, ps: readonly string[]) => Promise<void>,
) {
  const calls: string[] = [];
  const wrapped: PlanSource = {
    fetch: (o) => source.fetch(o),
    listPlans: (c) => source.listPlans(c),
    introductions: (c, s) => source.introductions(c, s),
    readFile: (c, p) => {
      calls.push(`read ${c} ${p}`);
      return source.readFile(c, p);
    },
    prefetch: (c, ps) => {
      calls.push(`prefetch ${c} ${ps.join(",")}`);
      return prefetch(c, ps);
    },
  };
  return { wrapped, calls };
}

function ctx(source: PlanSource, commit: string) {
  return {
    source,
    signers: parseAllowedSigners("", "allowed_signers"),
    requiredApprovals: 1,
    nowMs: Date.parse("2026-06-01T00:00:00Z"),
    branch: "main",
    commit,
  };
}

Deno.test("assessPlan reads every bound file's candidate paths ahead, at once, before any single read", async () => {
  const { source, commit, file } = await world();
  const r = recording(source, () => Promise.resolve());
  await assessPlan(file, ctx(r.wrapped, commit));
  assert(r.calls.length > 1, r.calls.join("\n"));
  assertEquals(
    r.calls[0],
    `prefetch ${commit} ${
      [
        "plans/catalogue/talos.yaml",
        "catalogue/talos.yaml",
        "plans/evidence/upgrade-order.yaml",
        "evidence/upgrade-order.yaml",
        "policies/home-ops.yaml",
      ].join(",")
    }`,
  );
  assertEquals(r.calls.filter((c) => c.startsWith("prefetch")).length, 1);
});

Deno.test("assessPlan: a read-ahead that fails changes nothing the assessment finds", async () => {
  const { source, commit, file } = await world();
  const plain = await assessPlan(file, ctx(source, commit));
  const r = recording(source, () => Promise.reject(new Error("git died")));
  const failed = await assessPlan(file, ctx(r.wrapped, commit));
  assertEquals(JSON.stringify(failed.facts), JSON.stringify(plain.facts));
  assert(r.calls.some((c) => c.startsWith("read ")), "the files were read one by one instead");
});

const reasonsOf = (a: Awaited<ReturnType<typeof assessPlan>>) =>
  a.facts.refusals.map((r) => r.reason);

Deno.test("assessPlan refuses a plan the journal bound under its name to another digest", async () => {
  const { source, commit, file } = await world();
  const a = await assessPlan(file, { ...ctx(source, commit), boundDigest: "0".repeat(64) });
  assert(reasonsOf(a).includes("PlanChangedAfterApproval"), reasonsOf(a).join(","));
  const same = await assessPlan(file, { ...ctx(source, commit), boundDigest: a.facts.digest });
  assert(!reasonsOf(same).includes("PlanChangedAfterApproval"));
});

Deno.test("assessPlan refuses a plan that fails plan check at this commit (expired)", async () => {
  const { source, commit, file } = await world();
  const fresh = await assessPlan(file, ctx(source, commit));
  assert(!reasonsOf(fresh).includes("PlanExpired"));
  const late = await assessPlan(file, {
    ...ctx(source, commit),
    nowMs: Date.parse("2027-01-30T00:00:00Z"),
  });
  assert(reasonsOf(late).includes("PlanExpired"), reasonsOf(late).join(","));
});

Deno.test("assessPlan refuses a plan whose metadata.name is not its file name, and one that does not parse", async () => {
  const { source } = await world();
  const bytes = await Deno.readTextFile(join(ROOT, PLAN_PATH));
  const commit = await source.commit("main", {
    "plans/talos-renamed.yaml": bytes,
    "plans/broken.yaml": "apiVersion: cairn.dev/v1alpha1\nkind: [TalosUpgrade\n",
  });
  const plans = (await source.listPlans(commit)).plans;
  const renamed = await assessPlan(
    plans.find((p) => p.name === "talos-renamed")!,
    ctx(source, commit),
  );
  assert(
    renamed.facts.refusals.some((r) =>
      r.reason === "PlanInvalid" && r.message.includes("differs from the file name")
    ),
    reasonsOf(renamed).join(","),
  );
  const broken = await assessPlan(plans.find((p) => p.name === "broken")!, ctx(source, commit));
  assertEquals(broken.facts.plan, undefined);
  assert(broken.facts.refusals.length > 0, "a plan that does not parse was not refused");
  assertEquals(
    broken.facts.refusals.map((r) => r.reason),
    (broken.facts.problems ?? []).map((p) => p.reason),
  );
});
