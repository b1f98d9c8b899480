/**
 * The one place cairn starts `git`: argument vectors only (never a shell), a fixed environment
 * (no prompts, no system config, C locale, no transport helpers), a deadline on every call, and
 * URL credentials scrubbed from anything that could reach a log or an error message. Callers
 * put `--` (or `--end-of-options`) before URLs, paths and revisions so that no operand can be
 * read as an option.
 */
import { CairnError } from "../../domain/errors.ts";
import type { Reason } from "../../domain/reasons.ts";

/** How to run one git command. */
export interface GitRunOptions {
  /** `--git-dir` for commands on the private cache repository. */
  readonly gitDir?: string;
  /** Working directory (defaults to the process's). */
  readonly cwd?: string;
  readonly stdin?: Uint8Array;
  /** Extra environment (author identity, `GIT_INDEX_FILE`, …). */
  readonly env?: Readonly<Record<string, string>>;
  /** Longest the call may run, ms (default {@link DEFAULT_GIT_TIMEOUT_MS}). */
  readonly timeoutMs?: number;
  /**
   * Stops the call when aborted (cairn is stopping): git and every process it started are
   * killed and the call throws `GitStopped`, so a shutdown never waits out a network deadline.
   */
  readonly signal?: AbortSignal;
}

/**
 * Default deadline of one git call. Generous for a fetch of a plan repository; its purpose is
 * that a remote that accepts the connection and never answers cannot stall the reconcile loop.
 */
export const DEFAULT_GIT_TIMEOUT_MS = 120_000;

/** What a git command returned. */
export interface GitOutput {
  readonly code: number;
  readonly stdout: Uint8Array;
  readonly stderr: string;
}

const BASE_ENV: Readonly<Record<string, string>> = {
  GIT_TERMINAL_PROMPT: "0",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_ASKPASS: "",
  SSH_ASKPASS: "",
  LC_ALL: "C",
};

/** Transports cairn's git may use; set last, so no environment or config enables `ext::`. */
const ALLOWED_PROTOCOLS = "https:ssh:git:file";

const decoder = new TextDecoder();

/**
 * Runs git and returns its exit code and output; throws only when git cannot start or outlives
 * its deadline (then git and every process it started are killed: `GitTimedOut`).
 */
export async function runGit(
  args: readonly string[],
  opts: GitRunOptions = {},
): Promise<GitOutput> {
  const child = spawnGit(args, opts, opts.stdin ? "piped" : "null");
  const timeoutMs = opts.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS;
  let expired = false;
  let stopped = false;
  const timer = setTimeout(() => {
    expired = true;
    killGroup(child);
  }, timeoutMs);
  const onStop = () => {
    stopped = true;
    killGroup(child);
  };
  if (opts.signal?.aborted) onStop();
  else opts.signal?.addEventListener("abort", onStop, { once: true });
  try {
    if (opts.stdin) {
      const writer = child.stdin.getWriter();
      // A command that exits early closes its stdin; its exit status tells the real story.
      await writer.write(opts.stdin).catch(() => {});
      await writer.close().catch(() => {});
    }
    const out = await child.output();
    if (stopped) {
      throw new CairnError({
        reason: "GitStopped",
        message: `git ${args[0] ?? ""} was stopped: cairn is shutting down`,
      });
    }
    if (expired) {
      throw new CairnError({
        reason: "GitTimedOut",
        message: `git ${args[0] ?? ""} gave no answer within ${Math.ceil(timeoutMs / 1000)} s`,
        details: { timeoutMs },
      });
    }
    return {
      code: out.code,
      stdout: out.stdout,
      stderr: scrubCredentials(decoder.decode(out.stderr)),
    };
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener("abort", onStop);
  }
}

/** A git process spoken to over its stdin and stdout (`cat-file --batch-command`). */
export interface GitConversation {
  /** Sends bytes to git's stdin (resolves once the pipe took them). */
  write(bytes: Uint8Array): Promise<void>;
  /** Reads git's stdout. */
  readonly out: ByteReader;
}

