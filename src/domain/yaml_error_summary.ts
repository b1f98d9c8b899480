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
