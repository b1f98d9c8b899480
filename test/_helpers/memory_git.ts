/**
 * The reconcile loop's Git side in memory: a `PlanSource` over commits kept in maps (first-parent
 * history, branches, `plans/<name>.yaml` + `.sig`), and a `ReportSink` that keeps every publish.
 * For reconciler unit tests; `adapters/git/` is tested against real git elsewhere.
 */
import { executionReportPath, previewReportPath } from "../../src/adapters/git/plan_paths.ts";
import { sha256Hex } from "../../src/domain/plan/digest.ts";
import type {
  BranchHead,
  FetchResult,
  PlanFile,
  PlanIntroduction,
  PlanListing,
  PlanSource,
  RefusedPlanPath,
} from "../../src/ports/plan_source.ts";
import type { PublishResult, ReportDocument, ReportSink } from "../../src/ports/report_sink.ts";
import type { FileContent } from "../../src/domain/review/judge.ts";
import type { GitOpsTree } from "../../src/ports/gitops_tree.ts";

interface Commit {
  readonly id: string;
  readonly parent: string | undefined;
  readonly files: ReadonlyMap<string, Uint8Array>;
  readonly committedAt: number;
}

const PLAN = /^plans\/([a-z0-9][a-z0-9.-]*)\.yaml$/;

export class MemoryPlanSource implements PlanSource {
  readonly #commits = new Map<string, Commit>();
  readonly #tips = new Map<string, string>();
  #fetched = new Map<string, string>();
  #seq = 0;
  /** Plans larger than this are refused unread (`PlanTooLarge`), as the Git source does. */
  maxPlanBytes = Infinity;

  constructor(readonly watchedBranch: string, private readonly now: () => number) {}

