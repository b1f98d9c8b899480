/**
 * Reads the files a plan binds (catalogue, health policy, evidence manifest) from the working
 * tree, so that a plan — written by anyone who can open a pull request — cannot make cairn read
 * something outside its repository:
 *
 * - the path must pass `boundPathProblem` (relative, no `..`, no control characters);
 * - it is looked up from the plan's directory upwards, as a repository-relative path, but never
 *   above the repository root (the git top level, found by its `.git` entry);
 * - every component on the way is checked with `lstat`: a symlink anywhere is refused, never
 *   followed (a symlink to `/etc/shadow` or `/dev/zero` is not "the repository's file");
 * - the file must be a regular file no larger than the cap, checked BEFORE reading; the read
 *   itself stops at cap + 1 bytes and re-checks that the opened file is the one examined.
 *
 * Outcomes are values (`BoundFileRead`); only programming errors throw.
 */
import { basename, dirname, isAbsolute, join, relativeFrom, sep } from "../../domain/posix_path.ts";
import { boundPathProblem } from "../../domain/plan/bound_path.ts";
import { CairnError } from "../../domain/errors.ts";
import type { Reason } from "../../domain/reasons.ts";
import type { BoundFileRead, BoundFileSource } from "../../ports/dispatch.ts";

/** Largest bound file read (catalogue, policy, manifest are a few KiB; 1 MiB is ample). */
export const MAX_BOUND_FILE_BYTES = 1024 * 1024;

/** How to read bound files. */
export interface BoundFileReaderOptions {
  /** Repository root; default: found from the plan's directory (see {@link findRepositoryRoot}). */
  readonly root?: string;
  /** The command's working directory: the root outside git when it holds the plan. */
  readonly cwd?: string;
  /** Size cap in bytes (default {@link MAX_BOUND_FILE_BYTES}). */
  readonly maxBytes?: number;
}

/**
 * The repository root of a plan: the nearest ancestor of `planDir` (itself included) holding a
 * `.git` entry (a directory, or the file of a worktree). Outside any git repository (an export,
 * a tarball), the working directory `cwd` when it holds the plan; otherwise the plan's
 * directory — or its parent when the plan sits in `plans/`, the layout cairn documents.
 */
export async function findRepositoryRoot(planDir: string, cwd?: string): Promise<string> {
  for (let dir = planDir;; dir = dirname(dir)) {
    if (await lstatOrUndefined(join(dir, ".git"))) return dir;
    if (dirname(dir) === dir) break;
  }
  if (cwd !== undefined && isWithin(cwd, planDir)) return cwd;
  return basename(planDir) === "plans" ? dirname(planDir) : planDir;
}

function isWithin(root: string, path: string): boolean {
  const rel = relativeFrom(Deno.cwd(), root, path);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

/**
 * Reads bound path `rel` for the plan at `planPath` (absolute): the first of `<dir>/<rel>` for
 * `dir` = the plan's directory, its parent, … up to the repository root, that exists.
 */
export async function readBoundFile(
  planPath: string,
  rel: string,
  opts: BoundFileReaderOptions = {},
): Promise<BoundFileRead> {
  const why = boundPathProblem(rel);
  if (why) return refused("BoundPathInvalid", `the path ${why}`);
  const planDir = dirname(planPath);
  const root = opts.root ?? await findRepositoryRoot(planDir, opts.cwd);
  if (!isWithin(root, planDir)) {
    return refused("BoundPathInvalid", "the plan file is outside the repository root");
  }
  const fromRoot = relativeFrom(Deno.cwd(), root, planDir);
  const maxBytes = opts.maxBytes ?? MAX_BOUND_FILE_BYTES;
  const up = fromRoot === "" ? [] : fromRoot.split(sep);
  for (let depth = up.length; depth >= 0; depth--) {
    const found = await walk(root, [...up.slice(0, depth), ...rel.split("/")]);
    if (found.kind === "absent") continue;
    if (found.kind === "refused") return found.read;
    return await readRegular(found.path, found.info, maxBytes);
  }
  return { status: "missing", detail: `no ${rel} in the repository (searched up to its root)` };
}

/** A {@link BoundFileSource} over the working tree of the plan at `planPath`. */
export function workingTreeBoundFiles(
  planPath: string,
  opts: BoundFileReaderOptions = {},
): BoundFileSource {
  return {
    describe: () => `working tree ${opts.root ?? dirname(planPath)}`,
    read: (path) => readBoundFile(planPath, path, opts),
  };
}

/**
 * Reads a file named directly (a plan file on the command line) the same careful way: the file
 * itself must not be a symlink and must be a regular file of at most `maxBytes`, decided before
 * reading (a plan committed as a link to `/dev/zero` must not exhaust memory in CI).
 */
export async function readPlainFile(path: string, maxBytes: number): Promise<BoundFileRead> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.lstat(path);
  } catch (e) {
    return { status: "missing", detail: e instanceof Error ? e.message : "unreadable" };
  }
  if (info.isSymlink) return refused("BoundPathSymlink", "it is a symbolic link");
  if (!info.isFile) return refused("BoundFileNotRegular", `it is ${kindOf(info)}`);
  return await readRegular(path, info, maxBytes);
}

type Walk =
  | { readonly kind: "absent" }
  | { readonly kind: "refused"; readonly read: BoundFileRead }
  | { readonly kind: "file"; readonly path: string; readonly info: Deno.FileInfo };

/**
 * Descends from `root` one component at a time with `lstat`, so nothing on the way is followed:
 * a symlink is refused wherever it is; a missing component means "not here, try higher up".
 */
