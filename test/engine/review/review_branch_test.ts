import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import type { BranchReview, ReviewFinding } from "../../../src/domain/review/model.ts";
import {
  bumpTalhelper,
  dropDeviation,
  initialState,
  movePinsOnly,
  renderRepo,
  renovateBump,
} from "../../../src/sim/gitops/mod.ts";
import { GitOpsRepo, lineOf } from "../../_helpers/gitops_review.ts";

const SEED = 42;

function codes(r: BranchReview): string[] {
  return r.result.findings.map((f) => `${f.component}:${f.code}`).sort();
}

function only(r: BranchReview, code: string): ReviewFinding {
  const f = r.result.findings.filter((x) => x.code === code);
  assertEquals(f.length, 1, `${code}: ${JSON.stringify(r.result.findings, null, 1)}`);
  return f[0]!;
}

Deno.test("a Talos bump touching 3 of its 5 pins is PinSetPartial, naming the two left behind by line", async () => {
  const base = initialState({ seed: SEED });
  await using repo = await GitOpsRepo.create(base);
  const bump = movePinsOnly(base, "talos/talos", ["talconfig", "talenv", "talosupgrade"], "patch");
  const head = await repo.branch("renovate/talos", bump.state, bump.message);
  const r = await repo.review(head);
  assertEquals(r.result.verdict, "findings");
  assertEquals(codes(r), ["talos:PinSetPartial"]);
  const f = only(r, "PinSetPartial");
  assertEquals(f.severity, "blocking");
  assert(/3 of 5 pins of talos moved/.test(f.message), f.message);
  const files = renderRepo(bump.state);
  const mise = f.where.find((w) => w.file === ".mise.toml")!;
  assertEquals(mise.line, lineOf(files[".mise.toml"]!, '"aqua:siderolabs/talos"'));
  const defrag = "kubernetes/apps/kube-system/etcd-defrag/app/helmrelease.yaml";
  assertEquals(
    f.where.find((w) => w.file === defrag)!.line,
    lineOf(files[defrag]!, "releases/download"),
  );
  assertEquals(r.result.components.find((c) => c.name === "talos")!.moves[0]!.moved, 3);
});

Deno.test("the Rook drivers chart losing drivers.rbd.name is DeviationDropped with the playbook's action", async () => {
  const base = initialState({ seed: SEED });
  await using repo = await GitOpsRepo.create(base);
  const bump = renovateBump(base, "rook-ceph/csi-drivers", "patch");
  const head = await repo.branch(
    "renovate/ceph-csi-drivers",
    dropDeviation(bump.state, "rook-ceph/rbd-driver-name"),
    bump.message,
  );
  const r = await repo.review(head);
  assertEquals(codes(r), ["rook-ceph:DeviationDropped"]);
  const f = only(r, "DeviationDropped");
  assert(/drivers\.rbd\.name/.test(f.message) && /rook-ceph\.rbd\.csi\.ceph\.com/.test(f.message));
  assertEquals(f.actions.map((a) => a.pattern), ["rbd-driver-renamed"]);
  const file = "kubernetes/apps/rook-ceph/rook-ceph/csi-drivers/helmrelease.yaml";
  assertEquals(f.where.map((w) => [w.file, w.side]), [[file, "head"], [file, "base"]]);
  assertEquals(
    f.where[1]!.line,
    lineOf(renderRepo(base)[file]!, "name: rook-ceph.rbd.csi.ceph.com"),
  );
});

Deno.test("a Rook cluster-chart move whose default Ceph image moves a major is a blocking CompanionMoves", async () => {
  const base = initialState({ seed: SEED, lines: { "rook-ceph/rook": [1, 19] } });
  await using repo = await GitOpsRepo.create(base);
  const bump = renovateBump(base, "rook-ceph/rook", "minor");
  const r = await repo.review(await repo.branch("renovate/rook-ceph", bump.state, bump.message));
  const ceph = r.result.findings.find((f) =>
    f.code === "CompanionMoves" && /Ceph daemons/.test(f.message)
  )!;
  assert(ceph, JSON.stringify(r.result.findings));
  assertEquals(ceph.severity, "blocking");
  assert(/v19\.2\.3 → v20\.2\.0 \(major\)/.test(ceph.message), ceph.message);
  assertEquals(ceph.actions.map((a) => a.pattern), ["ceph-major-rides-cluster-chart"]);
  // The operator chart's move carries cephcsi too: a second rider, reported on its own.
  const csi = r.result.findings.find((f) =>
    f.code === "CompanionMoves" && /cephcsi/.test(f.message)
  )!;
  assert(/v3\.15\.0 → v3\.17\.1/.test(csi.message) && csi.severity === "attention", csi.message);
  assertEquals(codes(r), ["rook-ceph:CompanionMoves", "rook-ceph:CompanionMoves"]);
});

Deno.test("a Ceph jump of two majors is CompanionMajorJump", async () => {
  const base = initialState({ seed: SEED, lines: { "rook-ceph/rook": [1, 19] } });
  await using repo = await GitOpsRepo.create(base);
  let next = renovateBump(base, "rook-ceph/rook", "minor").state;
  next = renovateBump(next, "rook-ceph/rook", "minor").state;
  next = renovateBump(next, "rook-ceph/rook", "minor").state; // v1.22: Ceph v21
  const r = await repo.review(await repo.branch("renovate/rook-ceph", next));
  assert(codes(r).includes("rook-ceph:CompanionMajorJump"), codes(r).join());
});

