import { deepStrictEqual as assertEquals, ok as assert, rejects } from "node:assert/strict";
import { formatProblem } from "../../../src/domain/errors.ts";
import { loadPlaybookDir } from "../../../src/adapters/playbook/playbook_dir.ts";
import { shippedPlaybooksDir } from "../../../src/app/playbooks.ts";

/** The 16 components of the playbook seed, by file name. */
const COMPONENTS = [
  "cert-manager",
  "cilium",
  "cloudnative-pg",
  "coredns",
  "envoy-gateway",
  "external-secrets",
  "flux",
  "gpu-operator",
  "kubernetes",
  "litellm-operator",
  "miroir",
  "rook-ceph",
  "spegel",
  "talos",
  "tuppr",
  "volsync",
];

Deno.test("the shipped playbooks load: one valid file per component, 16 in all", async () => {
  const r = await loadPlaybookDir(shippedPlaybooksDir(), "playbooks");
  assert(r.ok, r.ok ? "" : r.problems.map(formatProblem).join("\n"));
  assertEquals(r.playbooks.map((p) => p.metadata.name), COMPONENTS);
  for (const p of r.playbooks) {
    assert(p.spec.afterMerge.length > 0 && p.spec.rollback.length > 0, p.metadata.name);
  }
});

Deno.test("an oversized playbook is refused without reading it whole; a symlink is refused", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/big.yaml`, "# " + "x".repeat(4 * 1024 * 1024));
    const r = await loadPlaybookDir(dir, "p");
    assert(!r.ok);
    assertEquals(r.problems.map((p) => [p.reason, p.location?.file]), [
      ["PlaybookTooLarge", "p/big.yaml"],
    ]);
    await Deno.remove(`${dir}/big.yaml`);
    await Deno.symlink("/dev/zero", `${dir}/zero.yaml`);
    await rejects(loadPlaybookDir(dir, "p"), /symbolic link/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
