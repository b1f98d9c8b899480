import type { Clock, IdSource, Random } from "../../ports/clock.ts";

/** The wall clock, for production runs. */
export class SystemClock implements Clock {
  now(): number {
    return Date.now();
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      }, Math.max(0, ms));
      const onAbort = () => {
        clearTimeout(t);
        reject(signal?.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }
}

/** Cryptographic randomness. */
export class CryptoRandom implements Random {
  next(): number {
    const b = new Uint32Array(1);
    crypto.getRandomValues(b);
    return b[0]! / 2 ** 32;
  }
}

const B32 = "abcdefghijklmnopqrstuvwxyz234567";

/** `<prefix>_<26 base32 chars>`: 128 random bits, never reissued. */
export class CryptoIds implements IdSource {
  newId(prefix: string): string {
    const bytes = new Uint8Array(17);
    crypto.getRandomValues(bytes);
    let bits = 0, value = 0, out = "";
    for (const b of bytes) {
      value = (value << 8) | b;
      bits += 8;
      while (bits >= 5 && out.length < 26) {
        out += B32[(value >>> (bits - 5)) & 31];
        bits -= 5;
      }
    }
    return `${prefix}_${out}`;
  }
}
