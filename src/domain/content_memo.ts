/**
 * Memoizes a pure parse by the content it parses. The dispatch check re-reads the files a plan
 * binds before every step (a changed file must stop the rollout) and used to parse the same bytes
 * again each time: a tenth of a simulated seed's CPU (docs/dst.md, Budgets and speed). The key
 * names the bytes by their SHA-256 and whatever else the result depends on (the path problems
 * name), so a hit is the result the parse would give; a changed file is a new key. Bounded: the
 * oldest entry goes first.
 */
export class ContentMemo<T> {
  readonly #entries = new Map<string, T>();

  constructor(private readonly max = 32) {}

  /** The result for `key`, made by `make` once. */
  get(key: string, make: () => T): T {
    if (this.#entries.has(key)) return this.#entries.get(key)!;
    const value = make();
    this.#entries.set(key, value);
    if (this.#entries.size > this.max) this.#entries.delete(this.#entries.keys().next().value!);
    return value;
  }
}
