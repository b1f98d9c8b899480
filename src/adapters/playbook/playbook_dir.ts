/**
 * Reads a directory of playbook files (`<component>.yaml`) for the pure loader
 * (`domain/playbook/load.ts`). Only regular files directly in the directory are read, never
 * through a symbolic link; each read stops at the size cap plus one byte, so an enormous file
 * costs nothing and is refused by the loader as `PlaybookTooLarge`. Too many files is refused
 * before any is read.
 */
import { join } from "node:path";
import { CairnError, type Problem } from "../../domain/errors.ts";
import { MAX_PLAYBOOK_BYTES, parsePlaybookSet } from "../../domain/playbook/load.ts";
import type { Playbook } from "../../domain/playbook/schema.ts";

/** More files than any sensible playbook set (16 ship with cairn). */
export const MAX_PLAYBOOK_FILES = 256;

/** One file as the loader sees it: its display name and at most cap + 1 bytes. */
export interface PlaybookFileBytes {
  readonly file: string;
  readonly bytes: Uint8Array;
}

/**
 * The `*.yaml` files of `dir`, sorted by name, each named `<display>/<file>` in problems
 * (`display` defaults to `dir`). A symbolic link or a non-regular file is refused with
 * `PlaybookSetInvalid`.
 */
export async function readPlaybookDir(
  dir: string,
  display: string = dir,
): Promise<readonly PlaybookFileBytes[]> {
  const names: string[] = [];
  try {
    for await (const e of Deno.readDir(dir)) {
      if (!/\.ya?ml$/.test(e.name)) continue;
      names.push(e.name);
      if (names.length > MAX_PLAYBOOK_FILES) {
        throw refused(display, `more than ${MAX_PLAYBOOK_FILES} playbook files`);
      }
    }
  } catch (e) {
    if (e instanceof CairnError) throw e;
    throw new CairnError({
      reason: "FileUnreadable",
      message: `cannot list playbooks in ${display}: ${(e as Error).message}`,
    });
  }
  names.sort();
  const out: PlaybookFileBytes[] = [];
  for (const name of names) {
    const path = join(dir, name);
    const shown = `${display.replace(/\/$/, "")}/${name}`;
    const info = await Deno.lstat(path);
    if (!info.isFile) {
      throw refused(shown, info.isSymlink ? "is a symbolic link" : "is not a regular file");
    }
    out.push({ file: shown, bytes: await readAtMost(path, MAX_PLAYBOOK_BYTES + 1) });
  }
  return out;
}

/** Reads and validates a playbook directory; every problem is returned, located. */
export async function loadPlaybookDir(
  dir: string,
  display?: string,
): Promise<
  { readonly ok: true; readonly playbooks: readonly Playbook[] } | {
    readonly ok: false;
    readonly problems: readonly Problem[];
  }
> {
  return parsePlaybookSet(await readPlaybookDir(dir, display));
}

async function readAtMost(path: string, limit: number): Promise<Uint8Array> {
  using f = await Deno.open(path, { read: true });
  const buf = new Uint8Array(limit);
  let n = 0;
  while (n < limit) {
    const got = await f.read(buf.subarray(n));
    if (got === null) break;
    n += got;
  }
  return buf.slice(0, n);
}

function refused(file: string, why: string): CairnError {
  return new CairnError({
    reason: "PlaybookSetInvalid",
    message: `${file} ${why}`,
    location: { file, line: 1, column: 1 },
  });
}
