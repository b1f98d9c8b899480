import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { sshKeygenVerify } from "../../src/adapters/ssh/ssh_keygen.ts";
import { allowedSignersText, demoSigner } from "../../src/app/demo_keys.ts";
import { parseAllowedSigners } from "../../src/domain/trust/allowed_signers.ts";
import { evaluatePolicy } from "../../src/domain/trust/policy.ts";

const PLAN = new TextEncoder().encode("apiVersion: cairn.dev/v1alpha1\nkind: TalosUpgrade\n");

Deno.test("demoSigner() signatures verify with real ssh-keygen -Y verify and fail on other bytes", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const alice = await demoSigner("alice@example.com");
    const signers = join(dir, "allowed_signers");
    await Deno.writeTextFile(signers, allowedSignersText([alice]));
    const sig = join(dir, "plan.sig");
    await Deno.writeTextFile(sig, await alice.sign(PLAN));
    const opts = { allowedSigners: signers, principal: "alice@example.com", signatureFile: sig };
    const good = await sshKeygenVerify(PLAN, opts);
    assertEquals(good.code, 0, good.stderr);
    const tampered = await sshKeygenVerify(new TextEncoder().encode("kind: Other\n"), opts);
    assert(tampered.code !== 0, "a signature must not verify over other bytes");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("demoSigner() author + approver satisfy the plan approval policy", async () => {
  const alice = await demoSigner("alice@example.com");
  const bob = await demoSigner("bob@example.com");
  const verdict = await evaluatePolicy({
    plan: PLAN,
    signatures: (await alice.sign(PLAN)) + (await bob.sign(PLAN)),
    signers: parseAllowedSigners(allowedSignersText([alice, bob]), "allowed_signers"),
    author: "alice@example.com",
    atMs: Date.UTC(2026, 11, 1),
  });
  assertEquals([verdict.ok, verdict.authorSigned, verdict.approvers], [true, true, [
    "bob@example.com",
  ]]);
});
