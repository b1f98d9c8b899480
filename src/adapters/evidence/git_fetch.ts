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
import { dirname, join } from "node:path";
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

/** Reads a cache entry, or undefined when there is none. */
export async function readCached(cacheDir: string, f: PinnedFile): Promise<Uint8Array | undefined> {
  try {
    return await Deno.readFile(cachePath(cacheDir, f));
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw e;
  }
}

/** Where a cache entry's recorded provenance lives (a tree of its own: no slug starts with "."). */
function provenancePath(cacheDir: string, f: PinnedFile): string {
  return join(cacheDir, ".provenance", repoSlug(f.repo), f.revision, ...f.path.split("/")) +
    ".json";
}

/** Records where a cache entry's bytes came from. */
export async function writeProvenance(
  cacheDir: string,
  f: PinnedFile,
  p: SourceProvenance,
): Promise<void> {
  const path = provenancePath(cacheDir, f);
  await Deno.mkdir(dirname(path), { recursive: true });
  await Deno.writeTextFile(path, JSON.stringify(p) + "\n");
}

/** Reads a cache entry's recorded provenance; `unrecorded` when there is none. */
export async function readProvenance(cacheDir: string, f: PinnedFile): Promise<SourceProvenance> {
  try {
    return parseProvenance(JSON.parse(await Deno.readTextFile(provenancePath(cacheDir, f))));
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
  const p = cachePath(cacheDir, f);
  await Deno.mkdir(dirname(p), { recursive: true });
  await Deno.writeFile(p, bytes);
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
