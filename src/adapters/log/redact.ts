/**
 * Redaction of secrets from text that leaves the process (log lines, the effective config).
 * It fails closed: a pattern that might be a secret is masked even when it might not be, a PEM
 * private key block without its END line is masked to the end of the text, and any failure
 * inside redaction replaces the whole value.
 */

/** What a redacted secret is replaced with. */
export const REDACTED = "***";

/** Keys whose values are secrets whatever they look like. */
const SECRET_KEY =
  /(pass(word|wd|phrase)?|pwd|secret|token|api[-_]?key|access[-_]?key|private[-_]?key|auth(orization)?|credential|cookie|session)/i;

/** True when a key (config field, query parameter, header) names a secret. */
export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}

interface Rule {
  readonly re: RegExp;
  readonly to: string | ((match: string, ...groups: string[]) => string);
}

// Order matters: whole PEM blocks first, so the base64 rule never sees half a key.
const RULES: readonly Rule[] = [
  {
    re: /-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g,
    to: "[REDACTED PRIVATE KEY]",
  },
  { re: /\b(Bearer|Basic)\s+[A-Za-z0-9\-._~+/]{8,}=*/gi, to: `$1 ${REDACTED}` },
  { re: /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]+@/gi, to: `$1${REDACTED}@` },
  { re: /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g, to: REDACTED },
  { re: /\b(gh[pousr]_|github_pat_|glpat-|xox[abpr]-)[A-Za-z0-9_-]{10,}/g, to: REDACTED },
  {
    re:
      /\b([A-Za-z0-9_.-]*(?:pass(?:word|wd|phrase)?|pwd|secret|token|api[-_]?key|access[-_]?key|private[-_]?key|credential)[A-Za-z0-9_.-]*)(\s*["']?\s*[=:]\s*)("[^"]*"|'[^']*'|[^\s&,;"'}]+)/gi,
    to: (_m, key: string, sep: string) => `${key}${sep}${REDACTED}`,
  },
  { re: /[A-Za-z0-9+/_-]{201,}={0,2}/g, to: (m) => `[REDACTED BLOB ${m.length} chars]` },
];

/** A last line of defence run on the redacted text: if any of these survive, drop the value. */
const MUST_NOT_SURVIVE = /PRIVATE KEY-----|-----BEGIN OPENSSH/;

/**
 * Masks secrets inside free text: PEM private keys, bearer/basic tokens, URL userinfo,
 * `password=`/`token:`-style pairs, JWTs, well-known token prefixes and base64 blobs over 200
 * characters. Returns `[REDACTED]` for the whole value when masking fails or leaves a key marker.
 */
export function redactText(text: string): string {
  try {
    let out = text;
    for (const rule of RULES) {
      out = typeof rule.to === "string"
        ? out.replace(rule.re, rule.to)
        : out.replace(rule.re, rule.to as (m: string, ...g: string[]) => string);
    }
    return MUST_NOT_SURVIVE.test(out) ? "[REDACTED]" : out;
  } catch {
    return "[REDACTED]";
  }
}

/**
 * Redacts a URL: userinfo becomes `***`, values of secret-named query parameters become `***`,
 * and then the text rules run. Unparseable input falls back to {@link redactText}.
 */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return redactText(url);
  }
  if (parsed.username || parsed.password) {
    parsed.username = REDACTED;
    parsed.password = "";
  }
  for (const key of [...parsed.searchParams.keys()]) {
    if (isSecretKey(key)) parsed.searchParams.set(key, REDACTED);
  }
  // URL re-encodes `*`-free text unchanged; `***` stays literal in userinfo and query values.
  return redactText(parsed.toString().replaceAll("%2A", "*"));
}
