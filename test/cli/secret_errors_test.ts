/**
 * A malformed kubeconfig or talosconfig is reported by line and column, never with an excerpt of
 * the file: the lines around a YAML error in those files are a bearer token or a private key.
 */
import { ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { createClientNodeKube } from "../../src/adapters/kube/client_node_kube.ts";
import { loadTalosconfig } from "../../src/adapters/talos/talosconfig.ts";
import { CairnError } from "../../src/domain/errors.ts";

const TOKEN = "FAKETOKEN-s3cr3t-4f1b";
const KEY = "RkFLRUtFWS1zM2NyM3Q="; // fake, base64 like a talosconfig key

const KUBECONFIG = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: u
  user:
    token: ${TOKEN}
\t  extra: tab-indented
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`;

const TALOSCONFIG = `context: a
contexts:
  a:
    endpoints: [127.0.0.1]
    ca: Y2E=
    crt: Y3J0
    key: ${KEY}
\t  oops: 1
`;

async function refusal(f: () => Promise<unknown>): Promise<string> {
  try {
    await f();
  } catch (e) {
    assert(e instanceof CairnError, String(e));
    return e.message;
  }
  throw new Error("the malformed file was accepted");
}

Deno.test("a malformed kubeconfig's error names the line, not the token", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "kubeconfig");
    await Deno.writeTextFile(path, KUBECONFIG);
    const message = await refusal(() => createClientNodeKube({ kubeconfigPath: path }));
    assert(!message.includes(TOKEN) && !message.includes("FAKETOKEN"), message);
    assert(/\(10:1\)|line 10/.test(message), message);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a malformed talosconfig's error names the line, not the key", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "talosconfig");
    await Deno.writeTextFile(path, TALOSCONFIG);
    const message = await refusal(() => loadTalosconfig(path));
    assert(!message.includes(KEY), message);
    assert(message.includes("line 8"), message);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
