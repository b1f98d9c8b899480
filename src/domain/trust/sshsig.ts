/**
 * Native SSHSIG verification (OpenSSH `PROTOCOL.sshsig`) with WebCrypto only: armor decoding,
 * blob parsing, and the cryptographic check over the plan bytes. Trust (allowed_signers) is a
 * separate step: a signature that verifies here proves only that *some* key signed.
 */
import type { Reason } from "../reasons.ts";
import {
  keyFingerprint,
  parsePublicKeyBlob,
  rsaModulusBits,
  type SshPublicKey,
} from "./ssh_key.ts";
import {
  bytesEqual,
  concatBytes,
  decodeBase64,
  encodeString,
  SshReader,
  SshWireError,
} from "./ssh_wire.ts";

const MAGIC = new TextEncoder().encode("SSHSIG");
const BEGIN = "-----BEGIN SSH SIGNATURE-----";
const END = "-----END SSH SIGNATURE-----";
const SUPPORTED_VERSION = 1;
const HASHES = { sha256: "SHA-256", sha512: "SHA-512" } as const;
/** OpenSSH refuses RSA keys below this size (`SSH_RSA_MINIMUM_MODULUS_SIZE`). */
const RSA_MIN_BITS = 1024;

/** Why a signature failed on its own, before any trust decision. */
export type SignatureFailureReason = Extract<
  Reason,
  "SignatureMalformed" | "SignatureInvalid" | "SignatureNamespaceMismatch" | "UnsupportedKeyType"
>;

/** A signature that could not be verified, with a stable reason. */
export class SshSignatureError extends Error {
  readonly reason: SignatureFailureReason;
  constructor(reason: SignatureFailureReason, message: string) {
    super(message);
    this.name = "SshSignatureError";
    this.reason = reason;
  }
}

/** The fields of an SSHSIG blob (`PROTOCOL.sshsig` §2). */
export interface SshSignatureBlob {
  readonly version: number;
  readonly publicKey: SshPublicKey;
  readonly namespace: string;
  readonly reserved: Uint8Array;
  readonly hashAlgorithm: "sha256" | "sha512";
  /** The inner SSH signature blob (algorithm name + signature bytes). */
  readonly signature: Uint8Array;
}

/** Outcome of {@link verifySshSignature}. */
export type SshSignatureVerification =
  | {
    readonly ok: true;
    readonly publicKey: SshPublicKey;
    readonly fingerprint: string;
    readonly namespace: string;
    readonly hashAlgorithm: "sha256" | "sha512";
    readonly signatureAlgorithm: string;
  }
  | {
    readonly ok: false;
    readonly reason: SignatureFailureReason;
    readonly message: string;
    readonly publicKey?: SshPublicKey;
    readonly fingerprint?: string;
  };

function malformed(message: string): SshSignatureError {
  return new SshSignatureError("SignatureMalformed", message);
}

/** Decodes one armored signature to its raw blob. Any line length and CRLF are accepted. */
export function dearmorSshSignature(armored: string): Uint8Array {
  const text = armored.replace(/^[\r\n]+/, "");
  if (!text.startsWith(BEGIN)) throw malformed(`does not start with '${BEGIN}'`);
  const afterBegin = text.slice(BEGIN.length);
  if (!/^\r?\n/.test(afterBegin)) throw malformed("header line is not followed by a newline");
  const endAt = afterBegin.indexOf(`\n${END}`);
  if (endAt < 0) throw malformed(`no '${END}' line`);
  const body = afterBegin.slice(0, endAt).replace(/\s+/g, "");
  try {
    return decodeBase64(body);
  } catch {
    throw malformed("body is not valid base64");
  }
}

/** Parses an SSHSIG blob; rejects a wrong preamble, version > 1, empty namespace, trailing data. */
export function parseSshSignatureBlob(blob: Uint8Array): SshSignatureBlob {
  try {
    const r = new SshReader(blob);
    if (!bytesEqual(r.bytes(MAGIC.length), MAGIC)) throw malformed("preamble is not 'SSHSIG'");
    const version = r.uint32();
    if (version > SUPPORTED_VERSION) {
      throw malformed(`signature version ${version} is newer than supported ${SUPPORTED_VERSION}`);
    }
    const publicKey = parsePublicKeyBlob(r.string());
    const namespace = r.text();
    const reserved = r.string();
    const hashAlgorithm = r.text();
    const signature = r.string();
    r.end("signature");
    if (namespace === "") throw malformed("signature namespace is empty");
    if (hashAlgorithm !== "sha256" && hashAlgorithm !== "sha512") {
      throw new SshSignatureError(
        "UnsupportedKeyType",
        `hash algorithm '${hashAlgorithm}' is not sha256 or sha512`,
      );
    }
    return { version, publicKey, namespace, reserved, hashAlgorithm, signature };
  } catch (e) {
    if (e instanceof SshWireError) throw malformed(e.message);
    throw e;
  }
}

