/**
 * Content digests. A plan's identity (and a catalogue snapshot's) is the SHA-256 of the exact
 * file bytes, so what reviewers signed is byte-for-byte what runs.
 */
import { createHash } from "node:crypto";

/**
 * Lower-case hex SHA-256 of `bytes`.
 *
 * @example
 * ```ts
 * import { sha256Hex } from "./digest.ts";
 * await sha256Hex(new TextEncoder().encode("")); // "e3b0c442…b855"
 * ```
 */
export function sha256Hex(bytes: Uint8Array): Promise<string> {
  return Promise.resolve(sha256HexSync(bytes));
}

/**
 * `sha256Hex`, synchronously. The executor digests every request and observation it records; the
 * asynchronous WebCrypto digest hops through a worker and back (about 90 µs a call against 1.5 µs
 * here), which made hashing a tenth of a simulated seed's CPU (docs/dst.md, Budgets and speed).
 */
export function sha256HexSync(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}
