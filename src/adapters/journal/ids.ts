/** Production identifiers: 128 bits from the platform CSPRNG, `<prefix>_<26 base32>`. */
import { encodeId } from "../../domain/operation.ts";
import type { IdSource } from "../../ports/clock.ts";

/** An IdSource backed by `crypto.getRandomValues`. */
export function cryptoIdSource(): IdSource {
  return { newId: (prefix) => encodeId(prefix, crypto.getRandomValues(new Uint8Array(16))) };
}
