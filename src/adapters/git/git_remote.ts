/**
 * `GitRemote`: the watched repository seen through a private bare cache clone. Fetches are
 * incremental (git only transfers objects it lacks; plan introductions can walk from a known
 * commit); a listing or a file read is one `cat-file --batch-command` process (`object_reader.ts`).
 */
import { CairnError } from "../../domain/errors.ts";
import type {
  BranchHead,
  FetchResult,
  PlanFile,
  PlanIntroduction,
  PlanListing,
  PlanSource,
  RefusedPlanPath,
} from "../../ports/plan_source.ts";
import { parseNameOnlyLog, type TreeEntry } from "./git_parse.ts";
import { OBJECT_ID, ObjectReader } from "./object_reader.ts";
import { checkPlanName, checkRepoPath, showPath } from "./plan_paths.ts";
import { gitOrThrow, gitText, runGit } from "./run_git.ts";

/** How to reach and cache the watched repository. */
export interface GitRemoteOptions {
  /** Any URL git understands (`file://`, `git://`, `https://`, `ssh://`, a path). */
  readonly url: string;
  /** Private cache directory (created as a bare repository when missing). */
  readonly cacheDir: string;
  /** The branch whose merged plans are executed, e.g. `main`. */
  readonly watchedBranch: string;
  /** Plan or signature files larger than this are refused unread (default 1 MiB). */
  readonly maxPlanBytes?: number;
  /** Deadline of each network call (fetch), ms; default run_git's `DEFAULT_GIT_TIMEOUT_MS`. */
  readonly timeoutMs?: number;
  /** Aborted when cairn stops: a network call in flight is killed at once (`GitStopped`). */
  readonly signal?: AbortSignal;
}

const TRACKING = "refs/remotes/origin/";
/** Files kept by `readFile` (a plan binds a handful; several plans may be in flight). */
const READ_CACHE_ENTRIES = 64;
const BRANCH_NAME = /^(?!-)(?!.*\.\.)(?!.*\/\/)[A-Za-z0-9._/-]{1,200}(?<![./])$/;

/** The git side of the reconcile loop; also the base the report sink pushes through. */
export class GitRemote implements PlanSource {
  readonly #opts: GitRemoteOptions;
  #lastHeads = new Map<string, string>();
  /**
   * Files already read, by full commit id and path. A commit's tree never changes, so a second
   * read of the same file at the same commit (the dispatch check runs before the plan and again
   * before each node, each time at the branch's current tip) gives the same bytes without three
   * git processes. Bounded; the oldest entry goes first.
   */
  readonly #reads = new Map<string, Uint8Array | undefined>();
  /** Commit ids already found in the cache repository. */
  readonly #present = new Set<string>();
  /** Looks for a commit under way, by id (see #requireCommit). */
  readonly #looking = new Map<string, Promise<boolean>>();

  private constructor(opts: GitRemoteOptions) {
    this.#opts = opts;
  }

  /** Opens (initialising when needed) the cache repository for `opts.url`. */
  static async open(opts: GitRemoteOptions): Promise<GitRemote> {
    checkBranch(opts.watchedBranch);
    checkRemoteUrl(opts.url);
    await Deno.mkdir(opts.cacheDir, { recursive: true });
    const probe = await runGit(["rev-parse", "--is-bare-repository"], { gitDir: opts.cacheDir });
    if (probe.code !== 0) await gitOrThrow(["init", "--bare", "--quiet", "--", opts.cacheDir]);
    const remote = new GitRemote(opts);
    await remote.#git(["config", "--", "remote.origin.url", opts.url]);
    await remote.#git(["config", "--", "remote.origin.fetch", `+refs/heads/*:${TRACKING}*`]);
    await remote.#git(["config", "--", "gc.auto", "0"]);
    // Nor the maintenance git would otherwise start after every fetch (a process per fetch).
    await remote.#git(["config", "--", "maintenance.auto", "false"]);
    return remote;
  }

  /** The cache repository's path (for the report sink and tools). */
  get gitDir(): string {
    return this.#opts.cacheDir;
  }

