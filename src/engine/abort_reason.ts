/**
 * The reason the engine aborts work it no longer wants with (the loser of a read-or-timeout
 * race, a watch its cache replaces, a drain's waits once one woke it). `abort()` without a reason
 * builds a new DOMException, stack trace included, on every call; a health round aborts one per
 * binding and a watch cache one per re-list, hundreds of times a simulated seed (issue 16). This
 * one instance is what the default would be (an `AbortError` DOMException with the default
 * message); a reason is only thrown on and read (its name, its message), never compared or changed.
 */
export const NOT_WANTED: DOMException = new DOMException(
  "The signal has been aborted",
  "AbortError",
);
