/**
 * Which repository locations an evidence manifest may name. A `repo` value reaches git's
 * command line, so anything git could read as an option (`--upload-pack=…`), a remote-helper
 * transport (`ext::sh -c …`, `fd::3`), or a host that ssh could read as an option
 * (`ssh://-oProxyCommand=…`) would run a command on the host that checks the manifest. Only the
 * forms a user needs to pin public upstream files are accepted:
 *
 * - `https://host[:port]/path`, `ssh://[user@]host[:port]/path`, `git://host[:port]/path`;
 * - `file:///absolute/path` (local upstreams in tests and air-gapped mirrors);
 * - scp-like `user@host:path` (how hosting sites print ssh clone URLs).
 *
 * Plain `http://` is refused (nothing needs it), and so are embedded passwords: a manifest is a
 * committed file, and a token in it would be a leaked secret. Non-ASCII text is refused too: a
 * look-alike host or a bidi control in the path would show a reviewer another location.
 */

/** Why a `repo` value was refused; `undefined` from {@link repoUrlProblem} means accepted. */
export type RepoUrlProblem = string;

const MAX_URL = 2048;
const HOST =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*$/;
const IPV6 = /^\[[0-9A-Fa-f:.]+\]$/;
const USER = /^[A-Za-z0-9._][A-Za-z0-9._-]*$/;
/** Path characters of a URL or scp-like path: no spaces, quotes, backslashes or shell metas. */
const PATH = /^[A-Za-z0-9._~/%+@=,-]*$/;
const SCP_LIKE = /^([^@/:]+)@([^/:]+):(.+)$/;
const SCHEMES = ["https", "ssh", "git", "file"] as const;

/**
 * Returns why `repo` is not an acceptable evidence repository location, or `undefined` when it
 * is one of the forms listed above.
 *
 * @example
 * ```ts
 * import { repoUrlProblem } from "./repo_url.ts";
 * repoUrlProblem("https://github.com/siderolabs/talos.git"); // undefined
 * repoUrlProblem("--upload-pack=touch /tmp/x"); // "starts with '-', which git reads as an option"
 * ```
 */
export function repoUrlProblem(repo: string): RepoUrlProblem | undefined {
  if (repo.length === 0) return "is empty";
  if (repo.length > MAX_URL) return `is longer than ${MAX_URL} characters`;
  if (repo.startsWith("-")) return "starts with '-', which git reads as an option";
  // deno-lint-ignore no-control-regex
  if (/[\x00-\x1f\x7f]/.test(repo)) return "contains a control character";
  if (/\s/.test(repo)) return "contains whitespace";
  // A non-ASCII host (a Cyrillic letter passing for a Latin one) or path (a bidi override) reads
  // as another location than the one git fetches; punycode and percent-encoding stay visible.
  if (/\P{ASCII}/u.test(repo)) {
    return "contains a non-ASCII character; write a host in punycode and a path percent-encoded";
  }
  // git's own rule: `<alphanumerics>::` at the start selects the remote helper git-remote-<it>.
  if (/^[A-Za-z0-9][A-Za-z0-9+.-]*::/.test(repo)) {
    return "names a git remote helper ('<transport>::<address>', e.g. ext::), which runs programs";
  }
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(repo)?.[1]?.toLowerCase();
  if (scheme === undefined) return scpLikeProblem(repo);
  if (!(SCHEMES as readonly string[]).includes(scheme)) {
    return `uses scheme ${scheme}://; only ${SCHEMES.map((s) => `${s}://`).join(", ")} ` +
      "and scp-like user@host:path are accepted";
  }
  return urlProblem(scheme as (typeof SCHEMES)[number], repo);
}

function urlProblem(scheme: (typeof SCHEMES)[number], repo: string): string | undefined {
  let url: URL;
  try {
    url = new URL(repo);
  } catch {
    return "is not a well-formed URL";
  }
  if (url.password !== "") return "embeds a password; use a credential helper instead";
  if (url.search !== "" || url.hash !== "") return "has a query or fragment";
  if (!PATH.test(url.pathname)) return "has characters outside a plain repository path";
  if (scheme === "file") {
    if (url.host !== "") return "file:// URLs must name a local path (file:///path)";
    if (url.username !== "") return "file:// URLs carry no user";
    return url.pathname.length > 1 ? undefined : "names no repository path";
  }
  const host = url.hostname;
  if (host === "") return "names no host";
  if (host.startsWith("-")) return "has a host starting with '-', which ssh reads as an option";
  if (!HOST.test(host) && !IPV6.test(host)) return "has a malformed host name";
  if (url.username !== "") {
    if (scheme !== "ssh") return `${scheme}:// URLs carry no user name here`;
    if (!USER.test(url.username)) return "has a malformed user name";
  }
  return url.pathname.length > 1 ? undefined : "names no repository path";
}

function scpLikeProblem(repo: string): string | undefined {
  const m = SCP_LIKE.exec(repo);
  if (!m) {
    return "is not a URL (https://, ssh://, git://, file://) or scp-like user@host:path";
  }
  const [, user = "", host = "", path = ""] = m;
  if (!USER.test(user)) return "has a malformed user name";
  if (!HOST.test(host)) return "has a malformed host name";
  if (path.startsWith("-")) return "has a path starting with '-'";
  if (!PATH.test(path)) return "has characters outside a plain repository path";
  return undefined;
}
