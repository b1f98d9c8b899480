/**
 * Fetches one pinned file at an exact commit with real git, and keeps the evidence cache
 * (`<cache>/<repo-slug>/<revision>/<path>`).
 *
 * The repository URL comes from a manifest someone else may have written, so git is never
 * given a chance to read it as anything but an operand: every URL, refspec and revision follows
 * `--` or `--end-of-options`, only the https, ssh, git and file transports are allowed whatever
 * the caller's git configuration says (`GIT_ALLOW_PROTOCOL`; no `ext::` remote helpers), and
 * every git call has a deadline after which its whole process group is killed (a silent server
 * must not hang `evidence check --fetch`).
 */
import { join } from "node:path";
import { CairnError } from "../../domain/errors.ts";
import { sha256Hex } from "../../domain/plan/digest.ts";
import { parseProvenance, type SourceProvenance } from "../../domain/evidence/provenance.ts";

/** One pinned file to fetch. */
export interface PinnedFile {
  readonly repo: string;
  readonly revision: string;
  readonly path: string;
}

/** Options for git: extra environment (e.g. `GIT_CONFIG_*` url rewrites) and a scratch dir. */
export interface GitFetchOptions {
  readonly env?: Readonly<Record<string, string>>;
  readonly tempDir?: string;
  /** Longest any one git call may run, in ms (default {@link DEFAULT_GIT_CALL_TIMEOUT_MS}). */
  readonly callTimeoutMs?: number;
  /**
   * Wall-clock instant (epoch ms) by which the whole fetch must be over: a call gets at most
   * the time left, and none starts after it. Shared by every file of one `--fetch`.
   */
  readonly deadlineMs?: number;
}

/** Default deadline of one git call of an evidence fetch. */
export const DEFAULT_GIT_CALL_TIMEOUT_MS = 60_000;

/**
 * The transports an evidence fetch may use. Set last in git's environment so neither the
 * caller's environment nor any git configuration can enable `ext::`, `fd::` or other helpers.
 */
const ALLOWED_PROTOCOLS = "https:ssh:git:file";
const COMMIT_ID = /^[0-9a-f]{40}$/;

/** The fetched bytes, their SHA-256, and where git actually fetched them from. */
export interface FetchedFile {
  readonly bytes: Uint8Array;
  readonly sha256: string;
  /** The URL after git's `insteadOf` rewrites (`git ls-remote --get-url`). */
  readonly fetchedFrom: string;
}

