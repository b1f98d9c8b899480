/**
 * `GitReportSink`: commits reports with plumbing (blobs, a throwaway index, `commit-tree`) on
 * top of the freshly fetched report branch tip and pushes by fast-forward only. A rejection
 * means someone else moved the branch: re-fetch, rebuild on their tip (their commit survives)
 * and retry, a bounded number of times. There is no force option anywhere in this file.
 */
import { CairnError } from "../../domain/errors.ts";
import type { Clock } from "../../ports/clock.ts";
import type { PublishResult, ReportDocument, ReportSink } from "../../ports/report_sink.ts";
import { checkPlanName, executionReportPath, previewReportPath, showPath } from "./plan_paths.ts";
import { gitError, gitText, runGit } from "./run_git.ts";

/** Who commits reports, and where. */
export interface GitReportSinkOptions {
  /** Report branch; defaults to the remote's watched branch (the config defaults it to `cairn-reports`). */
  readonly branch?: string;
  readonly authorName: string;
  readonly authorEmail: string;
  /** Push attempts before `GitPushRejected` (default 5). */
  readonly maxAttempts?: number;
  /** Commit timestamps come from this clock when given (else git's wall clock). */
  readonly clock?: Clock;
  /** Deadline of a push, ms (default run_git's). */
  readonly timeoutMs?: number;
  /**
   * Aborted when a stopping cairn may wait no longer: a push in flight is killed (`GitStopped`)
   * and the report stays kept for the next start (`PendingReportSink`).
   */
  readonly signal?: AbortSignal;
}

const EMPTY_TREE_INPUT = new Uint8Array();

/** The part of `GitRemote` the sink needs (a `GitRemote` satisfies it). */
export interface ReportBranchRemote {
  /** The private cache repository. */
  readonly gitDir: string;
  readonly watchedBranch: string;
  /** Fetches one branch; its tip, or `undefined` when the remote lacks it. */
  fetchBranch(branch: string): Promise<string | undefined>;
}

/** Publishes reports to a branch of the watched remote. */
export class GitReportSink implements ReportSink {
  readonly #remote: ReportBranchRemote;
  readonly #opts: GitReportSinkOptions;

  constructor(remote: ReportBranchRemote, opts: GitReportSinkOptions) {
    this.#remote = remote;
    this.#opts = opts;
  }

  /** The branch reports land on. */
  get branch(): string {
    return this.#opts.branch ?? this.#remote.watchedBranch;
  }

  async publish(documents: readonly ReportDocument[], message: string): Promise<PublishResult> {
    const started = performance.now();
    const files = documents.map(checkedFile);
    const maxAttempts = this.#opts.maxAttempts ?? 5;
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      const tip = await this.#remote.fetchBranch(this.branch);
      const tree = await this.#buildTree(tip, files);
      if (
        tip &&
        tree === (await this.#git(["rev-parse", "--verify", "--end-of-options", `${tip}^{tree}`]))
      ) {
        return {
          status: "unchanged",
          commit: tip,
          attempts: attempt - 1,
          durationMs: elapsed(started),
        };
      }
      const commit = await this.#commit(tree, tip, message);
      const pushed = await this.#push(commit);
      if (pushed) {
        return { status: "committed", commit, attempts: attempt, durationMs: elapsed(started) };
      }
    }
    throw new CairnError({
      reason: "GitPushRejected",
      message:
        `the report branch '${this.branch}' moved during each of ${maxAttempts} attempts; reports not committed`,
      details: { attempts: maxAttempts },
    });
  }

  get #gitDir(): string {
    return this.#remote.gitDir;
  }

  async #git(args: string[], env?: Record<string, string>, stdin?: Uint8Array): Promise<string> {
    return await gitText(args, {
      gitDir: this.#gitDir,
      ...(env ? { env } : {}),
      ...(stdin ? { stdin } : {}),
    });
  }

  /** Tip's tree plus the documents, built in a private index so nothing else is disturbed. */
  async #buildTree(tip: string | undefined, files: readonly ReportFile[]): Promise<string> {
    const dir = await Deno.makeTempDir({ dir: this.#gitDir, prefix: "report-index-" });
    const env = { GIT_INDEX_FILE: `${dir}/index` };
    try {
      if (tip) await this.#git(["read-tree", "--end-of-options", tip], env);
      else await this.#git(["read-tree", "--empty"], env);
      for (const f of files) {
        const blob = await this.#git(
          ["hash-object", "-w", "--stdin"],
          undefined,
          f.bytes.length ? f.bytes : EMPTY_TREE_INPUT,
        );
        await this.#git(["update-index", "--add", "--cacheinfo", `100644,${blob},${f.path}`], env);
      }
      return await this.#git(["write-tree"], env);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  }

  async #commit(tree: string, parent: string | undefined, message: string): Promise<string> {
    const { authorName: name, authorEmail: email, clock } = this.#opts;
    const env: Record<string, string> = {
      GIT_AUTHOR_NAME: name,
      GIT_AUTHOR_EMAIL: email,
      GIT_COMMITTER_NAME: name,
      GIT_COMMITTER_EMAIL: email,
    };
    if (clock) {
      const date = `@${Math.floor(clock.now() / 1000)} +0000`;
      env.GIT_AUTHOR_DATE = date;
      env.GIT_COMMITTER_DATE = date;
    }
    const parents = parent ? ["-p", parent] : [];
    const args = ["commit-tree", ...parents, "-F", "-", "--end-of-options", tree];
    return await this.#git(args, env, new TextEncoder().encode(`${message}\n`));
  }

  /** Fast-forward push; false when the remote rejected it because the branch moved. */
  async #push(commit: string): Promise<boolean> {
    const out = await runGit(
      ["push", "--porcelain", "--quiet", "--", "origin", `${commit}:refs/heads/${this.branch}`],
      {
        gitDir: this.#gitDir,
        ...(this.#opts.timeoutMs !== undefined ? { timeoutMs: this.#opts.timeoutMs } : {}),
        ...(this.#opts.signal ? { signal: this.#opts.signal } : {}),
      },
    );
    if (out.code === 0) return true;
    const text = `${new TextDecoder().decode(out.stdout)}\n${out.stderr}`;
    if (isMovedBranch(text)) return false;
    throw gitError(out, "GitPushFailed", "pushing the report commit");
  }
}

/** Does a push's output say the branch moved under us (retry), rather than a hard failure? */
export function isMovedBranch(pushOutput: string): boolean {
  return /\[rejected\]|non-fast-forward|fetch first|failed to update ref|cannot lock ref|incorrect old value|stale info/i
    .test(pushOutput);
}

interface ReportFile {
  readonly path: string;
  readonly bytes: Uint8Array;
}

function checkedFile(doc: ReportDocument): ReportFile {
  const check = checkPlanName(doc.plan);
  if (!check.ok) {
    throw new CairnError({
      reason: "PlanPathInvalid",
      message: `report for plan '${showPath(doc.plan).slice(0, 120)}' refused: ${check.why}`,
    });
  }
  const bytes = new TextEncoder().encode(doc.markdown);
  if (doc.kind === "execution") return { path: executionReportPath(doc.plan), bytes };
  const path = previewReportPath(doc.plan, doc.branch);
  if (path === undefined) {
    throw new CairnError({
      reason: "PlanPathInvalid",
      message: `preview of '${doc.plan}' on branch '${
        showPath(doc.branch).slice(0, 120)
      }' refused: the branch name is empty or too long to name a report file`,
    });
  }
  return { path, bytes };
}

function elapsed(started: number): number {
  return Math.round(performance.now() - started);
}
