/**
 * Fetches one pinned file at an exact commit with real git, and keeps the evidence cache
 * (`<cache>/<repo-slug>/<revision>/<path>`).
 */
import { dirname, join } from "node:path";
import { CairnError } from "../../domain/errors.ts";
import { sha256Hex } from "../../domain/plan/digest.ts";

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
}

/** The fetched bytes and their SHA-256. */
export interface FetchedFile {
  readonly bytes: Uint8Array;
  readonly sha256: string;
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
  const dir = await Deno.makeTempDir({
    prefix: "cairn-evidence-",
    ...(opts.tempDir ? { dir: opts.tempDir } : {}),
  });
  try {
    await git(dir, ["init", "-q", "."], opts);
    const want = ["fetch", "-q", "--no-tags", "--depth", "1", f.repo, f.revision];
    const shallow = await git(dir, want, opts, false);
    if (!shallow.ok) {
      await git(dir, ["fetch", "-q", "--no-tags", f.repo, "+refs/*:refs/cairn/*"], opts);
    }
    await git(dir, ["cat-file", "-e", `${f.revision}^{commit}`], opts);
    const blob = await git(dir, ["cat-file", "blob", `${f.revision}:${f.path}`], opts);
    return { bytes: blob.stdout, sha256: await sha256Hex(blob.stdout) };
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

interface GitRun {
  readonly ok: boolean;
  readonly stdout: Uint8Array;
}

/** Runs git in `dir`; failures name the subcommand and git's last words, never the temp path. */
async function git(
  dir: string,
  args: string[],
  opts: GitFetchOptions,
  required = true,
): Promise<GitRun> {
  const out = await new Deno.Command("git", {
    args: ["-c", "protocol.file.allow=always", "-c", "init.defaultBranch=main", "-C", dir, ...args],
    env: { GIT_TERMINAL_PROMPT: "0", GIT_ASKPASS: "", ...opts.env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success && required) {
    const err = new TextDecoder().decode(out.stderr).replaceAll(dir, "<scratch>").trim();
    throw new CairnError({
      reason: "EvidenceFetchFailed",
      message: `git ${args[0]} failed: ${err.split("\n").slice(-2).join("; ")}`,
    });
  }
  return { ok: out.success, stdout: out.stdout };
}
