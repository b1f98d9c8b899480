/**
 * The twin's GitOps model as the real (pinned) kubectl sees it: `get kustomizations`,
 * `helmreleases`, `gitrepositories` and `ocirepositories -A` print the columns Flux's CRDs
 * declare (AGE, READY, STATUS, URL for sources, in each CRD's order), the STATUS carrying the
 * revision Flux writes there; after a merge delivered on the twin's clock the same commands show
 * the merge commit applied, the chart fetched and the release upgraded. Run as `cairn sim serve`
 * wires the Kubernetes side, in process, on a still virtual clock.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { parse } from "yaml";
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { ClusterDescriptionSchema } from "../../../src/sim/cluster_description.ts";
import { SimClock } from "../../../src/sim/clock.ts";
import { FaultSchedule } from "../../../src/sim/faults.ts";
import { startTwinKube } from "../../../src/sim/twin_kube.ts";

const KUBECTL = Deno.env.get("CAIRN_KUBECTL") ?? "kubectl";
const FIXTURE = new URL("../../../fixtures/clusters/home-ops.yaml", import.meta.url);
const FIXTURE_REVISION = "main@sha1:0123456789abcdef0123456789abcdef01234567";
const MERGE = "4d".repeat(20);

async function kubectl(kubeconfig: string, ...args: string[]) {
  const o = await new Deno.Command(KUBECTL, {
    args: ["--kubeconfig", kubeconfig, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: o.code,
    out: new TextDecoder().decode(o.stdout),
    err: new TextDecoder().decode(o.stderr),
  };
}

/** The header cells, and the rows as cells (kubectl separates columns by 2+ spaces). */
function table(out: string): { head: string[]; rows: string[][] } {
  const [head, ...lines] = out.trimEnd().split("\n").map((l) => l.trim().split(/\s{2,}/));
  return { head: head!, rows: lines };
}

Deno.test("kubectl get kustomizations, helmreleases and Flux sources -A print Flux's columns and revisions, before and after a merge", async () => {
  const stateDir = mkdtempSync(join(tmpdir(), "cairn-kube-flux-"));
  const description = ClusterDescriptionSchema.parse(parse(Deno.readTextFileSync(FIXTURE)));
  const clock = new SimClock(Date.parse(description.spec.startTime));
  const kube = await startTwinKube({
    clock,
    faults: new FaultSchedule(),
    description,
    stateDir,
    pkiCacheDir: undefined,
  });
  const get = async (resource: string) => {
    const r = await kubectl(kube.kubeconfigPath, "get", resource, "-A");
    assertEquals(r.code, 0, r.err);
    return table(r.out);
  };
  const row = (t: { rows: string[][] }, ns: string, name: string) =>
    t.rows.find((r) => r[0] === ns && r[1] === name);
  try {
    const ks = await get("kustomizations");
    assertEquals(ks.head, ["NAMESPACE", "NAME", "AGE", "READY", "STATUS"]);
    assertEquals(row(ks, "flux-system", "rook-ceph")?.slice(3), [
      "True",
      `Applied revision: ${FIXTURE_REVISION}`,
    ]);

    const hr = await get("helmreleases");
    assertEquals(hr.head, ["NAMESPACE", "NAME", "AGE", "READY", "STATUS"]);
    assertEquals(row(hr, "rook-ceph", "rook-ceph")?.slice(3), ["True", "Helm upgrade succeeded"]);

    const git = await get("gitrepositories");
    assertEquals(git.head, ["NAMESPACE", "NAME", "URL", "AGE", "READY", "STATUS"]);
    assertEquals(row(git, "flux-system", "home-ops")?.[2], "https://github.com/example/home-ops");

    const oci = await get("ocirepositories");
    assertEquals(oci.head, ["NAMESPACE", "NAME", "URL", "READY", "STATUS", "AGE"]);
    assertEquals(row(oci, "rook-ceph", "rook-ceph")?.slice(2, 4), [
      "oci://ghcr.io/rook/rook-ceph",
      "True",
    ]);

    // Flux delivers a Rook bump merged as MERGE; the twin's clock moves it along.
    kube.gitopsMerge!({ commit: MERGE, ociTags: { "rook-ceph/rook-ceph": "v1.21.0" } });
    await clock.advance(120_000);
    // The short names Flux's CRDs declare work too.
    const after = await get("ks");
    assertEquals(row(after, "flux-system", "rook-ceph")?.slice(3), [
      "True",
      `Applied revision: main@sha1:${MERGE}`,
    ]);
    const fetched = await get("gitrepo");
    assertEquals(
      row(fetched, "flux-system", "home-ops")?.[5],
      `stored artifact for revision 'main@sha1:${MERGE}'`,
    );
    const chart = row(await get("ocirepo"), "rook-ceph", "rook-ceph");
    assert(chart?.[4]?.startsWith("stored artifact for digest 'v1.21.0@sha256:"), String(chart));
    const upgraded = row(await get("hr"), "rook-ceph", "rook-ceph");
    assertEquals(upgraded?.[3], "True");
    assert(upgraded?.[4]?.endsWith("with chart rook-ceph@1.21.0"), String(upgraded));
  } finally {
    await kube.stop();
    Deno.removeSync(stateDir, { recursive: true });
  }
});
