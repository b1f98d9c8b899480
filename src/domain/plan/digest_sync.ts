/**
 * SHA-256 synchronously, through `node:crypto`. The executor digests every request and
 * observation it records; the asynchronous WebCrypto digest hops through a worker and back
 * (about 90 µs a call against 1.5 µs here), which made hashing a tenth of a simulated seed's CPU
 * (docs/dst.md, Budgets and speed). Loading this module also makes digest.ts's `sha256Hex` answer
 * through it; a process that never loads it (`cairn plan check`) never loads `node:crypto`.
 */
import { createHash } from "node:crypto";
import { useSyncSha256Hex } from "./digest.ts";

/** Lower-case hex SHA-256 of `bytes`, synchronously. */
export function sha256HexSync(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

useSyncSha256Hex(sha256HexSync);
