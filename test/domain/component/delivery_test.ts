/**
 * The delivery judgement of a ComponentUpgrade: a part passes only on the cluster's own word for
 * the target at the current generation; an operator-rendered workload still on another image
 * keeps the bump from landing, and no selected pod is never a pass.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import {
  deliveryState,
  type FluxObjectReading,
  judgeApplied,
  judgeImages,
  judgeRelease,
  judgeSource,
} from "../../../src/domain/component/delivery.ts";
import type { ComponentUpgradePlan } from "../../../src/domain/plan/schema.ts";

const plan = { spec: { from: "v1.20.2", to: "v1.21.0" } } as unknown as ComponentUpgradePlan;
const oci = (o: Partial<FluxObjectReading>): FluxObjectReading => ({
  kind: "OCIRepository",
  namespace: "rook-ceph",
  name: "rook-ceph",
  found: true,
  generation: 2,
  observedGeneration: 2,
  ready: { status: "True" },
  revision: "v1.21.0@sha256:ab",
  ...o,
});
const hr = (o: Partial<FluxObjectReading>): FluxObjectReading => ({
  kind: "HelmRelease",
  namespace: "rook-ceph",
  name: "rook-ceph",
  found: true,
  generation: 1,
  observedGeneration: 1,
  ready: { status: "True" },
  chartVersion: "1.21.0",
  releaseStatus: "deployed",
  ...o,
});

Deno.test("the source passes only serving the target for its current generation, Ready", () => {
  assertEquals(judgeSource(plan, oci({})).verdict, "pass");
  assertEquals(judgeSource(plan, oci({ revision: "v1.20.2@sha256:cd" })).verdict, "pending");
  assertEquals(judgeSource(plan, oci({ observedGeneration: 1 })).verdict, "pending");
  assertEquals(judgeSource(plan, oci({ ready: { status: "False" } })).verdict, "pending");
  assertEquals(judgeSource(plan, oci({ found: false })).verdict, "fail");
  assertEquals(judgeSource(plan, undefined).verdict, "unreadable");
});

Deno.test("the release passes only deployed at the target chart, Ready at its generation", () => {
  assertEquals(judgeRelease(plan, hr({})).verdict, "pass");
  const old = judgeRelease(plan, hr({ chartVersion: "1.20.2" }));
  assertEquals(old.verdict, "pending");
  assert(old.detail.includes("runs chart 1.20.2"), old.detail);
  assertEquals(judgeRelease(plan, hr({ observedGeneration: 0 })).verdict, "pending");
  assertEquals(judgeRelease(plan, hr({ releaseStatus: "failed" })).verdict, "pending");
  assertEquals(
    judgeRelease(plan, hr({ ready: { status: "False", reason: "UpgradeFailed" } })).verdict,
    "pending",
  );
});

const want = {
  namespace: "rook-ceph",
  selector: "app.kubernetes.io/part-of=ceph-csi",
  container: "csi-rbdplugin",
  image: "quay.io/cephcsi/cephcsi:v3.18.1",
  renderedBy: "the rook-ceph operator",
};

Deno.test("images: one pod on the old image keeps the bump from landing, naming what runs", () => {
  const mixed = judgeImages(0, {
    want,
    pods: [
      { name: "a", running: want.image, ready: true },
      { name: "b", running: "quay.io/cephcsi/cephcsi:v3.17.1", ready: true },
    ],
  });
  assertEquals(mixed.verdict, "pending");
  assert(mixed.detail.includes("still run quay.io/cephcsi/cephcsi:v3.17.1"), mixed.detail);
  assertEquals(judgeImages(0, { want, pods: [] }).verdict, "fail");
  const all = judgeImages(0, { want, pods: [{ name: "a", running: want.image, ready: true }] });
  assertEquals(all.verdict, "pass");
  assertEquals(
    deliveryState([judgeSource(plan, oci({})), judgeRelease(plan, hr({})), mixed]),
    "not-landed",
  );
  assertEquals(
    deliveryState([
      judgeSource(plan, oci({})),
      judgeRelease(plan, hr({ chartVersion: "1.20.2" })),
      all,
    ]),
    "not-delivered",
  );
  assertEquals(
    deliveryState([judgeSource(plan, oci({})), judgeRelease(plan, hr({})), all]),
    "landed",
  );
});

const MERGE = "ab".repeat(20);
const changed = {
  spec: { from: "v1.20.2", to: "v1.21.0", change: { base: "", head: "", pins: [] } },
} as unknown as ComponentUpgradePlan;
const ks = (o: Partial<FluxObjectReading>): FluxObjectReading => ({
  kind: "Kustomization",
  namespace: "flux-system",
  name: "rook-ceph",
  found: true,
  generation: 3,
  observedGeneration: 3,
  ready: { status: "True" },
  appliedRevision: `main@sha1:${MERGE}`,
  lastRevision: `main@sha1:${MERGE}`,
  ...o,
});
const applied = (a: FluxObjectReading | undefined, merge: string | undefined = MERGE) =>
  judgeApplied(changed, {
    atMs: 0,
    images: [],
    ...(merge ? { merge } : {}),
    ...(a ? { applied: a } : {}),
  });

Deno.test("applied: only the merge, or a later commit git says contains it, applied and Ready at its generation", () => {
  assertEquals(applied(ks({}))?.verdict, "pass");
  const later = `main@sha1:${"cd".repeat(20)}`;
  assertEquals(applied(ks({ appliedRevision: later, containsMerge: true }))?.verdict, "pass");
  const older = applied(ks({ appliedRevision: later, containsMerge: false }));
  assertEquals(older?.verdict, "pending");
  assert(older?.detail.includes("an older revision without the merge"), older?.detail);
  // Not known to git (not fetched yet): never a pass.
  assertEquals(applied(ks({ appliedRevision: later }))?.verdict, "pending");
  // An attempted revision that did not apply is not the applied one.
  assertEquals(
    applied(ks({ appliedRevision: later, lastRevision: `main@sha1:${MERGE}` }))?.verdict,
    "pending",
  );
  assertEquals(applied(ks({ observedGeneration: 2 }))?.verdict, "pending");
  assertEquals(applied(ks({ ready: { status: "False" } }))?.verdict, "pending");
  assertEquals(applied(ks({ found: false }))?.verdict, "fail");
  assertEquals(applied(undefined)?.verdict, "fail");
  assertEquals(applied(ks({}), "")?.verdict, "pending", "no merge commit known: nothing ties");
  // A plan binding no reviewed branch has no merge to tie to.
  assertEquals(judgeApplied(plan, { atMs: 0, images: [], applied: ks({}) }), undefined);
});

Deno.test("a Kustomization release without a reviewed branch never passes: Ready at its generation is also the state before the bump", () => {
  // Ready, observed, applied at some commit: nothing in it names v1.21.0.
  const release = judgeRelease(plan, ks({}));
  assertEquals(release.verdict, "unreadable");
  assert(release.detail.includes("nothing ties that revision to v1.21.0"), release.detail);
  assertEquals(deliveryState([release]), "unreadable");
  // With the reviewed branch the merge ties it (judgeApplied), and the release part passes.
  assertEquals(judgeRelease(changed, ks({})).verdict, "pass");
  // A Kustomization applying an OCI artifact names its tag: at the target it passes, else pending.
  const oci = (rev: string) => ks({ appliedRevision: rev, lastRevision: rev });
  assertEquals(judgeRelease(plan, oci("v1.21.0@sha256:ab")).verdict, "pass");
  assertEquals(judgeRelease(plan, oci("v1.20.2@sha256:cd")).verdict, "pending");
});
