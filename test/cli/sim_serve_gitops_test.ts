/**
 * `cairn sim serve` (the real CLI, the bundled twin process) has a GitOps model the real (pinned)
 * kubectl reads: its Flux objects print Flux's columns with status, and a merge delivered through
 * the control endpoint (`POST /gitops/merge`) shows in `kubectl get kustomizations -A` as the
 * merge commit applied. A malformed merge is refused (400), nothing delivered.
 */
import { deepStrictEqual as assertEquals, ok as assert, rejects } from "node:assert/strict";
import { TwinControl } from "../../src/sim/twin_control.ts";
import { startSimServe } from "../_helpers/sim_serve.ts";

const KUBECTL = Deno.env.get("CAIRN_KUBECTL") ?? "kubectl";
const MERGE = "5e".repeat(20);

async function kubectl(kubeconfig: string, ...args: string[]) {
  const o = await new Deno.Command(KUBECTL, {
    args: ["--kubeconfig", kubeconfig, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assertEquals(o.code, 0, new TextDecoder().decode(o.stderr));
  return new TextDecoder().decode(o.stdout).trimEnd().split("\n").map((l) =>
    l.trim().split(/\s{2,}/)
  );
}

Deno.test("sim serve: kubectl get kustomizations/helmreleases -A, and a merge Flux delivers on the twin", async () => {
  const twin = await startSimServe(["--manual-time"], "cairn-serve-gitops-");
  const kubeconfig = String(twin.facts["kubeconfig"]);
  try {
    const control = new TwinControl(String(twin.facts["control"]));
    const releases = await kubectl(kubeconfig, "get", "helmreleases", "-A");
    assertEquals(releases[0], ["NAMESPACE", "NAME", "AGE", "READY", "STATUS"]);
    assert(releases.some((r) => r[0] === "kube-system" && r[1] === "cilium" && r[3] === "True"));

    await rejects(control.gitopsMerge("not-a-commit"), /400/);
    await control.gitopsMerge(MERGE, { "rook-ceph/rook-ceph": "v1.21.0" });
    await control.advance(60_000);
    const ks = await kubectl(kubeconfig, "get", "kustomizations", "-A");
    assertEquals(ks[0], ["NAMESPACE", "NAME", "AGE", "READY", "STATUS"]);
    const rook = ks.find((r) => r[0] === "flux-system" && r[1] === "rook-ceph");
    assertEquals(rook?.slice(3), ["True", `Applied revision: main@sha1:${MERGE}`]);
  } finally {
    assertEquals(await twin.stop(), 0);
    Deno.removeSync(twin.stateDir, { recursive: true });
  }
});
