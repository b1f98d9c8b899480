/**
 * Journal locations as the CLI and config give them: which store a URL names, and how it is
 * named in messages, logs and reports (a PostgreSQL URL's password, or a secret query parameter,
 * never leaves the process: messages, logs, command output). Pure: no store is loaded here.
 */

/** True for `postgres://…` and `postgresql://…`. */
export function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location);
}

const SECRET_PARAM = /(pass(word)?|secret|token|key|auth)/i;

/**
 * The location with any password removed (`postgres://user@host/db`) and secret-looking query
 * values masked; a location that does not parse as a URL is returned only up to its first `@`
 * when it has one, so an unparseable URL with credentials is never echoed whole.
 */
export function describeJournalUrl(location: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(location)) return location;
  let u: URL;
  try {
    u = new URL(location);
  } catch {
    const at = location.lastIndexOf("@");
    return at < 0
      ? location
      : `${location.slice(0, location.indexOf("//") + 2)}***@${location.slice(at + 1)}`;
  }
  if (u.password) u.password = "";
  for (const k of [...u.searchParams.keys()]) {
    if (SECRET_PARAM.test(k)) u.searchParams.set(k, "***");
  }
  return u.toString().replaceAll("%2A", "*");
}
