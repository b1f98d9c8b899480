/**
 * The bound-path attacks at the moment of dispatch: the working tree the dispatch check reads
 * (`cairn apply`, `cairn rehearse`) is swapped after approval so that a bound file is a link —
 * to `/dev/zero`, or out of the repository to a file with the very bytes the plan binds. Neither
 * is followed: the check refuses with `BoundPathSymlink`, quickly, and hands over no policy.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { workingTreeBoundFiles } from "../../../src/adapters/repo/bound_file_reader.ts";
import { parsePlan } from "../../../src/domain/plan/parse.ts";
import { checkAtDispatch } from "../../../src/engine/authorize/dispatch_check.ts";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const PLAN = "plans/talos-v1.14.2.yaml";
const FILES = [
  PLAN,
  "catalogue/talos.yaml",
  "policies/home-ops.yaml",
  "evidence/upgrade-order.yaml",
];
const NOW = Date.parse("2026-12-01T10:00:00Z");

Deno.test("dispatch check refuses bound files swapped for links after approval (BoundPathSymlink)", async () => {
  const base = await Deno.makeTempDir({ prefix: "cairn-dispatch-" });
  try {
    const repo = join(base, "repo");
    await Deno.mkdir(join(repo, ".git"), { recursive: true });
    for (const f of FILES) {
      await Deno.mkdir(dirname(join(repo, f)), { recursive: true });
      await Deno.copyFile(join(ROOT, f), join(repo, f));
    }
    const bytes = await Deno.readFile(join(repo, PLAN));
    const plan = (await parsePlan(bytes, { file: PLAN })).plan;
    const ports = {
      files: workingTreeBoundFiles(join(repo, PLAN)),
      clock: { now: () => NOW, sleep: () => Promise.resolve() },
      cluster: {
        read: (node: string) =>
          Promise.resolve({ name: "home-ops", id: "id-1", source: `test from ${node}` }),
      },
    };
    const subject = { plan, bytes, signatures: "", requiredApprovals: 1 };
    // An identical copy of the policy outside the repository: following the link would pass.
    await Deno.copyFile(join(ROOT, "policies/home-ops.yaml"), join(base, "home-ops.yaml"));
    await Deno.remove(join(repo, "policies/home-ops.yaml"));
    await Deno.symlink(join(base, "home-ops.yaml"), join(repo, "policies/home-ops.yaml"));
    await Deno.remove(join(repo, "catalogue/talos.yaml"));
    await Deno.symlink("/dev/zero", join(repo, "catalogue/talos.yaml"));
    const started = Date.now();
    const r = await checkAtDispatch(subject, ports, "worker-1");
    assert(Date.now() - started < 2_000, `took ${Date.now() - started} ms`);
    assertEquals(r.verdict, "refused");
    assertEquals(r.refusals.map((x) => x.reason), ["BoundPathSymlink", "BoundPathSymlink"]);
    assertEquals(r.policy, undefined, "no policy is handed over for a refused plan");
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});
