/**
 * `cairn apply` verifies signatures and the approval policy before anything else: an unsigned or
 * under-approved plan is refused with its reason, and nothing is executed or journaled.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { allowedSignersText, demoSigner } from "../../src/app/demo_keys.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

async function apply(dir: string, plan: string) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      join(ROOT, "src/main.ts"),
      "apply",
      plan,
      "--kubeconfig",
      join(dir, "kubeconfig"),
      "--talosconfig",
      join(dir, "talosconfig"),
      "--journal",
      `file:${join(dir, "journal.db")}`,
      "--allowed-signers",
      join(dir, "allowed_signers"),
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

Deno.test("cairn apply refuses an unsigned plan before touching the cluster or the journal", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cairn-apply-" });
  const plan = join(dir, "talos-v1.14.2.yaml");
  await Deno.copyFile(join(ROOT, "plans/talos-v1.14.2.yaml"), plan);
  const alice = await demoSigner("alice@example.com");
  await Deno.writeTextFile(join(dir, "allowed_signers"), allowedSignersText([alice]));
  const r = await apply(dir, plan);
  assertEquals(r.code, 1);
  assert(r.stderr.includes("SignatureMissing"), r.stderr);
  assertEquals(await exists(join(dir, "journal.db")), false, "no journal written");
});

Deno.test("cairn apply refuses a plan signed by its author alone (approvals insufficient)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cairn-apply-" });
  const plan = join(dir, "talos-v1.14.2.yaml");
  await Deno.copyFile(join(ROOT, "plans/talos-v1.14.2.yaml"), plan);
  const alice = await demoSigner("alice@example.com");
  await Deno.writeTextFile(join(dir, "allowed_signers"), allowedSignersText([alice]));
  await Deno.writeTextFile(`${plan}.sig`, await alice.sign(await Deno.readFile(plan)));
  const r = await apply(dir, plan);
  assertEquals(r.code, 1);
  assert(r.stderr.includes("ApprovalsInsufficient"), r.stderr);
  assertEquals(await exists(join(dir, "journal.db")), false, "no journal written");
});
