/**
 * Every call the executor makes in cordon, drain and uncordon carries a deadline, and the
 * adapter keeps it against a server that accepts the connection and then says nothing: each
 * call ends with `KubeTimeout` soon after its deadline instead of hanging the phase.
 */
import { deepStrictEqual as assertEquals, ok as assert, rejects } from "node:assert/strict";
import { createClientNodeKube } from "../../../src/adapters/kube/client_node_kube.ts";
import { CairnError } from "../../../src/domain/errors.ts";
import type { Kube } from "../../../src/ports/kube.ts";
import { startSilentListener, within } from "../../_helpers/silent_listener.ts";

function kubeconfig(port: number): string {
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "- name: silent",
    "  cluster:",
    `    server: https://127.0.0.1:${port}`,
    "    insecure-skip-tls-verify: true",
    "users:",
    "- name: u",
    "  user:",
    "    token: not-a-secret",
    "contexts:",
    "- name: c",
    "  context: { cluster: silent, user: u }",
    "current-context: c",
    "",
  ].join("\n");
}

const PODS = { group: "", version: "v1", plural: "pods", namespaced: true };
const POD = { namespace: "default", name: "web-0" };

Deno.test("ClientNodeKube: cordon, drain and uncordon calls to a silent API server end with KubeTimeout at their deadline", async () => {
  const silent = startSilentListener();
  try {
    const kube: Kube = await createClientNodeKube({ kubeconfigYaml: kubeconfig(silent.port) });
    const t = { timeoutMs: 300 };
    const calls: [string, () => Promise<unknown>][] = [
      ["getNode", () => kube.getNode("worker-1", t)],
      ["getObject", () => kube.getObject(PODS, "web-0", "default", t)],
      ["listPods", () => kube.listPods("worker-1", t)],
      ["getPod", () => kube.getPod(POD, t)],
      ["cordon", () => kube.cordon("worker-1", "42", t)],
      ["uncordon", () => kube.uncordon("worker-1", "42", t)],
      ["evict", () => kube.evict(POD, t)],
    ];
    for (const [name, call] of calls) {
      const started = Date.now();
      await rejects(
        within(5_000, call()),
        (e: unknown) => e instanceof CairnError && e.reason === "KubeTimeout",
        name,
      );
      const took = Date.now() - started;
      assert(took >= 250 && took < 3_000, `${name}: took ${took} ms`);
    }
    assertEquals(silent.accepted() >= calls.length, true, "every call reached the server");
  } finally {
    await silent.close();
  }
});