Deno.test("a Flux group bump whose manifests artifact changes the distribution is CompanionMoves", async () => {
  const base = initialState({ seed: SEED });
  await using repo = await GitOpsRepo.create(base);
  const bump = renovateBump(base, "flux/flux", "minor");
  const r = await repo.review(await repo.branch("renovate/flux", bump.state, bump.message));
  assertEquals(codes(r), ["flux:CompanionMoves"]);
  const f = only(r, "CompanionMoves");
  assert(
    /Flux controllers \(distribution\) rides along: v2\.7\.0 → v2\.8\.1 \(minor\)/.test(f.message),
    f.message,
  );
  assertEquals(f.where[0]!.file, "kubernetes/apps/flux-system/flux-instance/app/helmrelease.yaml");
  assertEquals(f.actions.map((a) => a.pattern), ["distribution-moves"]);
});

Deno.test("a cert-manager bump that drops the ClusterIssuer health expression is DeviationDropped", async () => {
  const base = initialState({ seed: SEED });
  await using repo = await GitOpsRepo.create(base);
  const bump = renovateBump(base, "cert-manager/chart", "minor");
  const head = await repo.branch(
    "renovate/cert-manager",
    dropDeviation(bump.state, "cert-manager/clusterissuer-health"),
    bump.message,
  );
  const r = await repo.review(head);
  assertEquals(codes(r), ["cert-manager:DeviationDropped"]);
  const f = only(r, "DeviationDropped");
  assert(/healthCheckExprs/.test(f.message) && /ClusterIssuer/.test(f.message), f.message);
  assertEquals(f.where[0]!.file, "kubernetes/apps/cert-manager/cert-manager/ks.yaml");
  assertEquals(f.actions.map((a) => a.pattern), ["health-expression-dropped"]);
});

Deno.test("a Talos minor without the talhelper edit is CompanionEditMissing; with it, clean", async () => {
  const base = initialState({ seed: SEED });
  await using repo = await GitOpsRepo.create(base);
  const bump = renovateBump(base, "talos/talos", "minor");
  const without = await repo.review(await repo.branch("renovate/talos-minor", bump.state));
  assertEquals(codes(without), ["talos:CompanionEditMissing"]);
  assertEquals(only(without, "CompanionEditMissing").where[0]!.file, ".mise.toml");
  const withEdit = await repo.review(
    await repo.branch("renovate/talos-minor-2", bumpTalhelper(bump.state, "minor")),
  );
  assertEquals(codes(withEdit), []);
});

Deno.test("going back a Talos minor is RollbackAcrossOneWay; a patch back is a plain move", async () => {
  const base = initialState({ seed: SEED, lines: { "talos/talos": [1, 15] } });
  await using repo = await GitOpsRepo.create(base);
  const back = {
    ...base,
    versions: { ...base.versions, "talos/talos": { major: 1, minor: 14, patch: 3 } },
  };
  const r = await repo.review(await repo.branch("revert/talos", back));
  assertEquals(codes(r), ["talos:RollbackAcrossOneWay"]);
  const patchBack = {
    ...base,
    versions: { ...base.versions, "talos/talos": { ...base.versions["talos/talos"]!, patch: 0 } },
  };
  if (base.versions["talos/talos"]!.patch > 0) {
    assertEquals(codes(await repo.review(await repo.branch("revert/talos-patch", patchBack))), []);
  }
});

Deno.test("a hostile or broken pin file is ReviewFileUnreadable, never 'unchanged'", async () => {
  const base = initialState({ seed: SEED });
  await using repo = await GitOpsRepo.create(base);
  const files = renderRepo(base);
  const path = "kubernetes/apps/kube-system/spegel/app/ocirepository.yaml";
  const bomb = [
    "a: &a [x, x, x, x, x, x, x, x, x]",
    "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]",
    "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]",
    "d: [*c, *c, *c, *c, *c, *c, *c, *c, *c]",
  ].join("\n");
  const r = await repo.review(await repo.branch("evil", { ...files, [path]: bomb + "\n" }));
  const f = only(r, "ReviewFileUnreadable");
  assert(/alias/.test(f.message) && f.where[0]!.side === "head", f.message);
  const dup = await repo.review(
    await repo.branch("dup", { ...files, [path]: files[path]! + "spec:\n  x: 1\n" }),
  );
  assertEquals(only(dup, "ReviewFileUnreadable").component, "spegel");
});

Deno.test("a change to an unprotected app only is 'untouched' and lists the file", async () => {
  const base = initialState({ seed: SEED });
  await using repo = await GitOpsRepo.create(base);
  const files = renderRepo(base);
  const path = "kubernetes/apps/default/echo/app/ocirepository.yaml";
  const head = await repo.branch("renovate/echo", {
    ...files,
    [path]: files[path]!.replace("4.4.0", "4.5.0"),
  });
  const r = await repo.review(head);
  assertEquals(r.result.verdict, "untouched");
  assertEquals(r.result.unprotected, [path]);
});

Deno.test("an unknown revision is refused with ReviewRefUnknown", async () => {
  const base = initialState({ seed: SEED });
  await using repo = await GitOpsRepo.create(base);
  await assertRejectsReason(repo.review("no-such-branch"), "ReviewRefUnknown");
  await assertRejectsReason(repo.review("--output=x"), "ReviewRefUnknown");
});

async function assertRejectsReason(p: Promise<unknown>, reason: string) {
  try {
    await p;
  } catch (e) {
    assertEquals((e as { reason?: string }).reason, reason);
    return;
  }
  throw new Error(`expected ${reason}`);
}
