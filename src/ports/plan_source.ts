/**
 * Where plans come from: a Git remote holding `plans/<name>.yaml` (+ `.yaml.sig`). The engine
 * sees commits and bytes, never git itself. Failures surface as `CairnError` with a `git`-area
 * reason code (`GitFetchFailed`, `GitBranchMissing`, `GitObjectMissing`, …).
 */
import type { Reason } from "../domain/reasons.ts";

/** A branch tip on the remote, as of the last fetch. */
export interface BranchHead {
  /** Short branch name, e.g. `main` or `plan/talos-v1.14.2`. */
  readonly branch: string;
  /** Full 40-hex commit id. */
  readonly commit: string;
}

/** What one fetch saw. */
export interface FetchResult {
  /** The watched branch's tip. */
  readonly watched: BranchHead;
  /** Every other branch on the remote (candidate plan branches), sorted by name. */
  readonly branches: readonly BranchHead[];
  /** Branch names whose tip differs from the previous fetch (new branches included). */
  readonly changed: readonly string[];
}

/** A plan file found at a commit, with its bytes and optional signature bytes. */
export interface PlanFile {
  /** Plan name: the file name without `.yaml`, already checked for path safety. */
  readonly name: string;
  /** Repository path, `plans/<name>.yaml`. */
  readonly path: string;
  /** Git blob id of the plan file. */
  readonly blob: string;
  readonly bytes: Uint8Array;
  /** Bytes of `plans/<name>.yaml.sig`, when present. */
  readonly signature?: Uint8Array;
}

/** A file under `plans/` that was not read, and why. */
export interface RefusedPlanPath {
  /** The path as git stored it (control characters shown as `\uXXXX`). */
  readonly path: string;
  readonly reason: Reason;
  readonly message: string;
}

/** All plans at one commit. */
export interface PlanListing {
  readonly commit: string;
  /** Sorted by name. */
  readonly plans: readonly PlanFile[];
  readonly refused: readonly RefusedPlanPath[];
}

/** When a plan first appeared on the watched branch's first-parent history. */
export interface PlanIntroduction {
  readonly name: string;
  /** The first-parent commit (often the merge commit) that added `plans/<name>.yaml`. */
  readonly commit: string;
  /** Committer time of that commit, epoch ms. */
  readonly committedAt: number;
  /** 0-based merge order along the first-parent history (ties broken by name). */
  readonly order: number;
}

/** The Git side of the reconcile loop. */
export interface PlanSource {
  /**
   * Fetches the watched branch and every plan branch incrementally, within the source's own
   * deadline; `signal` (the loop's stop) ends a fetch in flight at once.
   */
  fetch(opts?: { readonly signal?: AbortSignal }): Promise<FetchResult>;
  /**
   * Plan files (and their signatures) at `commit`. `readAhead`: files likely read next at this
   * commit (the bound files of plans seen before), read with the listing when that is cheaper; a
   * hint like `prefetch`, it never changes what `readFile` answers.
   */
  listPlans(
    commit: string,
    opts?: { readonly readAhead?: readonly string[] },
  ): Promise<PlanListing>;
  /**
   * Plans added on the watched branch up to `commit`, in merge order. With `since`, only
   * commits after `since` are walked (incremental: cost follows new history, not all history).
   */
  introductions(commit: string, since?: string): Promise<readonly PlanIntroduction[]>;
  /** Bytes of a file at a commit, or `undefined` when the path does not exist there. */
  readFile(commit: string, path: string): Promise<Uint8Array | undefined>;
  /**
   * Optional: reads `paths` at `commit` at once so that the `readFile` calls which follow answer
   * from what was read. Only a hint: it never changes what `readFile` answers, and a source that
   * has no cheaper way to read several files leaves it out.
   */
  prefetch?(commit: string, paths: readonly string[]): Promise<void>;
}