  /** The watched branch name. */
  get watchedBranch(): string {
    return this.#opts.watchedBranch;
  }

  async fetch(opts: { readonly signal?: AbortSignal } = {}): Promise<FetchResult> {
    const network = this.#network;
    const stops = [network.signal, opts.signal].filter((s): s is AbortSignal => s !== undefined);
    const out = await runGit(["fetch", "--prune", "--no-tags", "--quiet", "--", "origin"], {
      gitDir: this.gitDir,
      ...network,
      ...(stops.length > 0 ? { signal: AbortSignal.any(stops) } : {}),
    });
    if (out.code !== 0) throw fetchError(out.stderr, out.code);
    const heads = await this.#trackingHeads();
    const watchedCommit = heads.get(this.watchedBranch);
    if (!watchedCommit) {
      throw new CairnError({
        reason: "GitBranchMissing",
        message: `the watched branch '${this.watchedBranch}' does not exist on the remote`,
      });
    }
    const changed = [...heads].filter(([b, c]) => this.#lastHeads.get(b) !== c).map(([b]) => b);
    this.#lastHeads = heads;
    const branches: BranchHead[] = [...heads]
      .filter(([b]) => b !== this.watchedBranch)
      .map(([branch, commit]) => ({ branch, commit }));
    return { watched: { branch: this.watchedBranch, commit: watchedCommit }, branches, changed };
  }

  /** Fetches one branch; its tip, or `undefined` when the remote has no such branch. */
  async fetchBranch(branch: string): Promise<string | undefined> {
    checkBranch(branch);
    const ref = `refs/heads/${branch}`;
    const out = await runGit([
      "fetch",
      "--no-tags",
      "--quiet",
      "--",
      "origin",
      `+${ref}:${TRACKING}${branch}`,
    ], {
      gitDir: this.gitDir,
      ...this.#network,
    });
    if (out.code !== 0) {
      if (!/couldn't find remote ref/i.test(out.stderr)) throw fetchError(out.stderr, out.code);
      await runGit(["update-ref", "-d", "--", `${TRACKING}${branch}`], { gitDir: this.gitDir });
      return undefined;
    }
    return await this.#git([
      "rev-parse",
      "--verify",
      "--end-of-options",
      `${TRACKING}${branch}^{commit}`,
    ]);
  }

