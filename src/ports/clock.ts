/**
 * Time, as the core sees it. Production uses the system clock; tests, `cairn rehearse` and the
 * twin use a virtual clock, so a three-hour rollout runs in milliseconds and deterministically.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch (UTC). */
  now(): number;
  /** Resolves after `ms` of this clock's time; rejects with the signal's reason when aborted. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** Random numbers in [0, 1). Seeded in tests. */
export interface Random {
  next(): number;
}

/** Fresh identifiers (`<prefix>_<26 base32 chars>`). Counter-based in tests. */
export interface IdSource {
  newId(prefix: string): string;
}
