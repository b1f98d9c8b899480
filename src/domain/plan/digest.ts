/**
 * Content digests. A plan's identity (and a catalogue snapshot's) is the SHA-256 of the exact
 * file bytes, so what reviewers signed is byte-for-byte what runs.
 */

/**
 * Lower-case hex SHA-256 of `bytes`.
 *
 * @example
 * ```ts
 * import { sha256Hex } from "./digest.ts";
 * await sha256Hex(new TextEncoder().encode("")); // "e3b0c442…b855"
 * ```
 */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const copy = bytes.slice();
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", copy));
  let hex = "";
  for (const b of hash) hex += b.toString(16).padStart(2, "0");
  return hex;
}
