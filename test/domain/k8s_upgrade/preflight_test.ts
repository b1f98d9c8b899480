import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import {
  judgePreflight,
  type PreflightEvidence,
  type PreflightPlan,
} from "../../../src/domain/k8s_upgrade/preflight.ts";
import {
  BOOTSTRAP_FIELD_MANAGER,
  judgeOwnership,
  ownedPaths,
} from "../../../src/domain/k8s_upgrade/ownership.ts";
import { skewViolations } from "../../../src/domain/k8s_upgrade/skew.ts";
import { inSupportWindow, supportWindow } from "../../../src/domain/k8s_upgrade/support_matrix.ts";
import { parseVersion } from "../../../src/domain/version.ts";

const PLAN: PreflightPlan = {
  talosVersion: "v1.13.9",
  from: "v1.35.2",
  to: "v1.36.0",
  nodes: [
    { name: "cp-1", role: "controlplane" },
    { name: "w-1", role: "worker" },
  ],
};

const IMAGE_FIELDS = {
  "f:spec": {
    "f:template": {
      "f:spec": { "f:containers": { 'k:{"name":"coredns"}': { ".": {}, "f:image": {} } } },
    },
  },
};

function evidence(over: Partial<PreflightEvidence> = {}): PreflightEvidence {
  return {
    nodes: [
      { name: "cp-1", role: "controlplane", talosVersion: "v1.13.9", kubeletVersion: "v1.35.2" },
      { name: "w-1", role: "worker", talosVersion: "v1.13.9", kubeletVersion: "v1.35.2" },
    ],
    components: [
      { component: "kube-apiserver", node: "cp-1", version: "v1.35.2" },
      { component: "kube-controller-manager", node: "cp-1", version: "v1.35.2" },
      { component: "kube-scheduler", node: "cp-1", version: "v1.35.2" },
      { component: "kube-proxy", node: "cluster", version: "v1.35.2" },
    ],
    osRollout: { partial: false, detail: "no holding operation" },
    deprecatedApis: { ok: true, value: [] },
    inventory: {
      ok: true,
      value: { present: true, namespacePresent: true, uid: "u", resourceVersion: "7" },
    },
    bootstrap: {
      ok: true,
      value: [{
        ref: "Deployment kube-system/coredns",
        uid: "u1",
        resourceVersion: "9",
        managedFields: [
          {
            manager: BOOTSTRAP_FIELD_MANAGER,
            operation: "Apply",
            subresource: "",
            fieldsV1: IMAGE_FIELDS,
          },
        ],
      }],
    },
    ...over,
  };
}

Deno.test("preflight passes on uniform Talos, known window, kept skew, sole ownership", () => {
  const j = judgePreflight(PLAN, evidence(), { expectFrom: true });
  assertEquals([j.verdict, j.uniformOs.verdict, j.skew.verdict, j.ownership.verdict], [
    "pass",
    "pass",
    "pass",
    "pass",
  ]);
});

Deno.test("mixed Talos versions refuse the plan (row 23)", () => {
  const e = evidence();
  const j = judgePreflight(PLAN, {
    ...e,
    nodes: [e.nodes[0]!, { ...e.nodes[1]!, talosVersion: "v1.14.2" }],
  }, { expectFrom: true });
  assertEquals(j.verdict, "refused");
  assertEquals(j.uniformOs.problems.map((p) => p.reason), ["KubernetesMixedTalosVersions"]);
  assert(j.uniformOs.evidence.includes("w-1=v1.14.2"));
});

Deno.test("a partial OS rollout in the journal refuses; an unread Talos version holds", () => {
  const partial = judgePreflight(
    PLAN,
    evidence({
      osRollout: { partial: true, detail: "operation op-1 of talos-v1.14.2 on cp-2 is unresolved" },
    }),
    { expectFrom: true },
  );
  assertEquals(partial.uniformOs.problems.map((p) => p.reason), ["KubernetesOsRolloutPartial"]);
  const e = evidence();
  const unread = judgePreflight(PLAN, {
    ...e,
    nodes: [e.nodes[0]!, { ...e.nodes[1]!, talosVersion: undefined }],
  }, { expectFrom: true });
  assertEquals([unread.verdict, unread.uniformOs.verdict], ["held", "held"]);
});

Deno.test("a target outside the running Talos minor's window refuses (row 24)", () => {
  const j = judgePreflight(
    { ...PLAN, from: "v1.36.0", to: "v1.37.0" },
    evidence({
      components: [],
      nodes: evidence().nodes.map((n) => ({ ...n, kubeletVersion: "v1.36.0" })),
    }),
    { expectFrom: false },
  );
  assert(j.skew.problems.some((p) => p.reason === "KubernetesUnsupported"));
});

Deno.test("a skipped minor and a kubelet newer than the apiserver refuse", () => {
  const skipped = judgePreflight(
    { ...PLAN, to: "v1.37.0", talosVersion: "v1.14.2" },
    evidence({
      nodes: evidence().nodes.map((n) => ({ ...n, talosVersion: "v1.14.2" })),
    }),
    { expectFrom: true },
  );
  assert(skipped.skew.problems.some((p) => p.reason === "KubernetesStepInvalid"));
  const e = evidence();
  const newer = judgePreflight(PLAN, {
    ...e,
    nodes: [e.nodes[0]!, { ...e.nodes[1]!, kubeletVersion: "v1.36.0" }],
  }, { expectFrom: false });
  assertEquals(newer.skew.problems.map((p) => p.reason), ["KubernetesSkewViolated"]);
});

