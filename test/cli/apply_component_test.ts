/**
 * `cairn apply` on a ComponentUpgrade, end to end over the socket twin (real TLS, the real
 * Kubernetes and Talos adapters, the proxy routes of rows 17 and 18 read through the API server):
 * a Rook bump the cluster already runs, with the CSI plugins on the image the plan names, completes
 * (exit 0) with every after-merge round read fresh; the same delivery with the plan expecting a
 * cephcsi the operator never rendered ends NOT LANDED (exit 1), naming the image that runs. Nothing
 * is written to the cluster either way.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { allowedSignersText, demoSigner } from "../../src/app/demo_keys.ts";
import { startTwinProcess, TEST_PKI_CACHE } from "../../src/app/twin_process.ts";
import { sha256Hex } from "../../src/domain/plan/digest.ts";
import { TwinControl } from "../../src/sim/twin_control.ts";
import { ROOT } from "../_helpers/twin_world.ts";

const TWIN_APPLIED = "0123456789abcdef0123456789abcdef01234567";
const PIN = "kubernetes/apps/rook-ceph/rook-ceph/app/ocirepository.yaml";
const PIN_TEXT = "apiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\n" +
  "metadata: {name: rook-ceph}\nspec: {url: oci://ghcr.io/rook/rook-ceph, ref: {tag: v1.20.2}}\n";

async function repo(image: string, seconds: number): Promise<{ dir: string; plan: string }> {
  const dir = await Deno.makeTempDir({ prefix: "cairn-apply-component-" });
  await Deno.mkdir(join(dir, "policies"));
  await Deno.copyFile(join(ROOT, "policies/home-ops.yaml"), join(dir, "policies/home-ops.yaml"));
  await Deno.mkdir(join(dir, PIN, ".."), { recursive: true });
  await Deno.writeTextFile(join(dir, PIN), PIN_TEXT);
  const enc = new TextEncoder();
  const text = [
    "apiVersion: cairn.dev/v1alpha1",
    "kind: ComponentUpgrade",
    "metadata:",
    "  name: rook-ceph-v1.20.2",
    "  cluster: home-ops",
    "  author: alice@example.com",
    "  expires: 2099-01-01T00:00:00Z",
    "spec:",
    "  healthPolicy:",
    "    path: policies/home-ops.yaml",
    `    sha256: ${await sha256Hex(await Deno.readFile(join(ROOT, "policies/home-ops.yaml")))}`,
    "  retry: {maxAttempts: 3}",
    "  component: rook-ceph",
    "  flux: {kind: HelmRelease, namespace: rook-ceph, name: rook-ceph}",
    "  from: v1.20.1",
    "  to: v1.20.2",
    "  change:",
    `    base: "${"ab".repeat(20)}"`,
    `    head: "${"cd".repeat(20)}"`,
    `    pins: [{path: ${PIN}, sha256: ${await sha256Hex(enc.encode(PIN_TEXT))}}]`,
    "  delivery:",
    "    source: {kind: OCIRepository, namespace: rook-ceph, name: rook-ceph}",
    "    images:",
    "      - {namespace: rook-ceph, selector: app.kubernetes.io/part-of=ceph-csi, " +
    `container: csi-rbdplugin, image: "${image}", renderedBy: the rook-ceph operator}`,
    `  phases: {deadlines: {rollout: {transportSeconds: 2, verificationSeconds: ${seconds}}}}`,
    "",
  ].join("\n");
  await Deno.mkdir(join(dir, "plans"));
  const plan = join(dir, "plans", "rook-ceph-v1.20.2.yaml");
  await Deno.writeTextFile(plan, text);
  const people = [await demoSigner("alice@example.com"), await demoSigner("bob@example.com")];
  await Deno.writeTextFile(join(dir, "allowed_signers"), allowedSignersText(people));
  const bytes = enc.encode(text);
  await Deno.writeTextFile(
    `${plan}.sig`,
    (await Promise.all(people.map((p) => p.sign(bytes)))).join(""),
  );
  return { dir, plan };
}

async function cairn(args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", join(ROOT, "src/main.ts"), ...args],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const d = new TextDecoder();
  return { code: out.code, stdout: d.decode(out.stdout), stderr: d.decode(out.stderr) };
}

Deno.test("cairn apply observes a ComponentUpgrade over the socket twin: COMPLETED, then NOT LANDED naming what runs", async () => {
  const twin = await startTwinProcess({
    cluster: join(ROOT, "fixtures/clusters/home-ops.yaml"),
    pkiCacheDir: TEST_PKI_CACHE,
  });
  const dirs: string[] = [];
  try {
    const control = new TwinControl(twin.controlUrl);
    await control.resetStats();
    const run = async (image: string, seconds: number) => {
      const { dir, plan } = await repo(image, seconds);
      dirs.push(dir);
      return await cairn([
        "apply",
        plan,
        "--kubeconfig",
        twin.kubeconfigPath!,
        "--talosconfig",
        twin.talosconfigPath,
        "--journal",
        `file:${join(dir, "journal.db")}`,
        "--allowed-signers",
        join(dir, "allowed_signers"),
        // The twin's Flux applied this commit (fixtures/clusters/home-ops.yaml): the merge.
        "--merged-commit",
        TWIN_APPLIED,
      ]);
    };
    const landed = await run("quay.io/cephcsi/cephcsi:v3.17.1", 120);
    assertEquals(landed.code, 0, landed.stdout + landed.stderr);
    assert(landed.stdout.includes("**Verdict: COMPLETED:"), landed.stdout);
    assert(landed.stdout.includes("| `object-store-endpoint` | `object-store-endpoint` | pass |"));
    assert(landed.stdout.includes("| `broker-streams` | `broker-streams` | pass | 3/3 |"));
    // A short deadline: the reads keep time to answer, the last one decides (never a timeout).
    const stale = await run("quay.io/cephcsi/cephcsi:v3.18.1", 8);
    assertEquals(stale.code, 1, stale.stdout + stale.stderr);
    assert(stale.stdout.includes("**Verdict: NOT LANDED:"), stale.stdout);
    assert(stale.stdout.includes("still run quay.io/cephcsi/cephcsi:v3.17.1"), stale.stdout);
    const stats = await control.stats();
    assertEquals(
      [stats.talos.totalMutating, (stats.kube as { mutating: number }).mutating],
      [0, 0],
      "cairn observed; it changed nothing",
    );
  } finally {
    await twin.stop();
    for (const d of dirs) await Deno.remove(d, { recursive: true });
  }
});