/** The bytes the signer's key signed (`PROTOCOL.sshsig` §3); reserved is always empty. */
export async function signedData(
  message: Uint8Array,
  opts: { namespace: string; hashAlgorithm: "sha256" | "sha512" },
): Promise<Uint8Array<ArrayBuffer>> {
  const digest = await crypto.subtle.digest(HASHES[opts.hashAlgorithm], message.slice());
  return concatBytes([
    MAGIC,
    encodeString(opts.namespace),
    encodeString(""),
    encodeString(opts.hashAlgorithm),
    encodeString(new Uint8Array(digest)),
  ]);
}

/**
 * Verifies one armored SSH signature over `message` for `namespace`. Never throws for bad input:
 * every failure comes back as `{ ok: false, reason }`.
 */
export async function verifySshSignature(
  armored: string,
  message: Uint8Array,
  namespace: string,
): Promise<SshSignatureVerification> {
  let parsed: SshSignatureBlob | undefined;
  let fingerprint: string | undefined;
  try {
    parsed = parseSshSignatureBlob(dearmorSshSignature(armored));
    fingerprint = await keyFingerprint(parsed.publicKey);
    const alg = await checkParsed(parsed, message, namespace);
    return {
      ok: true,
      publicKey: parsed.publicKey,
      fingerprint,
      namespace: parsed.namespace,
      hashAlgorithm: parsed.hashAlgorithm,
      signatureAlgorithm: alg,
    };
  } catch (e) {
    if (!(e instanceof SshSignatureError)) throw e;
    return {
      ok: false,
      reason: e.reason,
      message: e.message,
      ...(parsed ? { publicKey: parsed.publicKey } : {}),
      ...(fingerprint ? { fingerprint } : {}),
    };
  }
}

async function checkParsed(
  sig: SshSignatureBlob,
  message: Uint8Array,
  namespace: string,
): Promise<string> {
  if (!sig.publicKey.supported) {
    throw new SshSignatureError(
      "UnsupportedKeyType",
      `key type '${sig.publicKey.type}' is not supported`,
    );
  }
  // OpenSSH compares namespaces before the crypto check and rebuilds the signed data with the
  // caller's namespace, so a mismatch can never verify.
  if (sig.namespace !== namespace) {
    throw new SshSignatureError(
      "SignatureNamespaceMismatch",
      `signature namespace '${sig.namespace}' is not '${namespace}'`,
    );
  }
  const data = await signedData(message, { namespace, hashAlgorithm: sig.hashAlgorithm });
  const { ok, algorithm } = await verifyRaw(sig.publicKey, sig.signature, data);
  if (!ok) throw new SshSignatureError("SignatureInvalid", "signature does not verify");
  return algorithm;
}

function invalid(message: string): SshSignatureError {
  return new SshSignatureError("SignatureInvalid", message);
}

/** Verifies an SSH signature blob made by `key` over `data`. */
async function verifyRaw(
  key: SshPublicKey,
  sigBlob: Uint8Array,
  data: Uint8Array<ArrayBuffer>,
): Promise<{ ok: boolean; algorithm: string }> {
  let algorithm: string;
  let raw: Uint8Array;
  try {
    const r = new SshReader(sigBlob);
    algorithm = r.text();
    raw = r.string();
    r.end("signature blob");
  } catch (e) {
    if (e instanceof SshWireError) throw invalid(`signature blob: ${e.message}`);
    throw e;
  }
  if (key.type === "ssh-ed25519") {
    return { ok: await verifyEd25519(key, algorithm, raw, data), algorithm };
  }
  if (key.type === "ssh-rsa") return { ok: await verifyRsa(key, algorithm, raw, data), algorithm };
  return { ok: await verifyEcdsa(key, algorithm, raw, data), algorithm };
}

async function verifyEd25519(
  key: SshPublicKey,
  algorithm: string,
  sig: Uint8Array,
  data: Uint8Array<ArrayBuffer>,
): Promise<boolean> {
  if (algorithm !== "ssh-ed25519") throw invalid(`signature type '${algorithm}' for ed25519 key`);
  const pk = key.parts[0]!;
  if (pk.length !== 32) throw malformed("ed25519 public key is not 32 bytes");
  if (sig.length !== 64) throw invalid("ed25519 signature is not 64 bytes");
  const k = await importOrMalformed(() =>
    crypto.subtle.importKey("raw", pk.slice(), { name: "Ed25519" }, false, ["verify"])
  );
  return crypto.subtle.verify({ name: "Ed25519" }, k, sig.slice(), data);
}