/**
 * Runs one long-lived git command and hands `talk` its stdin and stdout; when `talk` ends, stdin is
 * closed and git's exit awaited. Same environment, deadline and stop as {@link runGit}: at the
 * deadline or on the stop signal git's process group is killed and the call throws
 * `GitTimedOut`/`GitStopped`; when `talk` fails because git ended early, the error names git's
 * exit status and stderr (`reason`), not the broken pipe.
 */
export async function converseWithGit<T>(
  args: readonly string[],
  opts: GitRunOptions & { readonly reason?: Reason },
  talk: (io: GitConversation) => Promise<T>,
): Promise<T> {
  const child = spawnGit(args, opts, "piped");
  const timeoutMs = opts.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS;
  let ended: "expired" | "stopped" | undefined;
  const end = (why: "expired" | "stopped") => {
    ended ??= why;
    killGroup(child);
  };
  const timer = setTimeout(() => end("expired"), timeoutMs);
  const onStop = () => end("stopped");
  if (opts.signal?.aborted) onStop();
  else opts.signal?.addEventListener("abort", onStop, { once: true });
  const stderr = new Response(child.stderr).arrayBuffer();
  const writer = child.stdin.getWriter();
  const out = new ByteReader(child.stdout);
  let result: { ok: true; value: T } | { ok: false; error: unknown };
  try {
    result = { ok: true, value: await talk({ write: (b) => writer.write(b), out }) };
  } catch (error) {
    result = { ok: false, error };
    // git may still be waiting for input or writing output nobody reads: end it.
    killGroup(child);
  }
  await writer.close().catch(() => {});
  await out.cancel();
  const status = await child.status;
  const errText = scrubCredentials(decoder.decode(await stderr.catch(() => new ArrayBuffer(0))));
  clearTimeout(timer);
  opts.signal?.removeEventListener("abort", onStop);
  const what = args[0] ?? "";
  if (ended === "stopped") {
    throw new CairnError({
      reason: "GitStopped",
      message: `git ${what} was stopped: cairn is shutting down`,
    });
  }
  if (ended === "expired") {
    throw new CairnError({
      reason: "GitTimedOut",
      message: `git ${what} gave no answer within ${Math.ceil(timeoutMs / 1000)} s`,
      details: { timeoutMs },
    });
  }
  if (!result.ok) {
    if (result.error instanceof CairnError || status.success) throw result.error;
    throw gitError(
      { code: status.code, stdout: new Uint8Array(), stderr: errText },
      opts.reason ?? "GitCommandFailed",
      subcommandOf(args),
    );
  }
  return result.value;
}

/** Buffered reads of a byte stream: lines and exact lengths. */
export class ByteReader {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  #buf: Uint8Array = new Uint8Array(0);
  #done = false;

  constructor(stream: ReadableStream<Uint8Array>) {
    this.#reader = stream.getReader();
  }

