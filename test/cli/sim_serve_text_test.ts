/**
 * What `cairn sim serve` prints for a person ends with how to use the twin from another shell:
 * the environment variables kubectl, talosctl and cairn read, and the mirror flag a preview
 * needs (without it the installer is looked up at factory.talos.dev and the preview holds).
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { servingText } from "../../src/cli/sim_serve.ts";

const TWIN = {
  cluster: "home-ops",
  pid: 4242,
  talosconfigPath: "/tmp/twin/talosconfig",
  kubeconfigPath: "/tmp/twin/kubeconfig",
  controlUrl: "http://127.0.0.1:35771",
  registry: {
    url: "http://127.0.0.1:42621",
    mirrors: { "factory.talos.dev": "http://127.0.0.1:42621" },
    images: [],
  },
  stateDir: "/tmp/twin",
};

Deno.test("sim serve's text names the variables to export and the preview's mirror flag", () => {
  const text = servingText(TWIN, 1);
  assert(text.startsWith("twin of home-ops is running (pid 4242)\n"), text);
  assert(text.includes("time:        wall clock ×1\n"), text);
  assert(
    text.endsWith(
      "\nTo use it from another shell:\n" +
        "  export TALOSCONFIG=/tmp/twin/talosconfig KUBECONFIG=/tmp/twin/kubeconfig\n" +
        "  cairn plan preview PLAN --registry-mirror factory.talos.dev=http://127.0.0.1:42621\n",
    ),
    text,
  );
});

Deno.test("a state dir with a space is quoted in the export line; manual time says so", () => {
  const text = servingText(
    { ...TWIN, talosconfigPath: "/tmp/my twin/talosconfig", kubeconfigPath: null },
    "manual",
  );
  assert(text.includes("  export TALOSCONFIG='/tmp/my twin/talosconfig'\n"), text);
  assert(text.includes("kubeconfig:  (Kubernetes simulator not available)\n"), text);
  assertEquals(text.includes("KUBECONFIG="), false);
  assert(text.includes("time:        manual (moves through the control endpoint)\n"), text);
});