/** A filesystem-safe directory name for a repository URL. */
export function repoSlug(repo: string): string {
  return repo.replace(/^[a-z][a-z0-9+.-]*:\/\//i, "").replace(/[^A-Za-z0-9._-]+/g, "_")
    .replace(/^[._]+/, "");
}

/** Where a pinned file lives in the cache. */
export function cachePath(cacheDir: string, f: PinnedFile): string {
  return join(cacheDir, repoSlug(f.repo), f.revision, ...f.path.split("/"));
}

/** Largest cache entry read (a pinned source file; upstream files are far smaller). */
export const MAX_CACHED_BYTES = 8 * 1024 * 1024;

/**
 * Reads a cache entry, or undefined when there is none. The cache may sit inside a checkout
 * someone else wrote (`.cache/evidence` of a pull request): a link anywhere below the cache
 * directory, a non-regular entry or one over {@link MAX_CACHED_BYTES} is refused
 * (`EvidenceCacheUnsafe`), never followed or read.
 */
export async function readCached(cacheDir: string, f: PinnedFile): Promise<Uint8Array | undefined> {
  const entry = await cacheEntry(cacheDir, cacheComponents(f), false);
  if (!entry.exists) return undefined;
  return await readCapped(entry.path, MAX_CACHED_BYTES);
}

function cacheComponents(f: PinnedFile): string[] {
  return [repoSlug(f.repo), f.revision, ...f.path.split("/")];
}

/**
 * Walks `components` below `cacheDir` with `lstat`, never following a link: every directory on
 * the way must be a real directory (created when `create`), and the entry, if present, a
 * regular file. Anything else throws `EvidenceCacheUnsafe`.
 */
async function cacheEntry(
  cacheDir: string,
  components: readonly string[],
  create: boolean,
): Promise<{ path: string; exists: boolean }> {
  let path = cacheDir;
  for (const [i, name] of components.entries()) {
    path = join(path, name);
    let info: Deno.FileInfo | undefined;
    try {
      info = await Deno.lstat(path);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
    const last = i === components.length - 1;
    if (!info) {
      if (last) return { path, exists: false };
      if (!create) return { path: join(path, ...components.slice(i + 1)), exists: false };
      await Deno.mkdir(path);
      continue;
    }
    const shown = components.slice(0, i + 1).join("/");
    if (info.isSymlink) throw unsafeCache(`${shown} is a symbolic link`);
    if (last ? !info.isFile : !info.isDirectory) {
      throw unsafeCache(`${shown} is not a ${last ? "regular file" : "directory"}`);
    }
  }
  return { path, exists: true };
}

async function readCapped(path: string, maxBytes: number): Promise<Uint8Array> {
  const file = await Deno.open(path, { read: true });
  try {
    const info = await file.stat();
    if (!info.isFile || info.size > maxBytes) {
      throw unsafeCache(`cache entry is ${info.size} bytes, over the cap of ${maxBytes}`);
    }
    const buffer = new Uint8Array(maxBytes + 1);
    let total = 0;
    while (total < buffer.length) {
      const n = await file.read(buffer.subarray(total));
      if (n === null) break;
      total += n;
    }
    if (total > maxBytes) throw unsafeCache(`cache entry holds more than ${maxBytes} bytes`);
    return buffer.slice(0, total);
  } finally {
    file.close();
  }
}

/** Replaces an entry without writing through whatever might sit at its path. */
async function writeEntry(path: string, exists: boolean, bytes: Uint8Array): Promise<void> {
  if (exists) await Deno.remove(path);
  // createNew (O_EXCL) never follows a link planted between the check and the write.
  await Deno.writeFile(path, bytes, { createNew: true });
}

function unsafeCache(detail: string): CairnError {
  return new CairnError({
    reason: "EvidenceCacheUnsafe",
    message: `evidence cache: ${detail}; it is neither read nor written`,
  });
}

/** Where a cache entry's recorded provenance lives (a tree of its own: no slug starts with "."). */
function provenanceComponents(f: PinnedFile): string[] {
  const parts = [".provenance", repoSlug(f.repo), f.revision, ...f.path.split("/")];
  parts[parts.length - 1] += ".json";
  return parts;
}

/** Records where a cache entry's bytes came from. */
export async function writeProvenance(
  cacheDir: string,
  f: PinnedFile,
  p: SourceProvenance,
): Promise<void> {
  await Deno.mkdir(cacheDir, { recursive: true });
  const entry = await cacheEntry(cacheDir, provenanceComponents(f), true);
  await writeEntry(entry.path, entry.exists, new TextEncoder().encode(JSON.stringify(p) + "\n"));
}

/** Reads a cache entry's recorded provenance; `unrecorded` when there is none. */
export async function readProvenance(cacheDir: string, f: PinnedFile): Promise<SourceProvenance> {
  try {
    const entry = await cacheEntry(cacheDir, provenanceComponents(f), false);
    if (!entry.exists) return { kind: "unrecorded" };
    const text = new TextDecoder().decode(await readCapped(entry.path, 64 * 1024));
    return parseProvenance(JSON.parse(text));
  } catch {
    return { kind: "unrecorded" };
  }
}

/** Writes a cache entry (creating directories). */
export async function writeCached(
  cacheDir: string,
  f: PinnedFile,
  bytes: Uint8Array,
): Promise<void> {
  await Deno.mkdir(cacheDir, { recursive: true });
  const entry = await cacheEntry(cacheDir, cacheComponents(f), true);
  await writeEntry(entry.path, entry.exists, bytes);
}

/**
 * Fetches `f.path` at commit `f.revision` from `f.repo` into a throwaway repository. Tries a
 * shallow fetch of the exact commit first; when the server refuses a SHA want, falls back to a
 * full fetch and checks that the commit arrived. Throws `EvidenceFetchFailed` on any failure.
 */
export async function fetchPinnedFile(
  f: PinnedFile,
  opts: GitFetchOptions = {},
): Promise<FetchedFile> {
  if (!COMMIT_ID.test(f.revision)) {
    throw new CairnError({
      reason: "EvidenceFetchFailed",
      message: `revision must be a full 40-hex commit id, got ${JSON.stringify(f.revision)}`,
    });
  }
  const dir = await Deno.makeTempDir({
    prefix: "cairn-evidence-",
    ...(opts.tempDir ? { dir: opts.tempDir } : {}),
  });
  try {
    await git(dir, ["init", "-q", "."], opts);
    // The URL git will really use: a rewrite (a mirror, a local stand-in) must show in reports.
    const resolved = await git(dir, ["ls-remote", "--get-url", "--", f.repo], opts);
    const fetchedFrom = new TextDecoder().decode(resolved.stdout).trim() || f.repo;
    const want = ["fetch", "-q", "--no-tags", "--depth", "1", "--", f.repo, f.revision];
    const shallow = await git(dir, want, opts, false);
    if (!shallow.ok) {
      await git(dir, ["fetch", "-q", "--no-tags", "--", f.repo, "+refs/*:refs/cairn/*"], opts);
    }
    await git(dir, ["cat-file", "-e", "--end-of-options", `${f.revision}^{commit}`], opts);
    const blob = await git(
      dir,
      ["cat-file", "blob", "--end-of-options", `${f.revision}:${f.path}`],
      opts,
    );
    return { bytes: blob.stdout, sha256: await sha256Hex(blob.stdout), fetchedFrom };
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

interface GitRun {
  readonly ok: boolean;
  readonly stdout: Uint8Array;
}

/**
 * Runs git in `dir` under a deadline; failures name the subcommand and git's last words, never
 * the temp path. A call that outlives its deadline is killed with its whole process group (git
 * forks transport helpers and ssh, which would otherwise keep the pipes open) and throws
 * `EvidenceFetchTimedOut`: the file is unread, whatever `required` says.
 */
async function git(
  dir: string,
  args: string[],
  opts: GitFetchOptions,
  required = true,
): Promise<GitRun> {
  const limit = Math.min(
    opts.callTimeoutMs ?? DEFAULT_GIT_CALL_TIMEOUT_MS,
    opts.deadlineMs === undefined ? Infinity : opts.deadlineMs - Date.now(),
  );
  if (limit <= 0) throw timedOut(args, 0);
  const child = new Deno.Command("git", {
    args: ["-c", "protocol.file.allow=always", "-c", "init.defaultBranch=main", "-C", dir, ...args],
    env: {
      GIT_TERMINAL_PROMPT: "0",
      GIT_ASKPASS: "",
      ...opts.env,
      GIT_ALLOW_PROTOCOL: ALLOWED_PROTOCOLS,
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    // Its own process group, so the deadline can kill git and everything it started.
    detached: true,
  }).spawn();
  let expired = false;
  const timer = setTimeout(() => {
    expired = true;
    try {
      Deno.kill(-child.pid, "SIGKILL");
    } catch {
      // Already gone: the output below tells what happened.
    }
  }, limit);
  let out: Deno.CommandOutput;
  try {
    out = await child.output();
  } finally {
    clearTimeout(timer);
  }
  if (expired) throw timedOut(args, limit);
  if (!out.success && required) {
    const err = new TextDecoder().decode(out.stderr).replaceAll(dir, "<scratch>").trim();
    throw new CairnError({
      reason: "EvidenceFetchFailed",
      message: `git ${args[0]} failed: ${err.split("\n").slice(-2).join("; ")}`,
    });
  }
  return { ok: out.success, stdout: out.stdout };
}

function timedOut(args: readonly string[], limitMs: number): CairnError {
  return new CairnError({
    reason: "EvidenceFetchTimedOut",
    message: limitMs > 0
      ? `git ${args[0]} gave no answer within ${Math.ceil(limitMs / 1000)} s; the file is unread`
      : `the fetch budget was spent before git ${args[0]}; the file is unread`,
    details: { timeoutMs: Math.max(0, Math.round(limitMs)) },
  });
}
