/**
 * Wiring of a ComponentUpgrade run (for `cairn apply`, `cairn demo --component` and tests): the
 * plan bound in the journal, the dispatch authority (cluster identity read from a control plane's
 * Talos API at its InternalIP), health evidence over the cluster, the engine's observation
 * (`engine/component/run_component.ts`) and the report (`report/render_component.ts`) with the
 * component's playbook read from `playbooks/<component>.yaml`.
 */
import { basename, dirname, join } from "node:path";
import { gitCommitHistory } from "../adapters/git/commit_history.ts";
import { runGit } from "../adapters/git/run_git.ts";
import { parsePlaybook } from "../domain/playbook/load.ts";
import type { Playbook } from "../domain/playbook/schema.ts";
import type { ParsedPlan } from "../domain/plan/parse.ts";
import type { Clock } from "../ports/clock.ts";
import type { BoundFileSource } from "../ports/dispatch.ts";
import type { Journal } from "../ports/journal.ts";
import type { Kube } from "../ports/kube.ts";
import type { TrustRoot } from "../ports/reconcile.ts";
import type { Talos } from "../ports/talos.ts";
import { componentAuthority } from "../engine/component/component_authority.ts";
import {
  bindComponentUpgrade,
  type ComponentOutcome,
  runComponentUpgrade,
} from "../engine/component/run_component.ts";
import type { ObserveDeps } from "../engine/component/observe_delivery.ts";
import { ClusterEvidence } from "../engine/health/cluster_evidence.ts";
import { renderComponentReport } from "../report/render_component.ts";

export interface ComponentRunOptions {
  readonly journal: Journal;
  readonly cluster: { readonly kube: Kube; readonly talos: Talos };
  readonly parsed: ParsedPlan;
  readonly bytes: Uint8Array;
  readonly signatures: string;
  readonly requiredApprovals: number;
  readonly files: BoundFileSource;
  readonly trust?: TrustRoot;
  readonly owner: string;
  readonly approver: string;
  readonly firstSeenCommit: string;
  /**
   * The merge commit of the reviewed branch and the history that says whether a later revision
   * contains it (absent: a plan binding a reviewed branch cannot be seen delivered).
   */
  readonly merged?: ObserveDeps["merged"];
  /** cairn's own root (where `playbooks/` is). */
  readonly root: string;
  readonly clock: Clock;
  readonly timeoutClock?: Clock;
  readonly callTimeoutMs: (remainingMs: number) => number;
  readonly pollIntervalMs: number;
  readonly roundIntervalMs: number;
  readonly signal?: AbortSignal;
}

export interface ComponentRunResult {
  readonly outcome: ComponentOutcome;
  readonly digest: string;
  readonly report: string;
  readonly playbook?: Playbook;
}

/** Binds, authorises and observes the plan; returns its outcome and report. */
export async function runComponentPlan(o: ComponentRunOptions): Promise<ComponentRunResult> {
  const bound = await bindComponentUpgrade(o.journal, {
    parsed: o.parsed,
    bytes: o.bytes,
    signatures: o.signatures,
    firstSeenCommit: o.firstSeenCommit,
    approver: { identity: o.approver, role: "approver" },
    nowMs: o.clock.now(),
  });
  const evidence = new ClusterEvidence(o.cluster.kube, o.cluster.talos, o.timeoutClock ?? o.clock);
  try {
    const outcome = await runComponentUpgrade({
      journal: o.journal,
      plan: bound.plan,
      digest: bound.digest,
      owner: o.owner,
      authority: componentAuthority({
        plan: bound.plan,
        bytes: o.bytes,
        signatures: o.signatures,
        requiredApprovals: o.requiredApprovals,
        files: o.files,
        ...(o.trust ? { trust: o.trust } : {}),
        clock: o.clock,
        cluster: o.cluster,
        callTimeoutMs: o.callTimeoutMs,
      }),
      files: o.files,
      observe: {
        kube: o.cluster.kube,
        clock: o.clock,
        callTimeoutMs: o.callTimeoutMs,
        pollIntervalMs: o.pollIntervalMs,
        ...(o.merged ? { merged: o.merged } : {}),
      },
      evidence,
      ...(o.timeoutClock ? { timeoutClock: o.timeoutClock } : {}),
      roundIntervalMs: o.roundIntervalMs,
      ...(o.signal ? { signal: o.signal } : {}),
    });
    const playbook = await readPlaybook(o.root, bound.plan.spec.component);
    const report = renderComponentReport({
      plan: bound.plan,
      digest: bound.digest,
      outcome,
      ...(playbook ? { playbook } : {}),
    });
    return { outcome, digest: bound.digest, report, ...(playbook ? { playbook } : {}) };
  } finally {
    evidence.stop();
  }
}

/** `playbooks/<component>.yaml` parsed; absent or invalid: no playbook (the report says so). */
export async function readPlaybook(root: string, component: string): Promise<Playbook | undefined> {
  const file = `playbooks/${component}.yaml`;
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(join(root, file));
  } catch {
    return undefined;
  }
  const r = parsePlaybook(bytes, file);
  return r.ok ? r.playbook : undefined;
}

/**
 * The merge a ComponentUpgrade run by `cairn apply` is tied to: the commit given, else the commit
 * that introduced the plan file on the first-parent history of its repository's HEAD (the merge
 * of its pull request, as the reconciler finds it on the watched branch); none outside git.
 */
export async function planMerge(
  planFile: string,
  given: string | undefined,
): Promise<{ merged?: NonNullable<ObserveDeps["merged"]> }> {
  const dir = dirname(planFile);
  const history = gitCommitHistory(dir);
  if (given) return { merged: { commit: given, history } };
  const out = await runGit([
    "log",
    "--first-parent",
    "--diff-merges=first-parent",
    "--diff-filter=A",
    // --diff-merges prints the merge's patch unless told to print names; only the marked lines
    // (the commits) are read.
    "--name-only",
    "--format=%x01%H",
    "HEAD",
    "--",
    basename(planFile),
  ], { cwd: dir, env: { GIT_LITERAL_PATHSPECS: "1" } });
  const commit = out.code === 0
    ? new TextDecoder().decode(out.stdout).split("\n").filter((l) => l.startsWith("\u0001"))
      .at(-1)?.slice(1)
    : undefined;
  return commit && /^[0-9a-f]{40}$/.test(commit) ? { merged: { commit, history } } : {};
}

/** Exit code of a run: 0 only when it completed (a bump that did not land is never success). */
export function componentExitCode(end: ComponentOutcome["end"]): 0 | 1 {
  return end === "completed" ? 0 : 1;
}
