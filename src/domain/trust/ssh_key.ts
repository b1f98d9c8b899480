/**
 * SSH public-key blobs (RFC 4253 / 5656 / 8709): parse, compare, fingerprint. Only the key types
 * cairn verifies are parsed in depth; other well-known types (security keys, DSA, certificates)
 * are recognised by name so allowed_signers may list them, but they never verify a plan.
 */
import { bytesEqual, encodeBase64NoPad, SshReader } from "./ssh_wire.ts";

/** Key types whose signatures cairn verifies. */
export const SUPPORTED_KEY_TYPES = [
  "ssh-ed25519",
  "ecdsa-sha2-nistp256",
  "ecdsa-sha2-nistp384",
  "ecdsa-sha2-nistp521",
  "ssh-rsa",
] as const;
export type SupportedKeyType = (typeof SUPPORTED_KEY_TYPES)[number];

/** Key type names OpenSSH knows but cairn does not verify with. */
const KNOWN_UNSUPPORTED = new Set([
  "ssh-dss",
  "sk-ssh-ed25519@openssh.com",
  "sk-ecdsa-sha2-nistp256@openssh.com",
]);

/** A parsed SSH public key. `parts` are the type-specific fields after the type name. */
export interface SshPublicKey {
  readonly type: string;
  readonly supported: boolean;
  readonly blob: Uint8Array;
  readonly parts: readonly Uint8Array[];
}

/** True for a key type name that OpenSSH would accept in an authorized-keys style line. */
export function isKnownKeyType(name: string): boolean {
  return (SUPPORTED_KEY_TYPES as readonly string[]).includes(name) ||
    KNOWN_UNSUPPORTED.has(name) || name.endsWith("-cert-v01@openssh.com");
}

/** True when `name` is a key type cairn verifies. */
export function isSupportedKeyType(name: string): name is SupportedKeyType {
  return (SUPPORTED_KEY_TYPES as readonly string[]).includes(name);
}

/** Parses a public-key blob; throws SshWireError on bad structure or trailing data. */
export function parsePublicKeyBlob(blob: Uint8Array): SshPublicKey {
  const r = new SshReader(blob);
  const type = r.text();
  if (!isSupportedKeyType(type)) return { type, supported: false, blob, parts: [] };
  let parts: Uint8Array[];
  if (type === "ssh-ed25519") parts = [r.string()];
  else if (type === "ssh-rsa") parts = [r.mpintUnsigned(), r.mpintUnsigned()];
  else parts = [r.string(), r.string()];
  r.end("public key");
  return { type, supported: true, blob, parts };
}

/** Key equality by type and components (OpenSSH `sshkey_equal`), not by blob bytes. */
export function keysEqual(a: SshPublicKey, b: SshPublicKey): boolean {
  if (a.type !== b.type) return false;
  if (!a.supported) return bytesEqual(a.blob, b.blob);
  return a.parts.length === b.parts.length && a.parts.every((p, i) => bytesEqual(p, b.parts[i]!));
}

/** OpenSSH's fingerprint: `SHA256:` + unpadded base64 of SHA-256 over the key blob. */
export async function keyFingerprint(key: SshPublicKey): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", key.blob.slice());
  return `SHA256:${encodeBase64NoPad(new Uint8Array(digest))}`;
}

/** Short label as ssh-keygen prints it (`ED25519`, `ECDSA`, `RSA`). */
export function keyLabel(key: SshPublicKey): string {
  if (key.type === "ssh-ed25519") return "ED25519";
  if (key.type.startsWith("ecdsa-")) return `ECDSA-${key.type.slice(-4).toUpperCase()}`;
  if (key.type === "ssh-rsa") return `RSA-${rsaModulusBits(key)}`;
  return key.type;
}

/** Bit length of an RSA key's modulus. */
export function rsaModulusBits(key: SshPublicKey): number {
  const n = key.parts[1];
  if (!n || n.length === 0) return 0;
  return (n.length - 1) * 8 + (32 - Math.clz32(n[0]!));
}
