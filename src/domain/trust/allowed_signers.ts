/**
 * allowed_signers in git's / ssh-keygen's format (`ssh-keygen(1)` ALLOWED SIGNERS):
 * `principals [options] keytype base64-key [comment]`.
 *
 * Differences from OpenSSH, on purpose:
 * - ssh-keygen logs a malformed line and skips it, which silently drops a signer (or an option
 *   that restricted one). cairn refuses the whole file with `AllowedSignersInvalid` and
 *   `file:line:column`.
 * - `cert-authority` is refused with `CertificateAuthorityUnsupported`: cairn does not verify
 *   OpenSSH certificates.
 * - `valid-after` / `valid-before` without a trailing `Z` are local time in ssh-keygen. cairn is
 *   pure and has no time zone, so it reads them as UTC. Write times with `Z` so both agree.
 */
import { CairnError } from "../errors.ts";
import type { Reason } from "../reasons.ts";
import { isKnownKeyType, keysEqual, parsePublicKeyBlob, type SshPublicKey } from "./ssh_key.ts";
import { decodeBase64, SshWireError } from "./ssh_wire.ts";

/** One line of an allowed_signers file. */
export interface AllowedSigner {
  readonly file: string;
  readonly line: number;
  /** Principal pattern-list entries as written (may hold `*`, `?`, `!negation`). */
  readonly principals: readonly string[];
  /** `namespaces="…"` pattern list, when present. */
  readonly namespaces?: string;
  /** Epoch seconds (UTC); the key is not valid before this instant. */
  readonly validAfter?: number;
  /** Epoch seconds (UTC); the key is not valid after this instant. */
  readonly validBefore?: number;
  readonly key: SshPublicKey;
}

/** A parsed allowed_signers file. */
export interface AllowedSigners {
  readonly file: string;
  readonly entries: readonly AllowedSigner[];
}

/**
 * What a trust root is called in anything that leaves the machine (reports committed to Git):
 * its content, never its host path — `the configured trust root (allowed_signers, 3 principals,
 * sha256 1a2b…)`. `sha256` is the hex digest of the file's bytes.
 */
export function trustRootLabel(signers: AllowedSigners, sha256: string): string {
  const principals = new Set(signers.entries.flatMap((e) => e.principals)).size;
  const noun = principals === 1 ? "principal" : "principals";
  return `the configured trust root (allowed_signers, ${principals} ${noun}, sha256 ${
    sha256.slice(0, 16)
  }…)`;
}

/** The same signers named by `label` instead of the file they were read from. */
export function relabelSigners(signers: AllowedSigners, label: string): AllowedSigners {
  return { file: label, entries: signers.entries.map((e) => ({ ...e, file: label })) };
}

/** Result of looking a signing key up in allowed_signers. */
export type SignerLookup =
  | { readonly ok: true; readonly entry: AllowedSigner }
  | {
    readonly ok: false;
    readonly reason: Extract<Reason, "SignerNotTrusted" | "SignerOutsideValidity">;
    readonly message: string;
  };

class LineError extends Error {
  constructor(readonly column: number, message: string, readonly reason: Reason) {
    super(message);
  }
}

function fail(column: number, message: string): never {
  throw new LineError(column, message, "AllowedSignersInvalid");
}

/** Parses an allowed_signers file; throws CairnError naming file, line and column. */
export function parseAllowedSigners(text: string, file: string): AllowedSigners {
  const entries: AllowedSigner[] = [];
  text.split("\n").forEach((raw, i) => {
    const line = raw.replace(/\r$/, "");
    try {
      const entry = parseLine(line, file, i + 1);
      if (entry) entries.push(entry);
    } catch (e) {
      if (!(e instanceof LineError)) throw e;
      throw new CairnError({
        reason: e.reason,
        message: e.message,
        location: { file, line: i + 1, column: e.column },
      });
    }
  });
  return { file, entries };
}