  async listPlans(
    commit: string,
    opts: { readonly readAhead?: readonly string[] } = {},
  ): Promise<PlanListing> {
    // One git process answers the whole listing: the commit, the plans directory, each plan and
    // signature file's size, then the bytes of those within the cap, then the files read ahead.
    return await ObjectReader.using(this.gitDir, async (objects) => {
      await this.#requireCommit(commit, objects);
      const isPlanFile = (e: TreeEntry) => e.path.endsWith(".yaml") || e.path.endsWith(".yaml.sig");
      const entries = (await objects.list(commit, "plans", isPlanFile)) ?? [];
      const sorted = sortPlanEntries(entries, this.#maxBytes);
      const wanted = sorted.plans.flatMap((
        p,
      ) => (p.sig ? [p.entry.oid, p.sig.oid] : [p.entry.oid]));
      const bodies = await objects.contents(wanted);
      const blobs = new Map(wanted.map((oid, i) => [oid, bodies[i]]));
      const plans: PlanFile[] = sorted.plans.map(({ name, entry, sig }) => {
        const signature = sig ? blobs.get(sig.oid) : undefined;
        return {
          name,
          path: entry.path,
          blob: entry.oid,
          bytes: blobs.get(entry.oid) ?? new Uint8Array(),
          ...(signature ? { signature } : {}),
        };
      });
      // A read-ahead that fails changes nothing the listing or `readFile` answers.
      await this.#readAhead(objects, commit, opts.readAhead ?? []).catch(() => {});
      return { commit, plans, refused: sorted.refused };
    });
  }

  async introductions(commit: string, since?: string): Promise<readonly PlanIntroduction[]> {
    await this.#requireCommit(commit);
    if (since !== undefined) await this.#requireCommit(since);
    const range = since ? `${since}..${commit}` : commit;
    const log = await gitOrThrow([
      "log",
      "--first-parent",
      "--diff-merges=first-parent",
      "--reverse",
      "--diff-filter=A",
      "--no-renames",
      "--name-only",
      "-z",
      "--format=%x01%H %ct",
      "--end-of-options",
      range,
      "--",
      ":(glob)plans/*.yaml",
    ], { gitDir: this.gitDir });
    const seen = new Set<string>();
    const result: PlanIntroduction[] = [];
    for (const c of parseNameOnlyLog(log)) {
      const names = c.paths.map((p) => planNameOf(p.path, p.utf8)).filter((n): n is string => !!n);
      for (const name of [...new Set(names)].sort()) {
        if (seen.has(name)) continue;
        seen.add(name);
        result.push({ name, commit: c.commit, committedAt: c.committedAt, order: result.length });
      }
    }
    return result;
  }

  async readFile(commit: string, path: string): Promise<Uint8Array | undefined> {
    const key = `${commit}\0${path}`;
    if (this.#reads.has(key)) return this.#reads.get(key)?.slice();
    const bytes = await this.#readFileAt(commit, path);
    this.#keep(key, bytes);
    return bytes?.slice();
  }

  /**
   * Reads several files at `commit` with one git process instead of one per file, and keeps them
   * for `readFile`. Only what `readFile` itself would answer is kept: a regular blob within the
   * cap, or a path with no entry. A link, a directory, an oversized blob or an unacceptable path is
   * left out, so `readFile` still refuses it with its own reason; a failure here changes nothing
   * `readFile` answers.
   */
  async prefetch(commit: string, paths: readonly string[]): Promise<void> {
    if (this.#unread(commit, paths).length === 0) return;
    await ObjectReader.using(this.gitDir, (objects) => this.#readAhead(objects, commit, paths));
  }

  /** The acceptable paths of `paths` not yet kept at `commit`. */
  #unread(commit: string, paths: readonly string[]): string[] {
    return [...new Set(paths)].filter((p) =>
      !this.#reads.has(`${commit}\0${p}`) && checkRepoPath(p).ok
    );
  }

  /** Reads and keeps what `readFile` would answer for `paths` at `commit`, through `objects`. */
  async #readAhead(objects: ObjectReader, commit: string, paths: readonly string[]): Promise<void> {
    const wanted = this.#unread(commit, paths);
    if (wanted.length === 0) return;
    await this.#requireCommit(commit, objects);
    const entries = new Map<string, TreeEntry>();
    for (const p of wanted) {
      const e = await objects.entry(commit, p);
      if (e) entries.set(p, e);
    }
    const readable = wanted.flatMap((p) => {
      const e = entries.get(p);
      return e && this.#entryProblem(commit, e) === undefined ? [e] : [];
    });
    const bodies = await objects.contents(readable.map((e) => e.oid));
    const blobs = new Map(readable.map((e, i) => [e.oid, bodies[i]]));
    for (const p of wanted) {
      const e = entries.get(p);
      const body = e ? blobs.get(e.oid) : undefined;
      if (!e) this.#keep(`${commit}\0${p}`, undefined);
      else if (body) this.#keep(`${commit}\0${p}`, body);
    }
  }

  /** Keeps one read; bounded, the oldest entry goes first. */
  #keep(key: string, bytes: Uint8Array | undefined): void {
    if (this.#reads.size >= READ_CACHE_ENTRIES) {
      this.#reads.delete(this.#reads.keys().next().value!);
    }
    this.#reads.set(key, bytes);
  }

  /** Reads `path` at `commit`; only a successful read (or a missing file) is cached. */
  async #readFileAt(commit: string, path: string): Promise<Uint8Array | undefined> {
    return await ObjectReader.using(this.gitDir, async (objects) => {
      await this.#requireCommit(commit, objects);
      const check = checkRepoPath(path);
      if (!check.ok) {
        throw new CairnError({
          reason: "PlanPathInvalid",
          message: `${showPath(path)}: ${check.why}`,
        });
      }
      // The tree entry first: its mode and size decide before any byte is read. A symlink entry
      // is refused (its "content" is a link target, not the repository's file), and so is a blob
      // over the cap; a path through a symlinked directory has no entry and reads as missing.
      const entry = await objects.entry(commit, path);
      if (!entry) return undefined;
      const problem = this.#entryProblem(commit, entry);
      if (problem) throw problem;
      const [bytes] = await objects.contents([entry.oid]);
      if (!bytes) {
        throw new CairnError({
          reason: "GitObjectMissing",
          message: `${showPath(path)} at ${commit.slice(0, 12)}: its blob is not in the cache`,
        });
      }
      return bytes;
    });
  }

