import { deepStrictEqual as assertEquals, ok as assert, rejects } from "node:assert/strict";
import { join } from "node:path";
import { generateKey } from "../../src/adapters/ssh/ssh_keygen.ts";
import { fileTrustRoot } from "../../src/app/reconcile_wiring.ts";
import { findAllowedSigner } from "../../src/domain/trust/allowed_signers.ts";
import { parsePublicKeyBlob } from "../../src/domain/trust/ssh_key.ts";
import { decodeBase64 } from "../../src/domain/trust/ssh_wire.ts";

function keyOf(line: string) {
  return parsePublicKeyBlob(decodeBase64(line.split(/\s+/)[1]!));
}

Deno.test("fileTrustRoot() names the trust root by its content, never by its host path", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cairn-trust-root-" });
  try {
    const alice = await generateKey("ed25519", join(dir, "alice"), "alice@example.com");
    const mallory = await generateKey("ed25519", join(dir, "mallory"), "mallory@example.com");
    const path = join(dir, "allowed_signers");
    await Deno.writeTextFile(path, `alice@example.com,ops@example.com ${alice}\n`);
    const signers = await fileTrustRoot(path).load();
    assert(
      /^the configured trust root \(allowed_signers, 2 principals, sha256 [0-9a-f]{16}…\)$/
        .test(signers.file),
      signers.file,
    );
    // Everything a refusal can quote (the file, each entry) is the label: reports carry it.
    const miss = findAllowedSigner(signers, {
      key: keyOf(mallory),
      namespace: "cairn-plan",
      atMs: 0,
    });
    assert(!miss.ok && !miss.message.includes(dir), JSON.stringify(miss));
    assert(!miss.ok && miss.message.includes("the configured trust root"), miss.message);
    assertEquals(signers.entries.map((e) => e.file), [signers.file]);
    assert(!JSON.stringify(signers).includes(dir), "no host path anywhere in the signers");
    // A malformed trust root is refused naming its path: that goes to the operator, not to Git.
    await Deno.writeTextFile(path, "alice@example.com not-a-key\n");
    await rejects(
      fileTrustRoot(path).load(),
      (e: { location?: { file?: string } }) => e.location?.file === path,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
