/**
 * "Did you mean" for mistyped command and flag names: the closest known name by edit distance,
 * offered only when it is close enough to be the likely intent (a wild guess misleads more than
 * no suggestion does).
 */

/**
 * Edit distance between two short strings (names, not documents), counting a swap of two
 * adjacent letters as one edit: `plna` is one slip from `plan`, not two.
 */
export function editDistance(a: string, b: string): number {
  const d: number[][] = [];
  for (let i = 0; i <= a.length; i++) d.push([i]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        v = Math.min(v, d[i - 2]![j - 2]! + 1);
      }
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/** The known name nearest `typed`, if within a third of its length (at least 1, at most 3). */
export function suggest(typed: string, known: readonly string[]): string | undefined {
  const limit = Math.min(3, Math.max(1, Math.floor(typed.length / 3)));
  let best: { name: string; d: number } | undefined;
  for (const name of known) {
    const d = editDistance(typed, name);
    if (d <= limit && (!best || d < best.d)) best = { name, d };
  }
  return best?.name;
}