  /** Commits `files` (string, bytes, or null to delete) on `branch`; returns the commit id. */
  async commit(
    branch: string,
    files: Readonly<Record<string, string | Uint8Array | null>>,
    from?: string,
  ): Promise<string> {
    const parent = this.#tips.get(branch) ?? (from ? this.#tips.get(from) : undefined);
    const next = new Map(parent ? this.#commits.get(parent)!.files : []);
    for (const [path, v] of Object.entries(files)) {
      if (v === null) next.delete(path);
      else next.set(path, typeof v === "string" ? new TextEncoder().encode(v) : v);
    }
    const id = (await sha256Hex(new TextEncoder().encode(`commit ${++this.#seq}`))).slice(0, 40);
    this.#commits.set(id, { id, parent, files: next, committedAt: this.now() });
    this.#tips.set(branch, id);
    return id;
  }

  fetch(): Promise<FetchResult> {
    const watched = this.#tips.get(this.watchedBranch);
    if (!watched) return Promise.reject(new Error(`no branch ${this.watchedBranch}`));
    const changed = [...this.#tips].filter(([b, c]) => this.#fetched.get(b) !== c).map(([b]) => b);
    this.#fetched = new Map(this.#tips);
    const branches: BranchHead[] = [...this.#tips].filter(([b]) => b !== this.watchedBranch)
      .map(([branch, commit]) => ({ branch, commit }))
      .sort((a, b) => a.branch.localeCompare(b.branch));
    return Promise.resolve({
      watched: { branch: this.watchedBranch, commit: watched },
      branches,
      changed: changed.sort(),
    });
  }

  async listPlans(commit: string): Promise<PlanListing> {
    const c = this.#get(commit);
    const plans: PlanFile[] = [];
    const refused: RefusedPlanPath[] = [];
    for (const [path, bytes] of [...c.files].sort(([a], [b]) => a.localeCompare(b))) {
      const m = PLAN.exec(path);
      if (!m) continue;
      if (bytes.length > this.maxPlanBytes) {
        const message = `the file has ${bytes.length} bytes (limit ${this.maxPlanBytes})`;
        refused.push({ path, reason: "PlanTooLarge", message });
        continue;
      }
      const signature = c.files.get(`${path}.sig`);
      plans.push({
        name: m[1]!,
        path,
        blob: (await sha256Hex(bytes)).slice(0, 40),
        bytes,
        ...(signature ? { signature } : {}),
      });
    }
    return { commit, plans, refused };
  }

  introductions(commit: string, since?: string): Promise<readonly PlanIntroduction[]> {
    const chain: Commit[] = [];
    for (
      let c: Commit | undefined = this.#get(commit);
      c;
      c = c.parent ? this.#get(c.parent) : undefined
    ) {
      chain.unshift(c);
    }
    const seen = new Set<string>();
    const intros: PlanIntroduction[] = [];
    let sinceReached = since === undefined;
    for (const c of chain) {
      for (const path of [...c.files.keys()].sort()) {
        const m = PLAN.exec(path);
        if (!m || seen.has(m[1]!)) continue;
        seen.add(m[1]!);
        if (sinceReached) {
          intros.push({
            name: m[1]!,
            commit: c.id,
            committedAt: c.committedAt,
            order: seen.size - 1,
          });
        }
      }
      if (c.id === since) sinceReached = true;
    }
    return Promise.resolve(intros);
  }

  readFile(commit: string, path: string): Promise<Uint8Array | undefined> {
    return Promise.resolve(this.#get(commit).files.get(path));
  }

  #get(commit: string): Commit {
    const c = this.#commits.get(commit);
    if (!c) throw new Error(`no commit ${commit}`);
    return c;
  }

  /** The same commits as a `GitOpsTree` (first-parent merge base), for branch reviews. */
  gitOpsTree(): GitOpsTree {
    const ancestors = (id: string): string[] => {
      const out: string[] = [];
      for (
        let c: Commit | undefined = this.#get(id);
        c;
        c = c.parent ? this.#get(c.parent) : undefined
      ) {
        out.push(c.id);
      }
      return out;
    };
    return {
      resolve: (rev) => {
        const id = this.#tips.get(rev) ?? (this.#commits.has(rev) ? rev : undefined);
        return id ? Promise.resolve(id) : Promise.reject(new Error(`no revision ${rev}`));
      },
      mergeBase: (a, b) => {
        const mine = new Set(ancestors(a));
        return Promise.resolve(ancestors(b).find((id) => mine.has(id)));
      },
      changedPaths: (from, to) => {
        const a = this.#get(from).files, b = this.#get(to).files;
        const paths = new Set([...a.keys(), ...b.keys()]);
        const same = (x?: Uint8Array, y?: Uint8Array) =>
          x !== undefined && y !== undefined && x.length === y.length &&
          x.every((v, i) => v === y[i]);
        return Promise.resolve([...paths].filter((p) => !same(a.get(p), b.get(p))).sort());
      },
      readFiles: (commit, paths) => {
        const files = this.#get(commit).files;
        const out = new Map<string, FileContent>();
        for (const p of paths) {
          const bytes = files.get(p);
          out.set(
            p,
            bytes ? { kind: "text", text: new TextDecoder().decode(bytes) } : { kind: "missing" },
          );
        }
        return Promise.resolve(out);
      },
    };
  }
}

/** One publish the sink received. */
export interface Published {
  readonly message: string;
  readonly documents: readonly ReportDocument[];
}

/** Keeps the report branch's files and every commit made to it. */
export class MemoryReportSink implements ReportSink {
  readonly files = new Map<string, string>();
  readonly commits: Published[] = [];

  publish(documents: readonly ReportDocument[], message: string): Promise<PublishResult> {
    // The same file layout the Git sink uses (one preview per branch).
    const path = (d: ReportDocument) =>
      d.kind === "execution"
        ? executionReportPath(d.plan)
        : previewReportPath(d.plan, d.branch) ?? `invalid branch ${d.branch}`;
    if (documents.every((d) => this.files.get(path(d)) === d.markdown)) {
      return Promise.resolve({
        status: "unchanged",
        commit: `c${this.commits.length}`,
        attempts: 0,
        durationMs: 0,
      });
    }
    for (const d of documents) this.files.set(path(d), d.markdown);
    this.commits.push({ message, documents });
    return Promise.resolve({
      status: "committed",
      commit: `c${this.commits.length}`,
      attempts: 1,
      durationMs: 0,
    });
  }
}
