/**
 * RFC 4251 §5 wire primitives (uint32, string, mpint) as used by SSH key and signature blobs.
 * Reading past the end or leaving bytes unread is an error: SSHSIG verifiers must reject trailing
 * data, and a lenient reader would let two different byte strings mean the same signature.
 */

/** A blob that does not follow the SSH wire encoding. */
export class SshWireError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SshWireError";
  }
}

/** Sequential reader over one SSH wire-encoded buffer. */
export class SshReader {
  readonly #buf: Uint8Array;
  #off = 0;

  constructor(buf: Uint8Array) {
    this.#buf = buf;
  }

  /** Bytes not yet read. */
  get remaining(): number {
    return this.#buf.length - this.#off;
  }

  /** Raw `byte[n]`. */
  bytes(n: number): Uint8Array {
    if (n > this.remaining) {
      throw new SshWireError(`needs ${n} byte(s) at offset ${this.#off}, ${this.remaining} left`);
    }
    const out = this.#buf.slice(this.#off, this.#off + n);
    this.#off += n;
    return out;
  }

  /** Big-endian `uint32`. */
  uint32(): number {
    const b = this.bytes(4);
    return ((b[0]! << 24) >>> 0) + (b[1]! << 16) + (b[2]! << 8) + b[3]!;
  }

  /** `string` as raw bytes (uint32 length + bytes). */
  string(): Uint8Array {
    return this.bytes(this.uint32());
  }

  /** `string` decoded as UTF-8; invalid UTF-8 is an error rather than replacement characters. */
  text(): string {
    const raw = this.string();
    try {
      return new TextDecoder("utf-8", { fatal: true }).decode(raw);
    } catch {
      throw new SshWireError("string is not valid UTF-8");
    }
  }

  /**
   * A non-negative `mpint` as its unsigned big-endian magnitude with leading zeros trimmed.
   * Negative values are refused; superfluous leading zeros are tolerated, as OpenSSH does.
   */
  mpintUnsigned(): Uint8Array {
    const raw = this.string();
    if (raw.length > 0 && (raw[0]! & 0x80) !== 0) throw new SshWireError("mpint is negative");
    let i = 0;
    while (i < raw.length && raw[i] === 0) i++;
    return raw.slice(i);
  }

  /** Asserts the whole buffer was consumed. */
  end(what: string): void {
    if (this.remaining !== 0) {
      throw new SshWireError(`${what} contains ${this.remaining} byte(s) of trailing data`);
    }
  }
}

/** Encodes `uint32`. */
export function encodeUint32(n: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, n);
  return out;
}

/** Encodes `string` from bytes or UTF-8 text. */
export function encodeString(value: Uint8Array | string): Uint8Array {
  const raw = typeof value === "string" ? new TextEncoder().encode(value) : value;
  return concatBytes([encodeUint32(raw.length), raw]);
}

/** Concatenates byte arrays into a fresh ArrayBuffer-backed array (WebCrypto-ready). */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

/** Byte-wise equality. */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Strict base64 decode (standard alphabet, padding optional); whitespace must be removed first. */
export function decodeBase64(text: string): Uint8Array {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.replace(/=+$/, "").length % 4 === 1) {
    throw new SshWireError("not valid base64");
  }
  const bin = atob(text.padEnd(Math.ceil(text.length / 4) * 4, "="));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** Standard base64 without padding (the form of OpenSSH's SHA256 fingerprints). */
export function encodeBase64NoPad(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/=+$/, "");
}
