/**
 * What of a YAML parser's error may be shown. Parsers append an excerpt of the offending lines;
 * in a kubeconfig or talosconfig those lines are often a bearer token or a private key, so only
 * the first line (the problem and its line:column) is kept.
 */
export function yamlErrorSummary(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  const first = text.split("\n")[0]!.trim().replace(/:$/, "");
  return first.length > 200 ? `${first.slice(0, 200)}…` : first;
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
