/**
 * The simulation's one source of randomness: a seeded generator (mulberry32, `sim/seeded_random.ts`)
 * with the draws a campaign needs. Never `Math.random`: a seed must replay the same run.
 */
import { seededRandom } from "../../sim/seeded_random.ts";

export class Prng {
  readonly #next: () => number;

  constructor(seed: number) {
    this.#next = seededRandom(seed);
  }

  /** A float in [0, 1). */
  float(): number {
    return this.#next();
  }

  /** An integer in [lo, hi] (both inclusive). */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.#next() * (hi - lo + 1));
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.#next() < p;
  }

  pick<T>(xs: readonly T[]): T {
    if (xs.length === 0) throw new RangeError("pick from an empty list");
    return xs[Math.floor(this.#next() * xs.length)]!;
  }

  /** A shuffled copy (Fisher–Yates). */
  shuffle<T>(xs: readonly T[]): T[] {
    const out = [...xs];
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(this.#next() * (i + 1));
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  }

  /** A new generator derived from this one (independent streams for sub-draws). */
  fork(): Prng {
    return new Prng(Math.floor(this.#next() * 4294967296));
  }
}