  /** Why a tree entry is not read as a bound file (a link, not a file, over the cap), if it is not. */
  #entryProblem(commit: string, entry: TreeEntry): CairnError | undefined {
    const path = entry.path;
    if (entry.mode === "120000") {
      return new CairnError({
        reason: "BoundPathSymlink",
        message: `${showPath(path)} is a symbolic link at ${
          commit.slice(0, 12)
        }; links are not read`,
      });
    }
    if (entry.type !== "blob") {
      return new CairnError({
        reason: "BoundFileNotRegular",
        message: `${showPath(path)} is a ${entry.type} at ${commit.slice(0, 12)}, not a file`,
      });
    }
    if (entry.size > this.#maxBytes) {
      return new CairnError({
        reason: "BoundFileTooLarge",
        message: `${showPath(path)} is ${entry.size} bytes at ${commit.slice(0, 12)}; ` +
          `the cap is ${this.#maxBytes}`,
      });
    }
    return undefined;
  }

  /** Run options of calls that wait on the remote. */
  get #network(): { timeoutMs?: number; signal?: AbortSignal } {
    return {
      ...(this.#opts.timeoutMs !== undefined ? { timeoutMs: this.#opts.timeoutMs } : {}),
      ...(this.#opts.signal ? { signal: this.#opts.signal } : {}),
    };
  }

  get #maxBytes(): number {
    return this.#opts.maxPlanBytes ?? 1024 * 1024;
  }

  async #git(args: string[]): Promise<string> {
    return await gitText(args, { gitDir: this.gitDir });
  }

  async #trackingHeads(): Promise<Map<string, string>> {
    const text = await this.#git(["for-each-ref", "--format=%(objectname) %(refname)", TRACKING]);
    const heads = new Map<string, string>();
    for (const line of text.split("\n").filter((l) => l.length > 0).sort()) {
      const [oid = "", ref = ""] = line.split(" ");
      const branch = ref.slice(TRACKING.length);
      if (branch !== "HEAD") heads.set(branch, oid);
    }
    return new Map([...heads].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }

  /** Throws `GitObjectMissing` unless `commit` is a commit of the cache (looked up with `objects`). */
  async #requireCommit(commit: string, objects?: ObjectReader): Promise<void> {
    // A commit once found stays: fetches never delete objects here (gc.auto is 0), so each id
    // is looked up once, not at every read (a cycle reads a commit a dozen times).
    if (this.#present.has(commit)) return;
    // Reads of a new commit that start together (a cycle lists and walks at once) share one look.
    let looking = this.#looking.get(commit);
    if (!looking) {
      looking = !OBJECT_ID.test(commit)
        ? Promise.resolve(false)
        : objects
        ? objects.hasCommit(commit)
        : runGit(["cat-file", "-e", "--end-of-options", `${commit}^{commit}`], {
          gitDir: this.gitDir,
        }).then((r) => r.code === 0);
      this.#looking.set(commit, looking);
      looking.then(() => this.#looking.delete(commit), () => this.#looking.delete(commit));
    }
    const exists = await looking;
    if (exists) {
      if (this.#present.size >= READ_CACHE_ENTRIES) this.#present.clear();
      this.#present.add(commit);
    }
    if (!exists) {
      throw new CairnError({
        reason: "GitObjectMissing",
        message: `commit ${commit.slice(0, 80)} is not in the fetched history`,
      });
    }
  }
}

interface PlanEntry {
  readonly name: string;
  readonly entry: TreeEntry;
  readonly sig: TreeEntry | undefined;
}

/** Pairs plans with signatures; refuses unsafe, non-regular or oversized entries. */
export function sortPlanEntries(
  entries: readonly TreeEntry[],
  maxBytes: number,
): { plans: PlanEntry[]; refused: RefusedPlanPath[] } {
  const byPath = new Map(entries.map((e) => [e.path, e]));
  const plans: PlanEntry[] = [];
  const refused: RefusedPlanPath[] = [];
  for (const entry of entries) {
    if (!entry.path.endsWith(".yaml")) continue;
    const name = entry.path.slice("plans/".length, -".yaml".length);
    const why = entryProblem(entry, name, maxBytes);
    const sig = byPath.get(`${entry.path}.sig`);
    const sigWhy = sig && (sig.type !== "blob" || sig.mode === "120000" || sig.size > maxBytes)
      ? "its signature file is not a regular file within the size limit"
      : undefined;
    const problem = why ?? (sigWhy ? { reason: "PlanTooLarge" as const, why: sigWhy } : undefined);
    if (problem) {
      refused.push({ path: showPath(entry.path), reason: problem.reason, message: problem.why });
    } else {
      plans.push({ name, entry, sig });
    }
  }
  plans.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { plans, refused };
}

function entryProblem(
  entry: TreeEntry,
  name: string,
  maxBytes: number,
): { reason: "PlanPathInvalid" | "PlanTooLarge"; why: string } | undefined {
  if (!entry.utf8) return { reason: "PlanPathInvalid", why: "the file name is not valid UTF-8" };
  const check = checkPlanName(name);
  if (!check.ok) return { reason: "PlanPathInvalid", why: check.why };
  if (entry.type !== "blob" || entry.mode === "120000") {
    return { reason: "PlanPathInvalid", why: "the plan is not a regular file (symlink or tree)" };
  }
  if (entry.size > maxBytes) {
    return { reason: "PlanTooLarge", why: `the file has ${entry.size} bytes (limit ${maxBytes})` };
  }
  return undefined;
}

function planNameOf(path: string, utf8: boolean): string | undefined {
  if (!utf8 || !path.startsWith("plans/") || !path.endsWith(".yaml")) return undefined;
  const name = path.slice("plans/".length, -".yaml".length);
  return checkPlanName(name).ok ? name : undefined;
}

function checkBranch(branch: string): void {
  if (!BRANCH_NAME.test(branch) || branch.endsWith(".lock")) {
    throw new CairnError({
      reason: "ConfigInvalid",
      message: `'${showPath(branch).slice(0, 200)}' is not an acceptable branch name`,
    });
  }
}

/**
 * The watched repository's URL is the operator's, but it still reaches git's command line and
 * config: refuse what git would read as an option or a remote helper (`ext::…`), and control
 * characters that could forge config lines or log output.
 */
function checkRemoteUrl(url: string): void {
  const why = url === ""
    ? "is empty"
    : url.startsWith("-")
    ? "starts with '-'"
    : hasControlCharacter(url)
    ? "contains a control character"
    : /^[A-Za-z0-9][A-Za-z0-9+.-]*::/.test(url)
    ? "names a git remote helper (<transport>::<address>)"
    : undefined;
  if (why) {
    throw new CairnError({
      reason: "ConfigInvalid",
      message: `the Git remote URL ${JSON.stringify(url.slice(0, 200))} ${why}`,
    });
  }
}

function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}

function fetchError(stderr: string, code: number): CairnError {
  const detail = stderr.trim().split("\n").slice(0, 3).join(" / ").slice(0, 400);
  return new CairnError({
    reason: "GitFetchFailed",
    message: `fetching the remote failed (exit ${code})${detail ? `: ${detail}` : ""}`,
    details: { exitCode: code },
  });
}
