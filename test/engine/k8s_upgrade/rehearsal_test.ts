/**
 * `cairn rehearse` of the example KubernetesUpgrade on the socket twin (real gRPC over mTLS and
 * real HTTPS through cairn's own adapters; the twin models the Kubernetes components for it):
 * the named fault `gitops-field-manager` refuses the second operation, naming the object, the
 * field and both managers, and the report fails row 25.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { startRehearsal } from "../../../src/app/rehearsal.ts";
import { TEST_PKI_CACHE } from "../../../src/app/twin_process.ts";
import { K8S_PLAN_PATH } from "../../_helpers/k8s_world.ts";
import { MemoryLogger } from "../../_helpers/memory_logger.ts";
import { ROOT } from "../../_helpers/twin_world.ts";

Deno.test("rehearsal on the socket twin: a GitOps manager appearing mid-run refuses the next operation", async () => {
  const r = await startRehearsal({
    cluster: join(ROOT, "fixtures/clusters/home-ops.yaml"),
    planPath: K8S_PLAN_PATH,
    planBytes: await Deno.readFile(K8S_PLAN_PATH),
    faults: ["gitops-field-manager"],
    journalUrl: ":memory:",
    log: new MemoryLogger(),
    owner: "ctl_test",
    pkiCacheDir: TEST_PKI_CACHE,
  });
  try {
    const out = await r.run();
    assertEquals(out.state, "refused");
    assertEquals(out.nodes.map((n) => [n.node, n.state]), [
      ["cp-1", "completed"],
      ["cp-2", "not-committed"],
    ]);
    const detail = out.nodes[1]!.detail;
    assert(detail.includes("Deployment kube-system/coredns"), detail);
    assert(detail.includes("owned by talos and by kustomize-controller"), detail);
    const md = await r.report(out);
    const row25 = md.split("\n").find((l) => l.startsWith("| 25 |")) ?? "";
    assert(row25.includes("**FAIL**"), row25);
  } finally {
    await r.stop();
  }
});