Deno.test("an API removed by the target that is still requested refuses; a later removal does not", () => {
  const j = judgePreflight(
    PLAN,
    evidence({
      deprecatedApis: {
        ok: true,
        value: [
          {
            group: "flowcontrol.apiserver.k8s.io",
            version: "v1beta3",
            resource: "flowschemas",
            removedRelease: "1.36",
          },
          { group: "example.io", version: "v1beta1", resource: "widgets", removedRelease: "1.38" },
        ],
      },
    }),
    { expectFrom: true },
  );
  assertEquals(j.skew.problems.map((p) => p.reason), ["KubernetesRemovedApiInUse"]);
  assert(j.skew.problems[0]!.message.includes("flowschemas.v1beta3.flowcontrol.apiserver.k8s.io"));
});

Deno.test("a missing inventory refuses and says it was left missing (row 25)", () => {
  const j = judgePreflight(
    PLAN,
    evidence({
      inventory: { ok: true, value: { present: false, namespacePresent: false } },
    }),
    { expectFrom: true },
  );
  assertEquals(j.ownership.problems.map((p) => p.reason), ["BootstrapInventoryMissing"]);
  assert(j.ownership.evidence.includes("nothing was created"));
});

Deno.test("an overlapping field manager refuses, naming object, field path and both managers", () => {
  const e = evidence();
  const obj = e.bootstrap.ok ? e.bootstrap.value[0]! : undefined;
  const j = judgePreflight(
    PLAN,
    evidence({
      bootstrap: {
        ok: true,
        value: [{
          ...obj!,
          managedFields: [
            ...obj!.managedFields,
            {
              manager: "kustomize-controller",
              operation: "Apply",
              subresource: "",
              fieldsV1: IMAGE_FIELDS,
            },
            // A status writer shares nothing with the manifest sync.
            {
              manager: "kube-controller-manager",
              operation: "Update",
              subresource: "status",
              fieldsV1: IMAGE_FIELDS,
            },
          ],
        }],
      },
    }),
    { expectFrom: true },
  );
  assertEquals(j.verdict, "refused");
  const messages = j.ownership.problems.map((p) => p.message);
  assertEquals(j.ownership.problems.map((p) => p.reason), ["BootstrapOwnershipOverlap"]);
  assert(
    messages.some((m) =>
      m.includes("Deployment kube-system/coredns") &&
      m.includes(".spec.template.spec.containers[name=coredns].image") &&
      m.includes("talos") && m.includes("kustomize-controller")
    ),
    messages.join("\n"),
  );
});

Deno.test("an object without the bootstrap manager's entry is of unknown ownership and refuses", () => {
  const j = judgeOwnership([{
    ref: "ServiceAccount kube-system/x",
    uid: "u",
    resourceVersion: "1",
    managedFields: [],
  }]);
  assertEquals(j.unknown.map((u) => u.why), ["it has no managedFields"]);
});

Deno.test("ownedPaths renders set, list and map keys", () => {
  assertEquals(ownedPaths({ "f:a": { "i:0": {}, 'v:"x"': {} }, "f:b": { ".": {}, "f:c": {} } }), [
    ".a[0]",
    '.a[="x"]',
    ".b",
    ".b.c",
  ]);
});

Deno.test("skew: apiservers two minors apart, controller-manager newer than an apiserver", () => {
  const v = skewViolations([
    { component: "kube-apiserver", node: "a", version: "v1.34.0" },
    { component: "kube-apiserver", node: "b", version: "v1.36.0" },
    { component: "kube-controller-manager", node: "a", version: "v1.35.0" },
  ]);
  assertEquals(v.map((x) => x.component), ["kube-apiserver", "kube-controller-manager"]);
  assertEquals(
    skewViolations([
      { component: "kube-apiserver", node: "a", version: "v1.36.0" },
      { component: "kubelet", node: "w", version: "v1.33.9" },
      { component: "kube-scheduler", node: "a", version: "v1.35.9" },
    ]),
    [],
  );
});

Deno.test("support matrix: Talos 1.13 supports Kubernetes 1.31–1.36, an unknown minor has no window", () => {
  const w = supportWindow(parseVersion("v1.13.9"))!;
  assert(inSupportWindow(w, parseVersion("v1.36.4")));
  assert(!inSupportWindow(w, parseVersion("v1.37.0")));
  assert(!inSupportWindow(w, parseVersion("v1.30.9")));
  assertEquals(supportWindow(parseVersion("v1.99.0")), undefined);
});

Deno.test("a component not on the plan's starting version refuses the plan-level preflight", () => {
  const e = evidence();
  const j = judgePreflight(PLAN, {
    ...e,
    components: e.components.map((c) =>
      c.component === "kube-scheduler" ? { ...c, version: "v1.35.1" } : c
    ),
  }, { expectFrom: true });
  assertEquals(j.skew.problems.map((p) => p.reason), ["KubernetesVersionUnexpected"]);
});

Deno.test("a field below one the bootstrap manager owns whole is shared; a sibling under a member node is not", () => {
  const talos = {
    "f:spec": { ".": {}, "f:replicas": {}, "f:template": { "f:spec": { "f:containers": {} } } },
  };
  const j = judgeOwnership([{
    ref: "Deployment kube-system/coredns",
    uid: "u",
    resourceVersion: "1",
    managedFields: [
      { manager: BOOTSTRAP_FIELD_MANAGER, operation: "Apply", subresource: "", fieldsV1: talos },
      {
        manager: "kustomize-controller",
        operation: "Apply",
        subresource: "",
        fieldsV1: {
          "f:spec": {
            ".": {},
            "f:paused": {},
            "f:template": {
              "f:spec": { "f:containers": { 'k:{"name":"coredns"}': { "f:image": {} } } },
            },
          },
        },
      },
    ],
  }]);
  assertEquals(j.overlaps.map((o) => o.path), [
    ".spec.template.spec.containers[name=coredns].image",
  ]);
});
