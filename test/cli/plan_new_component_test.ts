/**
 * `cairn plan new component --base REF --head REF`: a plan written from the reviewed branch of a
 * generated home-ops repository binds both commits and the pin files the branch changes, each by
 * its SHA-256 at head, and names what delivery must show; it passes plan check. A branch that
 * moves none of the component's pins is refused.
 */
import { deepStrictEqual as assertEquals, rejects } from "node:assert/strict";
import { parse } from "yaml";
import { type CommandIO } from "../../src/cli/command.ts";
import { parseCommandArgs } from "../../src/cli/command_args.ts";
import { command as check } from "../../src/cli/plan_check.ts";
import { command as planNew } from "../../src/cli/plan_new.ts";
import { sha256Hex } from "../../src/domain/plan/digest.ts";
import {
  checkoutBranch,
  commitFiles,
  initGitOpsRepo,
  initialState,
  renderRepo,
  renovateBump,
} from "../../src/sim/gitops/mod.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const NOW = ["--now", "2026-12-01T09:00:00Z"];

async function runIn(cwd: string, cmd: typeof planNew, argv: string[]) {
  let stdout = "", stderr = "";
  const io: CommandIO = {
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
    env: {},
    cwd,
    color: false,
    tty: false,
    signal: new AbortController().signal,
  };
  const code = await cmd.run(parseCommandArgs(cmd, argv), io);
  return { code, stdout, stderr };
}

Deno.test("plan new component from a reviewed branch binds base, head and the moved pin files by digest", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cairn-plan-new-component-" });
  try {
    const policy = await Deno.readTextFile(`${ROOT}policies/home-ops.yaml`);
    // plan new reads the catalogue for every kind; a ComponentUpgrade does not bind it.
    const catalogue = await Deno.readTextFile(`${ROOT}catalogue/talos.yaml`);
    const state = initialState({ seed: 4 });
    const base = await initGitOpsRepo(dir, {
      ...renderRepo(state),
      "policies/home-ops.yaml": policy,
      "catalogue/talos.yaml": catalogue,
    });
    const bump = renovateBump(state, "rook-ceph/rook", "minor");
    await checkoutBranch(dir, "renovate/rook", "main");
    const files: Record<string, string> = {
      ...renderRepo(bump.state),
      "policies/home-ops.yaml": policy,
      "catalogue/talos.yaml": catalogue,
    };
    const head = await commitFiles(dir, files, bump.message);
    const args = (b: string, h: string) => [
      "component",
      "--cluster",
      "home-ops",
      "--component",
      "rook-ceph",
      "--flux-namespace",
      "rook-ceph",
      "--from",
      `v${bump.from.major}.${bump.from.minor}.${bump.from.patch}`,
      "--to",
      "v1.21.0",
      "--base",
      b,
      "--head",
      h,
      "--flux-source",
      "OCIRepository/rook-ceph/rook-ceph",
      "--expect-image",
      "rook-ceph|app.kubernetes.io/part-of=ceph-csi|csi-rbdplugin|quay.io/cephcsi/cephcsi:v3.18.1",
      "--author",
      "alice@example.com",
      "--out",
      "plans/rook-ceph.yaml",
      ...NOW,
    ];
    const r = await runIn(dir, planNew, args("main", "renovate/rook"));
    assertEquals([r.code, r.stderr], [0, ""]);
    const plan = parse(await Deno.readTextFile(`${dir}/plans/rook-ceph.yaml`));
    const enc = new TextEncoder();
    const pins = [
      "kubernetes/apps/rook-ceph/rook-ceph/app/ocirepository.yaml",
      "kubernetes/apps/rook-ceph/rook-ceph/cluster/ocirepository.yaml",
    ];
    assertEquals(plan.spec.change, {
      base,
      head,
      pins: await Promise.all(pins.map(async (path) => ({
        path,
        sha256: await sha256Hex(enc.encode(files[path]!)),
      }))),
    });
    assertEquals(plan.spec.delivery.source, {
      kind: "OCIRepository",
      namespace: "rook-ceph",
      name: "rook-ceph",
    });
    assertEquals(plan.spec.delivery.images[0].image, "quay.io/cephcsi/cephcsi:v3.18.1");
    assertEquals((await runIn(dir, check, ["plans/rook-ceph.yaml", ...NOW])).code, 0);
    // The same branch against itself moves no pin of the component: refused, nothing written.
    await rejects(
      runIn(dir, planNew, [...args("renovate/rook", "renovate/rook"), "--force"]),
      (e: Error) => e.message.includes("moves no pin file of rook-ceph"),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
