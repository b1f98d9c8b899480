/**
 * Throwaway Ed25519 signing identities for `cairn demo`, held in memory: WebCrypto keys, the
 * `allowed_signers` line of each, and SSHSIG signatures (PROTOCOL.sshsig) over plan bytes in
 * namespace `cairn-plan`. The demo needs no ssh-keygen and writes no private key anywhere; real
 * users sign with their own keys (`cairn plan sign`).
 */
import { signedData } from "../domain/trust/sshsig.ts";
import { concatBytes, encodeString, encodeUint32 } from "../domain/trust/ssh_wire.ts";

const KEY_TYPE = "ssh-ed25519";

/** One throwaway signer. */
export interface DemoSigner {
  readonly principal: string;
  /** `ssh-ed25519 AAAA…` */
  readonly publicKey: string;
  /** Armored SSH signature of `message` in `namespace` (SHA-512, as ssh-keygen defaults). */
  sign(message: Uint8Array, namespace?: string): Promise<string>;
}

function base64(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

/** Creates a fresh Ed25519 signer for `principal`. */
export async function demoSigner(principal: string): Promise<DemoSigner> {
  const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, true, [
    "sign",
    "verify",
  ]) as CryptoKeyPair;
  const raw = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey));
  const keyBlob = concatBytes([encodeString(KEY_TYPE), encodeString(raw)]);
  return {
    principal,
    publicKey: `${KEY_TYPE} ${base64(keyBlob)}`,
    async sign(message, namespace = "cairn-plan") {
      const data = await signedData(message, { namespace, hashAlgorithm: "sha512" });
      const sig = new Uint8Array(
        await crypto.subtle.sign({ name: "Ed25519" }, pair.privateKey, data),
      );
      const blob = concatBytes([
        new TextEncoder().encode("SSHSIG"),
        encodeUint32(1),
        encodeString(keyBlob),
        encodeString(namespace),
        encodeString(""),
        encodeString("sha512"),
        encodeString(concatBytes([encodeString(KEY_TYPE), encodeString(sig)])),
      ]);
      const lines = base64(blob).match(/.{1,70}/g) ?? [];
      return ["-----BEGIN SSH SIGNATURE-----", ...lines, "-----END SSH SIGNATURE-----", ""]
        .join("\n");
    },
  };
}

/** The `allowed_signers` text naming each signer by its principal. */
export function allowedSignersText(signers: readonly DemoSigner[]): string {
  return signers.map((s) => `${s.principal} ${s.publicKey}`).join("\n") + "\n";
}