  /** The next line without its LF; undefined at the end of the stream. */
  async line(): Promise<string | undefined> {
    for (;;) {
      const nl = this.#buf.indexOf(10);
      if (nl >= 0) {
        const text = decoder.decode(this.#buf.subarray(0, nl));
        this.#buf = this.#buf.subarray(nl + 1);
        return text;
      }
      if (!(await this.#more())) {
        if (this.#buf.length === 0) return undefined;
        throw new Error("the stream ended inside a line");
      }
    }
  }

  /** Exactly `n` bytes (a copy); throws when the stream ends first. */
  async bytes(n: number): Promise<Uint8Array> {
    while (this.#buf.length < n) {
      if (!(await this.#more())) {
        throw new Error(`the stream ended ${n - this.#buf.length} bytes short`);
      }
    }
    const taken = this.#buf.slice(0, n);
    this.#buf = this.#buf.subarray(n);
    return taken;
  }

  /** Stops reading; what is left is discarded. */
  async cancel(): Promise<void> {
    if (!this.#done) await this.#reader.cancel().catch(() => {});
    this.#done = true;
  }

  async #more(): Promise<boolean> {
    if (this.#done) return false;
    const { value, done } = await this.#reader.read();
    if (done) {
      this.#done = true;
      return false;
    }
    if (this.#buf.length === 0) this.#buf = value;
    else {
      const joined = new Uint8Array(this.#buf.length + value.length);
      joined.set(this.#buf);
      joined.set(value, this.#buf.length);
      this.#buf = joined;
    }
    return true;
  }
}

/**
 * Starts git with cairn's fixed environment, in its own process group so that a deadline or a stop
 * reaches ssh and remote helpers too.
 */
/** The program run as git (`useGitProgram`). */
let gitProgram = "git";

/**
 * Runs `program` instead of `git` from PATH, in this module instance only (a test file's worker;
 * PATH is the whole process's), until the returned undo is called. Tests count and inspect the
 * processes cairn starts with a wrapper that notes each start and runs the real git.
 */
export function useGitProgram(program: string): () => void {
  const before = gitProgram;
  gitProgram = program;
  return () => {
    gitProgram = before;
  };
}

function spawnGit(
  args: readonly string[],
  opts: GitRunOptions,
  stdin: "piped" | "null",
): Deno.ChildProcess {
  const fullArgs = opts.gitDir ? [`--git-dir=${opts.gitDir}`, ...args] : [...args];
  try {
    return new Deno.Command(gitProgram, {
      args: fullArgs,
      env: { ...BASE_ENV, ...opts.env, GIT_ALLOW_PROTOCOL: ALLOWED_PROTOCOLS },
      stdin,
      stdout: "piped",
      stderr: "piped",
      detached: true,
      ...(opts.cwd ? { cwd: opts.cwd } : {}),
    }).spawn();
  } catch (err) {
    throw new CairnError({
      reason: "GitUnavailable",
      message: `cannot start git: ${err instanceof Error ? err.message : String(err)}`,
    }, { cause: err });
  }
}

/** Kills git and every process it started. */
function killGroup(child: Deno.ChildProcess): void {
  try {
    Deno.kill(-child.pid, "SIGKILL");
  } catch {
    // Already exited.
  }
}

/** Runs git and returns stdout; a non-zero exit becomes a `CairnError` with `reason`. */
export async function gitOrThrow(
  args: readonly string[],
  opts: GitRunOptions & { readonly reason?: Reason; readonly what?: string } = {},
): Promise<Uint8Array> {
  const out = await runGit(args, opts);
  if (out.code !== 0) {
    throw gitError(out, opts.reason ?? "GitCommandFailed", opts.what ?? subcommandOf(args));
  }
  return out.stdout;
}

/** `git remote` for `-c k=v remote add …`: a message names the subcommand, not `-c`. */
export function subcommandOf(args: readonly string[]): string {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "-c" || a === "-C") i++; // its value is the next word
    else if (!a.startsWith("-")) return `git ${a}`;
  }
  return "git";
}

/** Same as {@link gitOrThrow}, decoded as UTF-8 with the trailing newline removed. */
export async function gitText(
  args: readonly string[],
  opts: GitRunOptions & { readonly reason?: Reason; readonly what?: string } = {},
): Promise<string> {
  return decoder.decode(await gitOrThrow(args, opts)).replace(/\n$/, "");
}

/** Builds the error for a failed git command, keeping the first lines of its stderr. */
export function gitError(out: GitOutput, reason: Reason, what = "git"): CairnError {
  const detail = out.stderr.trim().split("\n").slice(0, 4).join(" / ").slice(0, 500);
  return new CairnError({
    reason,
    message: `${what} failed (exit ${out.code})${detail ? `: ${detail}` : ""}`,
    details: { exitCode: out.code },
  });
}

/** Removes `user:password@` from URLs so a token in a remote URL never reaches a log. */
export function scrubCredentials(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^/@\s]*@/gi, "$1***@");
}