const CURVES = {
  "ecdsa-sha2-nistp256": { curve: "nistp256", named: "P-256", hash: "SHA-256", size: 32 },
  "ecdsa-sha2-nistp384": { curve: "nistp384", named: "P-384", hash: "SHA-384", size: 48 },
  "ecdsa-sha2-nistp521": { curve: "nistp521", named: "P-521", hash: "SHA-512", size: 66 },
} as const;

async function verifyEcdsa(
  key: SshPublicKey,
  algorithm: string,
  sig: Uint8Array,
  data: Uint8Array<ArrayBuffer>,
): Promise<boolean> {
  const c = CURVES[key.type as keyof typeof CURVES];
  if (algorithm !== key.type) throw invalid(`signature type '${algorithm}' for ${key.type} key`);
  if (new TextDecoder().decode(key.parts[0]) !== c.curve) {
    throw malformed(`ecdsa key curve does not match ${key.type}`);
  }
  let p1363: Uint8Array<ArrayBuffer>;
  try {
    const r = new SshReader(sig);
    const parts = [r.mpintUnsigned(), r.mpintUnsigned()];
    r.end("ecdsa signature");
    if (parts.some((p) => p.length === 0 || p.length > c.size)) {
      throw invalid("ecdsa r or s is zero or too large");
    }
    // WebCrypto wants IEEE P1363: r ‖ s, each left-padded to the curve's byte size.
    p1363 = new Uint8Array(c.size * 2);
    parts.forEach((p, i) => p1363.set(p, (i + 1) * c.size - p.length));
  } catch (e) {
    if (e instanceof SshWireError) throw invalid(`ecdsa signature: ${e.message}`);
    throw e;
  }
  const k = await importOrMalformed(() =>
    crypto.subtle.importKey(
      "raw",
      key.parts[1]!.slice(),
      {
        name: "ECDSA",
        namedCurve: c.named,
      },
      false,
      ["verify"],
    )
  );
  return crypto.subtle.verify({ name: "ECDSA", hash: c.hash }, k, p1363, data);
}

const RSA_HASHES: Readonly<Record<string, string>> = {
  "rsa-sha2-256": "SHA-256",
  "rsa-sha2-512": "SHA-512",
};

async function verifyRsa(
  key: SshPublicKey,
  algorithm: string,
  sig: Uint8Array,
  data: Uint8Array<ArrayBuffer>,
): Promise<boolean> {
  const hash = RSA_HASHES[algorithm];
  if (algorithm === "ssh-rsa") {
    throw new SshSignatureError("UnsupportedKeyType", "ssh-rsa (SHA-1) signatures are refused");
  }
  if (!hash) throw invalid(`signature type '${algorithm}' for ssh-rsa key`);
  const bits = rsaModulusBits(key);
  if (bits < RSA_MIN_BITS) {
    throw new SshSignatureError("UnsupportedKeyType", `RSA key of ${bits} bits is too small`);
  }
  const modLen = Math.ceil(bits / 8);
  if (sig.length > modLen) throw invalid("RSA signature is longer than the modulus");
  // OpenSSH left-pads a short signature to the modulus length; WebCrypto requires exact length.
  const padded = new Uint8Array(modLen);
  padded.set(sig, modLen - sig.length);
  const [e, n] = key.parts;
  const jwk = { kty: "RSA", e: base64Url(e!), n: base64Url(n!), ext: true };
  const k = await importOrMalformed(() =>
    crypto.subtle.importKey("jwk", jwk, { name: "RSASSA-PKCS1-v1_5", hash }, false, ["verify"])
  );
  return crypto.subtle.verify({ name: "RSASSA-PKCS1-v1_5" }, k, padded, data);
}

function base64Url(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

async function importOrMalformed(f: () => Promise<CryptoKey>): Promise<CryptoKey> {
  try {
    return await f();
  } catch (e) {
    throw malformed(`public key rejected: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** One armored block found in a `.sig` file, with the 1-based line it starts on. */
export interface ArmoredBlock {
  readonly text: string;
  readonly line: number;
}

/**
 * Splits a `.sig` file holding one or more concatenated armored signatures. Text outside the
 * blocks (other than blank lines) is returned as a block of its own so the caller reports it as
 * malformed instead of ignoring it.
 */
export function splitArmoredSignatures(text: string): ArmoredBlock[] {
  const lines = text.split("\n");
  const blocks: ArmoredBlock[] = [];
  let current: { start: number; lines: string[] } | undefined;
  lines.forEach((raw, i) => {
    const line = raw.replace(/\r$/, "");
    if (!current) {
      if (line.trim() === "") return;
      current = { start: i + 1, lines: [] };
    }
    current.lines.push(line);
    if (line === END || !current.lines[0]!.startsWith(BEGIN)) {
      blocks.push({ text: current.lines.join("\n") + "\n", line: current.start });
      current = undefined;
    }
  });
  if (current) blocks.push({ text: current.lines.join("\n") + "\n", line: current.start });
  return blocks;
}
