/**
 * What of a YAML parser's error may be shown. Parsers append an excerpt of the offending lines;
 * in a kubeconfig or talosconfig those lines are often a bearer token or a private key, so only
 * the first line (the problem and its line:column) is kept.
 */
export function yamlErrorSummary(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  const first = text.split("\n")[0]!.trim().replace(/:$/, "");
  // Some first lines quote the offending text after a colon ('Unresolved alias (…): <value>',
  // 'Block scalar header includes extra characters: <value>'): a password starting with `*` or
  // `|` would be shown. Only the problem and its place are kept.
  const pos = (e as { linePos?: readonly { line: number; col: number }[] } | null)?.linePos?.[0];
  const at = / at line \d+, column \d+$/.exec(first)?.[0] ?? "";
  const problem = first.slice(0, first.length - at.length);
  const colon = problem.indexOf(": ");
  const place = at || (pos ? ` at line ${pos.line}, column ${pos.col}` : "");
  const safe = (colon >= 0 ? problem.slice(0, colon) : problem) + place;
  return safe.length > 200 ? `${safe.slice(0, 200)}…` : safe;
}

/**
 * A YAML parser's message where the problem's location is reported beside it
 * (`file:line:column: …`): its first line without the parser's own ` at line N, column M:`, cut
 * to 160 characters (a message may quote a long stretch of the file).
 */
export function yamlMessageBesideLocation(message: string): string {
  const first = (message.split("\n")[0] ?? message).replace(/ at line \d+, column \d+:?$/, "");
  return first.length > 160 ? `${first.slice(0, 159)}…` : first;
}

/**
 * True for the error the `yaml` package throws when expanding a document's aliases would pass its
 * `maxAliasCount` budget (an alias bomb): every loader reports it as a problem, never a crash.
 */
export function isAliasBudgetError(e: unknown): e is ReferenceError {
  return e instanceof ReferenceError && /alias/i.test(e.message);
}
