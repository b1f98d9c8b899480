/**
 * The review's decisions on in-memory generated repositories (no git): fast enough to be the
 * mutants' tests. The same cases over real git are in test/engine/review/.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { loadPlaybooks } from "../../../src/app/playbooks.ts";
import {
  type BundledVersions,
  NO_BUNDLED_VERSIONS,
  parseBundledVersions,
} from "../../../src/domain/playbook/bundled.ts";
import { type FileContent, judgeReview } from "../../../src/domain/review/judge.ts";
import type { ReviewResult } from "../../../src/domain/review/model.ts";
import {
  bumpTalhelper,
  dropDeviation,
  type HomeOpsState,
  initialState,
  movePinsOnly,
  PRIMARY_PIN_SET,
  renderBundledVersions,
  renderRepo,
  renovateBump,
  type RepoFiles,
} from "../../../src/sim/gitops/mod.ts";

const PLAYBOOKS = await loadPlaybooks();
const parsed = parseBundledVersions(new TextEncoder().encode(renderBundledVersions()), "b.yaml");
if (!parsed.ok) throw new Error("snapshot does not parse");
const BUNDLED = parsed.bundled;

function judge(
  base: HomeOpsState | RepoFiles,
  head: HomeOpsState | RepoFiles,
  bundled: BundledVersions = BUNDLED,
): ReviewResult {
  const a = "versions" in base ? renderRepo(base as HomeOpsState) : base as RepoFiles;
  const b = "versions" in head ? renderRepo(head as HomeOpsState) : head as RepoFiles;
  const changed = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => a[k] !== b[k])
    .sort();
  const view = (files: RepoFiles) => (p: string): FileContent =>
    p in files ? { kind: "text", text: files[p]! } : { kind: "missing" };
  return judgeReview({ playbooks: PLAYBOOKS, bundled, changed, base: view(a), head: view(b) });
}

function codes(r: ReviewResult): string[] {
  return r.findings.map((f) => `${f.component}:${f.code}:${f.severity}`).sort();
}

const base = initialState({ seed: 42 });

Deno.test("judge: a clean patch bump of each of the 16 components finds nothing", () => {
  for (const [component, set] of Object.entries(PRIMARY_PIN_SET)) {
    const r = judge(base, renovateBump(base, set, "patch").state);
    assertEquals(codes(r), [], component);
    assertEquals(r.verdict, "clean", component);
    assertEquals(r.components.filter((c) => c.moved).map((c) => c.name), [component]);
  }
});

Deno.test("judge: 3 of 5 Talos pins is PinSetPartial; pins moved apart is PinSetDisagrees", () => {
  const partial = movePinsOnly(
    base,
    "talos/talos",
    ["talconfig", "talenv", "talosupgrade"],
    "patch",
  );
  const split = judge(base, partial.state);
  assertEquals(codes(split), ["talos:PinSetPartial:blocking"]);
  assertEquals(split.findings[0]!.actions.map((a) => a.pattern), ["pins-split"]);
  const apart = movePinsOnly(
    movePinsOnly(base, "talos/talos", ["talconfig", "talenv", "talosupgrade"], "patch").state,
    "talos/talos",
    ["talosctl", "etcd-defrag"],
    "minor",
  );
  const r = judge(base, bumpTalhelper(apart.state, "minor"));
  assertEquals(codes(r), ["talos:PinSetDisagrees:blocking"]);
});

Deno.test("judge: a dropped deviation is DeviationDropped; one absent on both sides DeviationMissing", () => {
  const bump = renovateBump(base, "rook-ceph/csi-drivers", "patch").state;
  const r = judge(base, dropDeviation(bump, "rook-ceph/rbd-driver-name"));
  assertEquals(codes(r), ["rook-ceph:DeviationDropped:blocking"]);
  assertEquals(r.findings[0]!.actions.map((a) => a.pattern), ["rbd-driver-renamed"]);
  const lacking = dropDeviation(base, "rook-ceph/rbd-snapshot-policy");
  const both = judge(lacking, renovateBump(lacking, "rook-ceph/csi-drivers", "patch").state);
  assertEquals(codes(both), ["rook-ceph:DeviationMissing:attention"]);
});

Deno.test("judge: a removal deviation (no hostNamespaceOnly) is dropped when the key comes back", () => {
  const head = dropDeviation(
    renovateBump(base, "cilium/chart", "patch").state,
    "cilium/no-host-namespace-only",
  );
  assertEquals(codes(judge(base, head)), ["cilium:DeviationDropped:blocking"]);
});

Deno.test("judge: the ClusterIssuer health expression dropped from cert-manager's Kustomization", () => {
  const head = dropDeviation(
    renovateBump(base, "cert-manager/chart", "minor").state,
    "cert-manager/clusterissuer-health",
  );
  const r = judge(base, head);
  assertEquals(codes(r), ["cert-manager:DeviationDropped:blocking"]);
  assertEquals(r.findings[0]!.where[0]!.file, "kubernetes/apps/cert-manager/cert-manager/ks.yaml");
});

Deno.test("judge: a Ceph major riding the cluster chart is blocking; cephcsi riding the operator chart is attention", () => {
  const from = initialState({ seed: 42, lines: { "rook-ceph/rook": [1, 19] } });
  const r = judge(from, renovateBump(from, "rook-ceph/rook", "minor").state);
  assertEquals(codes(r), [
    "rook-ceph:CompanionMoves:attention",
    "rook-ceph:CompanionMoves:blocking",
  ]);
  const ceph = r.findings.find((f) => f.severity === "blocking")!;
  assert(/v19\.2\.3 → v20\.2\.0 \(major\)/.test(ceph.message), ceph.message);
  assertEquals(ceph.actions.map((a) => a.pattern), ["ceph-major-rides-cluster-chart"]);
});

Deno.test("judge: Ceph two majors up is CompanionMajorJump", () => {
  const from = initialState({ seed: 42, lines: { "rook-ceph/rook": [1, 19] } });
  const to = {
    ...from,
    versions: { ...from.versions, "rook-ceph/rook": { major: 1, minor: 22, patch: 0 } },
  };
  const r = judge(from, to);
  assert(codes(r).includes("rook-ceph:CompanionMajorJump:blocking"), codes(r).join());
  const jump = r.findings.find((f) => f.code === "CompanionMajorJump")!;
  assert(/jumps 2 majors \(v19\.2\.3 → v21\.2\.0\)/.test(jump.message), jump.message);
});

Deno.test("judge: the Flux distribution riding the manifests artifact; unknown without a snapshot", () => {
  const head = renovateBump(base, "flux/flux", "minor").state;
  assertEquals(codes(judge(base, head)), ["flux:CompanionMoves:attention"]);
  const blind = judge(base, renovateBump(base, "flux/flux", "patch").state, NO_BUNDLED_VERSIONS);
  assertEquals(codes(blind), ["flux:CompanionVersionUnknown:attention"]);
});

Deno.test("judge: a Talos minor without the talhelper edit is CompanionEditMissing", () => {
  const bump = renovateBump(base, "talos/talos", "minor").state;
  assertEquals(codes(judge(base, bump)), ["talos:CompanionEditMissing:blocking"]);
  assertEquals(codes(judge(base, bumpTalhelper(bump, "patch"))), []);
});

Deno.test("judge: going back a Talos minor is RollbackAcrossOneWay; a Ceph major back too", () => {
  const newer = initialState({ seed: 42, lines: { "talos/talos": [1, 15] } });
  const older = {
    ...newer,
    versions: { ...newer.versions, "talos/talos": { major: 1, minor: 14, patch: 3 } },
  };
  assertEquals(codes(judge(newer, older)), ["talos:RollbackAcrossOneWay:blocking"]);
  const rookNew = initialState({ seed: 42, lines: { "rook-ceph/rook": [1, 20] } });
  const rookOld = {
    ...rookNew,
    versions: { ...rookNew.versions, "rook-ceph/rook": { major: 1, minor: 19, patch: 9 } },
  };
  assert(codes(judge(rookNew, rookOld)).includes("rook-ceph:RollbackAcrossOneWay:blocking"));
});

Deno.test("judge: hostile pin files are ReviewFileUnreadable (alias bomb, duplicate key, too large)", () => {
  const files = renderRepo(base);
  const path = "kubernetes/apps/kube-system/spegel/app/ocirepository.yaml";
  const bomb = [
    "a: &a [x, x, x, x, x, x, x, x, x]",
    "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]",
    "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]",
    "d: [*c, *c, *c, *c, *c, *c, *c, *c, *c]",
    "",
  ].join("\n");
  for (
    const [what, text, why] of [
      ["alias", bomb, /aliases expand beyond the allowed budget/],
      ["duplicate", files[path]! + "spec:\n  x: 1\n", /not valid YAML: .*unique/i],
      ["large", files[path]! + `# ${"x".repeat(1024 * 1024)}\n`, /file exceeds \d+ bytes/],
    ] as const
  ) {
    const r = judge(files, { ...files, [path]: text });
    assertEquals(codes(r), ["spegel:ReviewFileUnreadable:attention"], what);
    assert(why.test(r.findings[0]!.message), `${what}: ${r.findings[0]!.message}`);
  }
});

Deno.test("judge: a deviation's value changed (not removed) is dropped; a list that lost its item too", () => {
  const cilium = dropDeviation(
    renovateBump(base, "cilium/chart", "patch").state,
    "cilium/lb-mode-dsr",
  );
  const r = judge(base, cilium);
  assertEquals(codes(r), ["cilium:DeviationDropped:blocking"]);
  assert(/should be dsr but is snat/.test(r.findings[0]!.message), r.findings[0]!.message);
  const files = renderRepo(base);
  const ks = "kubernetes/apps/cert-manager/cert-manager/ks.yaml";
  const other = files[ks]!.replace("kind: ClusterIssuer", "kind: Certificate");
  const bumped = renderRepo(renovateBump(base, "cert-manager/chart", "patch").state);
  const lost = judge(files, { ...bumped, [ks]: other });
  assertEquals(codes(lost), ["cert-manager:DeviationDropped:blocking"]);
});
