/** Parsing of `WWW-Authenticate` challenges (RFC 7235 auth-params), for registry token auth. */

/** One challenge: its scheme (lower-cased) and parameters (keys lower-cased). */
export interface AuthChallenge {
  readonly scheme: string;
  readonly params: Readonly<Record<string, string>>;
}

/**
 * Parses a challenge such as `Bearer realm="https://auth/token",service="reg",scope="repository:a:pull"`.
 * Quoted values may contain commas and escaped quotes. Returns undefined for an empty header.
 *
 * @example
 * ```ts
 * import { parseWwwAuthenticate } from "./www_authenticate.ts";
 * parseWwwAuthenticate('Bearer realm="https://a/t",service="r"')?.params.service; // "r"
 * ```
 */
export function parseWwwAuthenticate(header: string): AuthChallenge | undefined {
  const m = /^\s*([A-Za-z][\w!#$%&'*+.^`|~-]*)\s*/.exec(header);
  if (!m) return undefined;
  const params: Record<string, string> = {};
  let i = m[0].length;
  while (i < header.length) {
    const key = /^\s*,?\s*([\w!#$%&'*+.^`|~-]+)\s*=\s*/.exec(header.slice(i));
    if (!key) break;
    i += key[0].length;
    let value = "";
    if (header[i] === '"') {
      i++;
      while (i < header.length && header[i] !== '"') {
        if (header[i] === "\\") i++;
        value += header[i] ?? "";
        i++;
      }
      i++;
    } else {
      const bare = /^[^,\s]*/.exec(header.slice(i))![0];
      value = bare;
      i += bare.length;
    }
    params[key[1]!.toLowerCase()] = value;
  }
  return { scheme: m[1]!.toLowerCase(), params };
}