/** A cursor over one line that knows its 1-based column. */
class Cursor {
  pos = 0;
  constructor(readonly s: string) {}
  get col(): number {
    return this.pos + 1;
  }
  get done(): boolean {
    return this.pos >= this.s.length;
  }
  skipSpace(): void {
    while (this.s[this.pos] === " " || this.s[this.pos] === "\t") this.pos++;
  }
  /** A word up to whitespace; double-quoted spans may contain whitespace. */
  word(): string {
    const start = this.pos;
    let quoted = false;
    while (!this.done && (quoted || !/[ \t]/.test(this.s[this.pos]!))) {
      if (this.s[this.pos] === '"') quoted = !quoted;
      this.pos++;
    }
    if (quoted) fail(start + 1, "unterminated double quote");
    return this.s.slice(start, this.pos);
  }
}

function parseLine(line: string, file: string, lineNo: number): AllowedSigner | undefined {
  const c = new Cursor(line);
  c.skipSpace();
  if (c.done || line[c.pos] === "#") return undefined;
  const principalsCol = c.col;
  const principals = parsePrincipals(c.word(), principalsCol);
  c.skipSpace();
  if (c.done) fail(c.col, "missing key after principals");
  const optCol = c.col;
  let word = c.word();
  let options: Options = {};
  if (!isKnownKeyType(word)) {
    options = parseOptions(word, optCol);
    c.skipSpace();
    if (c.done) fail(c.col, "missing key type after options");
    const typeCol = c.col;
    word = c.word();
    if (!isKnownKeyType(word)) fail(typeCol, `unknown key type '${word}'`);
  }
  const key = parseKey(word, c);
  return { file, line: lineNo, principals, ...options, key };
}

function parsePrincipals(token: string, col: number): string[] {
  const unquoted = token.startsWith('"') && token.endsWith('"') && token.length >= 2
    ? token.slice(1, -1)
    : token;
  if (unquoted.includes('"')) fail(col, "stray double quote in principals");
  const list = unquoted.split(",");
  list.forEach((p, i) => {
    if (p === "" || p === "!") fail(col, `principal entry ${i + 1} is empty`);
  });
  return list;
}

function parseKey(type: string, c: Cursor): SshPublicKey {
  c.skipSpace();
  const col = c.col;
  const b64 = c.word();
  if (b64 === "") fail(col, `missing base64 key after '${type}'`);
  let key: SshPublicKey;
  try {
    key = parsePublicKeyBlob(decodeBase64(b64));
  } catch (e) {
    if (e instanceof SshWireError) fail(col, `invalid key: ${e.message}`);
    throw e;
  }
  if (key.type !== type) fail(col, `key blob is '${key.type}' but the line says '${type}'`);
  return key;
}

interface Options {
  namespaces?: string;
  validAfter?: number;
  validBefore?: number;
}

const OPTION_NAMES = ["cert-authority", "namespaces", "valid-after", "valid-before"] as const;

function parseOptions(token: string, col: number): Options {
  const out: Options = {};
  let i = 0;
  while (true) {
    const at = col + i;
    const name = OPTION_NAMES.find((n) => token.slice(i, i + n.length).toLowerCase() === n);
    if (!name) fail(at, `unknown option '${token.slice(i).split(/[=,]/)[0]}'`);
    i += name.length;
    if (name === "cert-authority") {
      throw new LineError(
        at,
        "cert-authority is not supported: list each signer's own public key",
        "CertificateAuthorityUnsupported",
      );
    }
    if (token[i] !== "=" || token[i + 1] !== '"') fail(col + i, `${name} needs ="value"`);
    const close = token.indexOf('"', i + 2);
    if (close < 0) fail(col + i, `${name} value has no closing quote`);
    const value = token.slice(i + 2, close);
    setOption(out, name, value, at);
    i = close + 1;
    if (i === token.length) break;
    if (token[i] !== ",") fail(col + i, "options must be separated by commas");
    i++;
    if (i === token.length) fail(col + i, "unexpected end of options");
  }
  if (
    out.validAfter !== undefined && out.validBefore !== undefined &&
    out.validBefore <= out.validAfter
  ) {
    fail(col, "valid-before is not after valid-after");
  }
  return out;
}

function setOption(out: Options, name: string, value: string, at: number): void {
  if (name === "namespaces") {
    if (out.namespaces !== undefined) fail(at, "namespaces given twice");
    if (value === "") fail(at, "namespaces is empty");
    out.namespaces = value;
    return;
  }
  const field = name === "valid-after" ? "validAfter" : "validBefore";
  if (out[field] !== undefined) fail(at, `${name} given twice`);
  const t = parseSshTime(value);
  if (t === undefined) {
    fail(at, `${name} '${value}' is not YYYYMMDD[Z], YYYYMMDDHHMM[Z] or YYYYMMDDHHMMSS[Z]`);
  }
  out[field] = t;
}