async function walk(root: string, components: readonly string[]): Promise<Walk> {
  let path = root;
  for (const [i, name] of components.entries()) {
    path = join(path, name);
    const info = await lstatOrUndefined(path);
    if (!info) return { kind: "absent" };
    const shown = components.slice(0, i + 1).join("/");
    if (info.isSymlink) {
      return {
        kind: "refused",
        read: refused("BoundPathSymlink", `${shown} is a symbolic link; links are not followed`),
      };
    }
    const last = i === components.length - 1;
    if (!last && !info.isDirectory) return { kind: "absent" };
    if (last) {
      if (!info.isFile) {
        return {
          kind: "refused",
          read: refused("BoundFileNotRegular", `${shown} is ${kindOf(info)}, not a regular file`),
        };
      }
      return { kind: "file", path, info };
    }
  }
  return { kind: "absent" };
}

/**
 * Reads a regular file of at most `maxBytes`: the size is checked before opening, the opened
 * file must be the one examined (same device and inode, still regular: no swap in between),
 * and the read stops at `maxBytes + 1` whatever the file claims.
 */
async function readRegular(
  path: string,
  seen: Deno.FileInfo,
  maxBytes: number,
): Promise<BoundFileRead> {
  if (seen.size > maxBytes) {
    return refused("BoundFileTooLarge", `it is ${seen.size} bytes, over the cap of ${maxBytes}`);
  }
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true });
  } catch (e) {
    return { status: "missing", detail: e instanceof Error ? e.name : "unreadable" };
  }
  try {
    const opened = await file.stat();
    if (!opened.isFile || opened.ino !== seen.ino || opened.dev !== seen.dev) {
      return refused("BoundFileNotRegular", "the file changed while it was being opened");
    }
    const buffer = new Uint8Array(maxBytes + 1);
    let total = 0;
    while (total < buffer.length) {
      const n = await file.read(buffer.subarray(total));
      if (n === null) break;
      total += n;
    }
    if (total > maxBytes) {
      return refused("BoundFileTooLarge", `it holds more than the cap of ${maxBytes} bytes`);
    }
    return { status: "read", bytes: buffer.slice(0, total) };
  } catch (e) {
    return { status: "missing", detail: e instanceof Error ? e.name : "unreadable" };
  } finally {
    file.close();
  }
}

function kindOf(info: Deno.FileInfo): string {
  if (info.isDirectory) return "a directory";
  if (info.isFifo) return "a FIFO";
  if (info.isCharDevice) return "a character device";
  if (info.isBlockDevice) return "a block device";
  if (info.isSocket) return "a socket";
  return "not a regular file";
}

function refused(reason: Reason, detail: string): BoundFileRead {
  return { status: "refused", reason, detail };
}

async function lstatOrUndefined(path: string): Promise<Deno.FileInfo | undefined> {
  try {
    return await Deno.lstat(path);
  } catch {
    return undefined;
  }
}

/**
 * A plan or its signature file named on the command line, read through {@link readPlainFile}
 * (never through a link, never a device or FIFO, capped before reading) for every command that
 * verifies, signs or runs it — not only `plan check`: a `.sig` or plan committed as a link to
 * `/dev/zero` must not exhaust memory in `plan verify`, `apply` or `rehearse` either. Missing is
 * `undefined` when `optional`; anything else refused throws FileUnreadable (PlanTooLarge for an
 * oversized plan) naming the file and why.
 */
export async function readNamedFile(
  path: string,
  opts: { readonly what: "plan" | "signatures"; readonly maxBytes: number; optional: true },
): Promise<Uint8Array | undefined>;
export async function readNamedFile(
  path: string,
  opts: { readonly what: "plan" | "signatures"; readonly maxBytes: number; optional?: false },
): Promise<Uint8Array>;
export async function readNamedFile(
  path: string,
  opts: { readonly what: "plan" | "signatures"; readonly maxBytes: number; optional?: boolean },
): Promise<Uint8Array | undefined> {
  const read = await readPlainFile(path, opts.maxBytes);
  if (read.status === "read") return read.bytes;
  if (read.status === "missing" && opts.optional) return undefined;
  const tooLarge = read.status === "refused" && read.reason === "BoundFileTooLarge";
  throw new CairnError({
    reason: tooLarge && opts.what === "plan" ? "PlanTooLarge" : "FileUnreadable",
    message: `cannot read ${opts.what === "plan" ? "plan file" : "signature file"} ${path}: ` +
      read.detail,
  });
}

/**
 * An operator's file that may legitimately be a link (the trust root mounted from a Kubernetes
 * Secret is a chain of symlinks): followed, but it must end at a regular file of at most
 * `maxBytes`, checked before reading, so a trust root pointed at `/dev/zero` or a FIFO is refused
 * instead of exhausting memory or hanging. Throws FileUnreadable naming the path and why.
 */
export async function readCappedFile(path: string, maxBytes: number): Promise<Uint8Array> {
  let read: BoundFileRead;
  try {
    const info = await Deno.stat(path);
    read = info.isFile
      ? await readRegular(path, info, maxBytes)
      : refused("BoundFileNotRegular", `it is ${kindOf(info)}, not a regular file`);
  } catch (e) {
    read = { status: "missing", detail: e instanceof Error ? e.message : "unreadable" };
  }
  if (read.status === "read") return read.bytes;
  throw new CairnError({
    reason: "FileUnreadable",
    message: `cannot read ${path}: ${read.detail}`,
  });
}
