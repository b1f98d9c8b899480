/**
 * Reads one regular file out of an (already decompressed) tar archive, as Helm packages a chart:
 * ustar headers with an optional name prefix, PAX `x` headers carrying long paths. Bounded: the
 * walk stops at the archive's end, at a malformed header, or after `maxEntries` entries; links,
 * devices and directories are never returned. Pure.
 */

/** What {@link findTarFile} found. */
export type TarLookup =
  | { readonly kind: "found"; readonly path: string; readonly bytes: Uint8Array }
  | { readonly kind: "absent" }
  | { readonly kind: "malformed"; readonly why: string };

const BLOCK = 512;
const decoder = new TextDecoder();

function field(h: Uint8Array, start: number, length: number): string {
  const raw = h.subarray(start, start + length);
  const nul = raw.indexOf(0);
  return decoder.decode(nul === -1 ? raw : raw.subarray(0, nul));
}

function octal(h: Uint8Array, start: number, length: number): number | undefined {
  const text = field(h, start, length).trim();
  if (!/^[0-7]{1,12}$/.test(text)) return undefined;
  return parseInt(text, 8);
}

/** The `path` record of a PAX extended header, when it has one. */
function paxPath(body: Uint8Array): string | undefined {
  let at = 0;
  const text = decoder.decode(body);
  while (at < text.length) {
    const space = text.indexOf(" ", at);
    if (space === -1) return undefined;
    const len = Number(text.slice(at, space));
    if (!Number.isSafeInteger(len) || len <= 0) return undefined;
    const record = text.slice(space + 1, at + len - 1);
    if (record.startsWith("path=")) return record.slice(5);
    at += len;
  }
  return undefined;
}

/** The first regular file whose path satisfies `want`. */
export function findTarFile(
  archive: Uint8Array,
  want: (path: string) => boolean,
  maxEntries = 10_000,
): TarLookup {
  let at = 0;
  let longPath: string | undefined;
  for (let n = 0; n < maxEntries; n++) {
    if (at + BLOCK > archive.length) return { kind: "absent" };
    const h = archive.subarray(at, at + BLOCK);
    if (h.every((b) => b === 0)) return { kind: "absent" };
    const size = octal(h, 124, 12);
    if (size === undefined) return { kind: "malformed", why: `bad size field at offset ${at}` };
    const type = String.fromCharCode(h[156]!);
    const start = at + BLOCK;
    if (start + size > archive.length) {
      return { kind: "malformed", why: `entry at offset ${at} runs past the archive's end` };
    }
    const body = archive.subarray(start, start + size);
    at = start + Math.ceil(size / BLOCK) * BLOCK;
    if (type === "x") {
      longPath = paxPath(body);
      continue;
    }
    if (type === "g") continue;
    const prefix = field(h, 345, 155);
    const name = field(h, 0, 100);
    const path = longPath ?? (prefix ? `${prefix}/${name}` : name);
    longPath = undefined;
    if ((type === "0" || type === "\0") && want(path)) return { kind: "found", path, bytes: body };
  }
  return { kind: "malformed", why: `more than ${maxEntries} entries` };
}
