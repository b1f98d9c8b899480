/**
 * Content digests. A plan's identity (and a catalogue snapshot's) is the SHA-256 of the exact
 * file bytes, so what reviewers signed is byte-for-byte what runs.
 */

/** The synchronous hasher of digest_sync.ts, once that module is loaded. */
let syncSha256Hex: ((bytes: Uint8Array) => string) | undefined;

/** Called by digest_sync.ts when it loads: {@link sha256Hex} then answers through it. */
export function useSyncSha256Hex(hasher: (bytes: Uint8Array) => string): void {
  syncSha256Hex = hasher;
}

/**
 * Lower-case hex SHA-256 of `bytes`. Through `node:crypto` (digest_sync.ts) in a process that
 * loaded it (the reconciler, the executor, the simulations: about 1.5 µs a call against 90 µs
 * for WebCrypto's round trip to a worker); through WebCrypto otherwise, so that `cairn plan
 * check` does not start Deno's Node compatibility layer and `node:crypto` (some 40 ms of its
 * cold start here) for its three digests. Both give the same digest.
 *
 * @example
 * ```ts
 * import { sha256Hex } from "./digest.ts";
 * await sha256Hex(new TextEncoder().encode("")); // "e3b0c442…b855"
 * ```
 */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  if (syncSha256Hex) return syncSha256Hex(bytes);
  // WebCrypto takes views of an ArrayBuffer only (a shared buffer's view is copied first).
  const data = bytes.buffer instanceof ArrayBuffer
    ? bytes as Uint8Array<ArrayBuffer>
    : bytes.slice();
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", data));
  let hex = "";
  for (const b of digest) hex += b.toString(16).padStart(2, "0");
  return hex;
}
