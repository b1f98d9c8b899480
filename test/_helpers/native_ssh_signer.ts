/**
 * SSHSIG signatures made in process with WebCrypto Ed25519 (no ssh-keygen child process), for
 * tests that need signed plans fast. Keys are derived from the principal's name, so runs are
 * reproducible; the blob layout is `PROTOCOL.sshsig` §3, which cairn's verifier (and ssh-keygen)
 * checks.
 */
import { PLAN_SIGNATURE_NAMESPACE } from "../../src/domain/trust/policy.ts";
import { signedData } from "../../src/domain/trust/sshsig.ts";
import { concatBytes, encodeString, encodeUint32 } from "../../src/domain/trust/ssh_wire.ts";

/** PKCS#8 prefix of an Ed25519 private key; the 32-byte seed follows. */
const PKCS8_ED25519 = Uint8Array.from([
  0x30,
  0x2e,
  0x02,
  0x01,
  0x00,
  0x30,
  0x05,
  0x06,
  0x03,
  0x2b,
  0x65,
  0x70,
  0x04,
  0x22,
  0x04,
  0x20,
]);

export interface NativeSigner {
  readonly principal: string;
  /** The `allowed_signers` line for this key. */
  readonly allowedSignersLine: string;
  /** One armored SSH signature over `bytes` in the plan namespace (or `namespace`). */
  sign(bytes: Uint8Array, namespace?: string): Promise<string>;
}

/** A signer whose key is derived from `principal` (test keys only). */
export async function nativeSigner(principal: string): Promise<NativeSigner> {
  const seed = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`cairn-test-key:${principal}`)),
  );
  const pkcs8 = concatBytes([PKCS8_ED25519, seed]);
  const key = await crypto.subtle.importKey("pkcs8", pkcs8, { name: "Ed25519" }, true, ["sign"]);
  const jwk = await crypto.subtle.exportKey("jwk", key);
  const raw = Uint8Array.from(
    atob(jwk.x!.replace(/-/g, "+").replace(/_/g, "/")),
    (c) => c.charCodeAt(0),
  );
  const publicKey = concatBytes([encodeString("ssh-ed25519"), encodeString(raw)]);
  return {
    principal,
    allowedSignersLine: `${principal} ssh-ed25519 ${btoa(String.fromCharCode(...publicKey))}`,
    async sign(bytes, namespace = PLAN_SIGNATURE_NAMESPACE) {
      const data = await signedData(bytes, {
        namespace,
        hashAlgorithm: "sha512",
      });
      const sig = new Uint8Array(await crypto.subtle.sign({ name: "Ed25519" }, key, data));
      const blob = concatBytes([
        new TextEncoder().encode("SSHSIG"),
        encodeUint32(1),
        encodeString(publicKey),
        encodeString(namespace),
        encodeString(""),
        encodeString("sha512"),
        encodeString(concatBytes([encodeString("ssh-ed25519"), encodeString(sig)])),
      ]);
      return armor(blob);
    },
  };
}

function armor(blob: Uint8Array): string {
  const b64 = btoa(String.fromCharCode(...blob)).match(/.{1,70}/g)!.join("\n");
  return `-----BEGIN SSH SIGNATURE-----\n${b64}\n-----END SSH SIGNATURE-----\n`;
}
