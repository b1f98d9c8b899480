/**
 * `cairn demo --component rook-ceph`: the review → merge → observe loop over a real git
 * repository and the in-process twin. The review judged the Renovate-like branch, the signed plan
 * rode the branch into main, the twin's Flux delivered the merge, cairn observed it land and
 * committed the execution report to the repository.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { gitText } from "../../src/adapters/git/run_git.ts";
import { runComponentDemo } from "../../src/app/demo_component.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

Deno.test("the component demo reviews, merges, observes and commits a COMPLETED report", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cairn-demo-component-test-" });
  try {
    const lines: string[] = [];
    const r = await runComponentDemo({
      dir,
      root: ROOT,
      component: "rook-ceph",
      staleOperator: false,
      say: (l) => lines.push(l),
    });
    assertEquals([r.end, r.exitCode, r.reportVerdict], ["completed", 0, "COMPLETED"]);
    // The review named the companions riding the operator and cluster charts.
    const review = await Deno.readTextFile(r.reviewPath);
    assert(review.includes("cephcsi and the CSI sidecars rides along: v3.17.1 → v3.18.1"), review);
    // The plan and its signatures came in with the merge; the report is committed after it.
    const log = await gitText(["log", "--format=%s", "--first-parent", "-2", "main"], {
      cwd: r.repo,
    });
    assertEquals(log.trim().split("\n"), [
      "cairn: execution report of rook-ceph-v1.21.0",
      "Merge renovate/rook-ceph-1.x",
    ]);
    const merged = await gitText(["log", "--format=%s", "-1", "main~1^2"], { cwd: r.repo });
    assertEquals(merged.trim(), "Plan rook-ceph-v1.21.0");
    const committed = await gitText(
      ["show", "main:reports/rook-ceph-v1.21.0/execution.md"],
      { cwd: r.repo },
    );
    assert(committed.includes("| `csi-plugin-images` | pass |"), committed);
    assert(lines.some((l) => l.includes("rook-ceph operator reconciled its Driver CRs")));
    assert((await Deno.stat(join(dir, "journal.db"))).isFile);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
