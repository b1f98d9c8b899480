/**
 * kube-proxy's postcondition and ownership guard, on readings (pure): rolled only when the
 * DaemonSet's status at the current generation and every pod say so; a change's answer never
 * enters; a GitOps manager owning kube-proxy's containers is named, Talos and cairn are not.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import {
  type DaemonSetFacts,
  foreignTemplateOwners,
  kubeProxyReading,
  type ProxyPodFacts,
} from "../../../src/domain/k8s_upgrade/kube_proxy.ts";

const TO = "v1.36.0";
const rolled: DaemonSetFacts = {
  generation: 2,
  observedGeneration: 2,
  templateImage: `registry.k8s.io/kube-proxy:${TO}`,
  desired: 3,
  updated: 3,
  available: 3,
};
const pod = (node: string, tag = TO, ready = true, terminating = false): ProxyPodFacts => ({
  name: `kube-proxy-${node}`,
  node,
  image: `registry.k8s.io/kube-proxy:${tag}`,
  ready,
  terminating,
});
const pods = ["a", "b", "c"].map((n) => pod(n));

Deno.test("kube-proxy is established only when the status at the current generation and every pod agree", () => {
  assertEquals(kubeProxyReading(rolled, pods, TO).reading, "established");
  // The controller has not observed the new generation yet: the status says nothing.
  assertEquals(
    kubeProxyReading({ ...rolled, observedGeneration: 1 }, pods, TO).reading,
    "unreadable",
  );
  // Still rolling: a node not updated, or not yet available.
  assertEquals(kubeProxyReading({ ...rolled, updated: 2 }, pods, TO).reading, "unreadable");
  assertEquals(kubeProxyReading({ ...rolled, available: 2 }, pods, TO).reading, "unreadable");
  // A pod at the old version, another shutting down: not rolled, nothing contrary observed.
  assertEquals(
    kubeProxyReading(rolled, [pod("a"), pod("b"), pod("c", "v1.35.2")], TO).reading,
    "unreadable",
  );
  assertEquals(
    kubeProxyReading(rolled, [pod("a"), pod("b")], TO).reading,
    "unreadable",
  );
  assertEquals(
    kubeProxyReading({ ...rolled, desired: 0, updated: 0, available: 0 }, [], TO).reading,
    "unreadable",
  );
});

Deno.test("kube-proxy is contradicted by a pod at the target read not ready, or a template naming another version", () => {
  const r = kubeProxyReading(rolled, [pod("a"), pod("b", TO, false), pod("c")], TO);
  assertEquals(r.reading, "contradicted");
  assertEquals(r.summary.includes("not ready: kube-proxy-b on b"), true, r.summary);
  assertEquals(
    kubeProxyReading({ ...rolled, templateImage: "registry.k8s.io/kube-proxy:v1.35.2" }, pods, TO)
      .reading,
    "contradicted",
  );
});

Deno.test("kube-proxy unread is unreadable, never completed and never failed", () => {
  assertEquals(kubeProxyReading(undefined, pods, TO).reading, "unreadable");
  assertEquals(kubeProxyReading(rolled, undefined, TO).reading, "unreadable");
});

const entry = (manager: string, fieldsV1: unknown, subresource = "") => ({
  manager,
  operation: "Apply",
  subresource,
  fieldsV1,
});
const imageField = {
  "f:spec": {
    "f:template": {
      "f:spec": { "f:containers": { 'k:{"name":"kube-proxy"}': { ".": {}, "f:image": {} } } },
    },
  },
};

Deno.test("a GitOps manager owning kube-proxy's container image is named; talos and cairn are not", () => {
  assertEquals(
    foreignTemplateOwners(
      [entry("talos", imageField), entry("cairn", imageField), entry("flux", imageField)],
      "cairn",
    ),
    [
      {
        path: ".spec.template.spec.containers[name=kube-proxy]",
        manager: "flux",
        operation: "Apply",
      },
      {
        path: ".spec.template.spec.containers[name=kube-proxy].image",
        manager: "flux",
        operation: "Apply",
      },
    ],
  );
  // The whole template owned as a leaf holds the containers too.
  assertEquals(
    foreignTemplateOwners([entry("argocd", { "f:spec": { "f:template": {} } })], "cairn")
      .map((f) => f.path),
    [".spec.template"],
  );
  // Fields beside the containers (a restart annotation) and the status are not the image.
  assertEquals(
    foreignTemplateOwners([
      entry("kubectl-rollout", {
        "f:spec": { "f:template": { "f:metadata": { "f:annotations": { "f:x": {} } } } },
      }),
      entry("flux", imageField, "status"),
    ], "cairn"),
    [],
  );
});
