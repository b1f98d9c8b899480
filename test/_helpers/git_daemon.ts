/**
 * Real git for tests: a `git daemon` on 127.0.0.1 serving bare repositories (push enabled),
 * bare repository creation, and a small work tree for commits made "by someone else".
 * Readiness is event-driven (the daemon's "Ready to rumble" line) and then confirmed with
 * `git ls-remote` under a bounded real-time deadline; no fixed sleeps.
 */

const GIT_ENV: Record<string, string> = {
  GIT_TERMINAL_PROMPT: "0",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  LC_ALL: "C",
};

/** Runs git; throws with stderr on failure; returns trimmed stdout. */
export async function git(args: string[], cwd?: string, stdin?: Uint8Array): Promise<string> {
  const child = new Deno.Command("git", {
    args,
    env: GIT_ENV,
    stdin: stdin ? "piped" : "null",
    stdout: "piped",
    stderr: "piped",
    ...(cwd ? { cwd } : {}),
  }).spawn();
  if (stdin) {
    const w = child.stdin.getWriter();
    await w.write(stdin);
    await w.close();
  }
  const out = await child.output();
  const td = new TextDecoder();
  if (out.code !== 0) {
    throw new Error(`git ${args.join(" ")} failed (${out.code}): ${td.decode(out.stderr)}`);
  }
  return td.decode(out.stdout).trim();
}

/** Creates `<basePath>/<name>` as a bare repository whose HEAD names `branch`. */
export async function createBareRepo(
  basePath: string,
  name: string,
  branch = "main",
): Promise<string> {
  const path = `${basePath}/${name}`;
  await git(["init", "--bare", "--quiet", `--initial-branch=${branch}`, path]);
  return path;
}

/** A running daemon. */
export interface GitDaemon {
  readonly port: number;
  readonly basePath: string;
  /** `git://127.0.0.1:<port>/<repo>`. */
  url(repo: string): string;
  /** Stops the daemon and waits for it to exit. */
  stop(): Promise<void>;
}

/** Starts `git daemon` exporting every repository under `basePath`, with push enabled. */
export async function startGitDaemon(
  basePath: string,
  opts: { readyTimeoutMs?: number } = {},
): Promise<GitDaemon> {
  let lastError: unknown;
  for (let tries = 0; tries < 3; tries++) {
    try {
      return await tryStart(basePath, freePort(), opts.readyTimeoutMs ?? 10_000);
    } catch (err) {
      lastError = err; // most likely the port was taken between probe and bind
    }
  }
  throw lastError;
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

async function tryStart(basePath: string, port: number, timeoutMs: number): Promise<GitDaemon> {
  const child = new Deno.Command("git", {
    args: [
      "daemon",
      "--verbose",
      "--reuseaddr",
      "--export-all",
      "--enable=receive-pack",
      `--base-path=${basePath}`,
      "--listen=127.0.0.1",
      `--port=${port}`,
      basePath,
    ],
    env: GIT_ENV,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const log = drain(child.stderr);
  const stop = async () => {
    try {
      child.kill("SIGTERM");
    } catch { /* already gone */ }
    await child.status;
    await log.done;
  };
  const deadline = Date.now() + timeoutMs;
  try {
    await log.waitFor("Ready to rumble", deadline, child.status);
    await untilListed(`git://127.0.0.1:${port}/`, basePath, deadline);
  } catch (err) {
    await stop();
    throw new Error(`git daemon did not start: ${log.text().slice(-500)}`, { cause: err });
  }
  return { port, basePath, url: (repo) => `git://127.0.0.1:${port}/${repo}`, stop };
}

/** Confirms the daemon answers `ls-remote` for some repository under basePath. */
async function untilListed(urlBase: string, basePath: string, deadline: number): Promise<void> {
  const repo = [...Deno.readDirSync(basePath)].find((e) => e.isDirectory)?.name;
  if (!repo) return; // nothing to list yet; the ready line is all the evidence there is
  for (;;) {
    try {
      await git(["ls-remote", `${urlBase}${repo}`]);
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
    }
  }
}

function drain(stream: ReadableStream<Uint8Array>) {
  let text = "";
  const waiters: (() => void)[] = [];
  const done = (async () => {
    const td = new TextDecoder();
    for await (const chunk of stream) {
      if (text.length < 65_536) text += td.decode(chunk, { stream: true });
      waiters.splice(0).forEach((w) => w());
    }
    waiters.splice(0).forEach((w) => w());
  })();
  return {
    done,
    text: () => text,
    async waitFor(needle: string, deadline: number, exited: Promise<unknown>): Promise<void> {
      let gone = false;
      exited.then(() => (gone = true));
      while (!text.includes(needle)) {
        if (gone || Date.now() > deadline) throw new Error(`no '${needle}' from git daemon`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          exited.then(() => resolve());
        });
      }
    },
  };
}

/** A non-bare clone for making commits as another party. */
export class GitWorkTree {
  readonly dir: string;

  private constructor(dir: string) {
    this.dir = dir;
  }

  /** Clones `url` into `dir` with a fixed identity. */
  static async clone(
    url: string,
    dir: string,
    who = { name: "Other Person", email: "other@example.com" },
  ): Promise<GitWorkTree> {
    await git(["clone", "--quiet", url, dir]);
    await git(["config", "user.name", who.name], dir);
    await git(["config", "user.email", who.email], dir);
    return new GitWorkTree(dir);
  }

  /** Runs git in this work tree. */
  run(...args: string[]): Promise<string> {
    return git(args, this.dir);
  }

  /** Writes (or with `null` deletes) files, commits them all, returns the commit id. */
  async commit(
    files: Record<string, string | Uint8Array | null>,
    message: string,
  ): Promise<string> {
    for (const [path, content] of Object.entries(files)) {
      const full = `${this.dir}/${path}`;
      if (content === null) {
        await this.run("rm", "--quiet", "--", path);
        continue;
      }
      await Deno.mkdir(full.slice(0, full.lastIndexOf("/")), { recursive: true });
      await Deno.writeFile(
        full,
        typeof content === "string" ? new TextEncoder().encode(content) : content,
      );
      await this.run("add", "--", path);
    }
    await this.run("commit", "--quiet", "--allow-empty", "-m", message);
    return await this.run("rev-parse", "HEAD");
  }

  /** Switches branch, creating it from the current HEAD when `create`. */
  async checkout(branch: string, create = false): Promise<void> {
    await this.run("checkout", "--quiet", ...(create ? ["-b"] : []), branch);
  }

  /** Merges `branch` with a merge commit (as a PR merge would); returns the merge commit. */
  async merge(branch: string, message = `Merge ${branch}`): Promise<string> {
    await this.run("merge", "--quiet", "--no-ff", "-m", message, branch);
    return await this.run("rev-parse", "HEAD");
  }

  /** Pushes a branch (fast-forward only). */
  async push(branch: string): Promise<void> {
    await this.run("push", "--quiet", "origin", `${branch}:refs/heads/${branch}`);
  }

  /** Fetches and hard-resets `branch` to the remote's tip. */
  async pull(branch: string): Promise<void> {
    await this.run("fetch", "--quiet", "origin");
    await this.run("checkout", "--quiet", branch);
    await this.run("reset", "--quiet", "--hard", `origin/${branch}`);
  }
}