/**
 * Parses an OpenSSH absolute time (`YYYYMMDD`, `YYYYMMDDHHMM`, `YYYYMMDDHHMMSS`, optional `Z`)
 * to epoch seconds. Without `Z` ssh-keygen uses local time; cairn reads it as UTC.
 */
export function parseSshTime(text: string): number | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})(?:(\d{2})(\d{2})(\d{2})?)?[Zz]?$/.exec(text);
  if (!m) return undefined;
  const [y, mo, d, h, mi, s] = m.slice(1).map((v) => (v === undefined ? 0 : Number(v))) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const ms = Date.UTC(y, mo - 1, d, h, mi, s);
  const back = new Date(ms);
  const same = back.getUTCFullYear() === y && back.getUTCMonth() === mo - 1 &&
    back.getUTCDate() === d && back.getUTCHours() === h && back.getUTCMinutes() === mi &&
    back.getUTCSeconds() === s;
  if (!same || ms <= 0) return undefined;
  return ms / 1000;
}

/** `ssh_config(5)` pattern: `*` any run of characters, `?` exactly one; case-sensitive. */
export function matchPattern(name: string, pattern: string): boolean {
  let n = 0, p = 0, star = -1, mark = 0;
  while (n < name.length) {
    if (p < pattern.length && (pattern[p] === "?" || pattern[p] === name[n])) {
      n++;
      p++;
    } else if (p < pattern.length && pattern[p] === "*") {
      star = p++;
      mark = n;
    } else if (star >= 0) {
      p = star + 1;
      n = ++mark;
    } else return false;
  }
  while (pattern[p] === "*") p++;
  return p === pattern.length;
}

/**
 * OpenSSH `match_pattern_list`: true when some positive entry matches and no negated entry
 * (`!pattern`) does.
 */
export function matchPatternList(name: string, list: readonly string[] | string): boolean {
  const entries = typeof list === "string" ? list.split(",") : list;
  let positive = false;
  for (const e of entries) {
    if (e.startsWith("!")) {
      if (matchPattern(name, e.slice(1))) return false;
    } else if (matchPattern(name, e)) positive = true;
  }
  return positive;
}

/**
 * Finds the allowed_signers line that accepts `key` for `namespace` at `atMs`, in ssh-keygen's
 * order (principal filter, exact key, namespaces, valid-after, valid-before; first line wins).
 * With `principal`, only lines whose pattern list matches it are considered (`-Y verify -I`).
 */
export function findAllowedSigner(
  signers: AllowedSigners,
  opts: { key: SshPublicKey; namespace: string; atMs: number; principal?: string },
): SignerLookup {
  const now = Math.floor(opts.atMs / 1000);
  let outside: string | undefined;
  let nsRefused: string | undefined;
  for (const e of signers.entries) {
    if (opts.principal !== undefined && !matchPatternList(opts.principal, e.principals)) continue;
    if (!keysEqual(e.key, opts.key)) continue;
    const where = `${e.file}:${e.line}`;
    if (e.namespaces !== undefined && !matchPatternList(opts.namespace, e.namespaces)) {
      nsRefused ??= `${where} does not allow namespace '${opts.namespace}'`;
    } else if (e.validAfter !== undefined && now < e.validAfter) {
      outside ??= `${where} is not valid until ${isoSeconds(e.validAfter)}`;
    } else if (e.validBefore !== undefined && now > e.validBefore) {
      outside ??= `${where} expired at ${isoSeconds(e.validBefore)}`;
    } else return { ok: true, entry: e };
  }
  if (outside) return { ok: false, reason: "SignerOutsideValidity", message: outside };
  if (nsRefused) return { ok: false, reason: "SignerNotTrusted", message: nsRefused };
  const whom = opts.principal === undefined ? "" : ` for principal '${opts.principal}'`;
  return {
    ok: false,
    reason: "SignerNotTrusted",
    message: `the signing key is not listed in ${signers.file}${whom}`,
  };
}

function isoSeconds(s: number): string {
  return new Date(s * 1000).toISOString().replace(".000Z", "Z");
}
