/**
 * What `cairn apply` wires: the plan file and its signatures read from disk, the approval policy
 * evaluated under the allowed signers, then the journal, the system clock, the cluster connection,
 * the working tree's bound files, the trust root read by path and the registry resolver handed to
 * the engine's dispatch check, `bindPlan` and `executePlan` (`engine/executor/run_plan.ts`). The
 * command only turns flags into this request and prints the result.
 */
import type { KubeconfigFiles } from "../adapters/kube/kubeconfig_files.ts";
import type { Clock } from "../ports/clock.ts";
import { type PhaseEvent, watchPhases } from "./phase_watch.ts";
import type { PolicyVerdict } from "../domain/trust/policy.ts";
import type { RolloutOutcome } from "../engine/executor/rollout.ts";

/** One `cairn apply`, with every path already resolved. */
export interface ApplyRequest {
  readonly file: string;
  readonly kubeconfig: KubeconfigFiles;
  readonly talosconfig: string;
  readonly kubeContext?: string;
  readonly talosContext?: string;
  readonly journalUrl: string;
  readonly signersFile: string;
  readonly approvals: number;
  /** Refused unless byte for byte the policy the plan binds. */
  readonly policyPath?: string;
  /** Registry host → URL for installer resolution. */
  readonly mirrors: Readonly<Record<string, string>>;
  /** A ComponentUpgrade's merge commit (default: what introduced the plan in its repository). */
  readonly mergedCommit?: string;
  /** Where the executor's log lines go (one JSON line each). */
  readonly writeLog: (line: string) => void;
  readonly signal: AbortSignal;
  /** Told every phase the executor records (a progress display); absent: nothing is told. */
  readonly onPhase?: (e: PhaseEvent) => void;
}

/** Refused before anything was opened (the approval policy), or the rollout's outcome. */
export type ApplyResult =
  | { readonly kind: "unapproved"; readonly verdict: PolicyVerdict }
  | { readonly kind: "ran"; readonly outcome: RolloutOutcome }
  /** A ComponentUpgrade observed (nothing mutated): how it ended and its report. */
  | {
    readonly kind: "component";
    readonly end: string;
    readonly ok: boolean;
    readonly report: string;
  };

/** Verifies the approval, then runs the plan through the dispatch check and the executor. */
export async function applyPlan(o: ApplyRequest): Promise<ApplyResult> {
  const { readNamedFile, readCappedFile, MAX_BOUND_FILE_BYTES } = await import(
    "../adapters/repo/bound_file_reader.ts"
  );
  const bytes = await readNamedFile(o.file, { what: "plan", maxBytes: MAX_BOUND_FILE_BYTES });
  const sigBytes = await readNamedFile(`${o.file}.sig`, {
    what: "signatures",
    maxBytes: MAX_BOUND_FILE_BYTES,
    optional: true,
  });
  const signatures = sigBytes === undefined ? undefined : new TextDecoder().decode(sigBytes);
  const { parsePlan } = await import("../domain/plan/parse.ts");
  const parsed = await parsePlan(bytes, { file: o.file });
  const { parseAllowedSigners } = await import("../domain/trust/allowed_signers.ts");
  const { evaluatePolicy } = await import("../domain/trust/policy.ts");
  const verdict = await evaluatePolicy({
    plan: bytes,
    signatures,
    signers: parseAllowedSigners(
      new TextDecoder().decode(await readCappedFile(o.signersFile, MAX_BOUND_FILE_BYTES)),
      o.signersFile,
    ),
    author: parsed.plan.metadata.author,
    requiredApprovals: o.approvals,
    atMs: Date.now(),
  });
  if (!verdict.ok) return { kind: "unapproved", verdict };
  const m = await import("./run_plan.ts");
  const run = await import("../engine/executor/run_plan.ts");
  if (o.policyPath !== undefined) await m.requireBoundPolicy(o.policyPath, parsed.plan);
  const { openJournal } = await import("../adapters/journal/by_url.ts");
  const { cryptoIdSource } = await import("../adapters/journal/ids.ts");
  const { SystemClock } = await import("../adapters/clock/system_clock.ts");
  const { JsonLogger } = await import("../adapters/log/json_logger.ts");
  const { workingTreeBoundFiles } = await import("../adapters/repo/bound_file_reader.ts");
  const { registryInstallerResolver } = await import("../adapters/oci/installer_resolver.ts");
  const { fileTrustRoot } = await import("./reconcile_wiring.ts");
  const clock = new SystemClock();
  const journal = await openJournal({
    url: o.journalUrl,
    ids: cryptoIdSource(),
    nowMs: clock.now(),
  });
  const cluster = await m.connectCluster({
    kubeconfigPath: o.kubeconfig,
    talosconfigPath: o.talosconfig,
    ...(o.kubeContext ? { kubeContext: o.kubeContext } : {}),
    ...(o.talosContext ? { talosContext: o.talosContext } : {}),
  });
  const owner = `ctl_apply_${crypto.randomUUID().slice(0, 8)}`;
  const authority = {
    bytes,
    signatures: signatures ?? "",
    requiredApprovals: o.approvals,
    files: workingTreeBoundFiles(o.file),
    trust: fileTrustRoot(o.signersFile),
    installers: registryInstallerResolver({ mirrors: o.mirrors, timeoutMs: 30_000 }),
  };
  try {
    if (parsed.plan.kind === "ComponentUpgrade") {
      // Delivered by Flux, observed by cairn: its own run (app/component_run.ts), no executor.
      const c = await import("./component_run.ts");
      const { fileURLToPath } = await import("node:url");
      const r = await c.runComponentPlan({
        journal,
        cluster,
        parsed,
        bytes,
        signatures: signatures ?? "",
        requiredApprovals: o.approvals,
        files: authority.files,
        trust: authority.trust,
        owner,
        approver: verdict.approvers.join(",") || "policy",
        firstSeenCommit: "apply",
        ...(await c.planMerge(o.file, o.mergedCommit)),
        root: fileURLToPath(new URL("../..", import.meta.url)),
        clock,
        callTimeoutMs: (ms) => ms,
        pollIntervalMs: 10_000,
        roundIntervalMs: 30_000,
        signal: o.signal,
      });
      const end = r.outcome.end;
      return { kind: "component", end, ok: c.componentExitCode(end) === 0, report: r.report };
    }
    const refused = await run.authorizeBeforeBind({
      journal,
      parsed,
      authority,
      cluster,
      clock,
      owner,
      callTimeoutMs: (ms) => ms,
    });
    if (refused) return { kind: "ran", outcome: refused };
    const binding = {
      parsed,
      bytes,
      signatures: signatures ?? "",
      firstSeenCommit: "apply",
      approver: {
        identity: verdict.approvers.join(",") || "policy",
        role: "approver" as const,
      },
      nowMs: clock.now(),
    };
    const runOptions = {
      journal: o.onPhase
        ? watchPhases(
          journal,
          // A ComponentUpgrade returned above: every kind left has nodes.
          parsed.plan.spec.nodes.map((n) => n.name),
          o.onPhase,
        )
        : journal,
      cluster,
      authority,
      clock,
      log: new JsonLogger({ write: o.writeLog, clock }),
      owner,
      callTimeoutMs: (ms: number) => ms,
      pollIntervalMs: 5_000,
      // A real clock: the drain reacts to pod and budget events (engine/drain_run.ts).
      drainWake: "events" as const,
      roundIntervalMs: 30_000,
      signal: o.signal,
    };
    if (parsed.plan.kind === "KubernetesUpgrade") {
      // A KubernetesUpgrade has its own executor (engine/k8s_upgrade/run.ts).
      const k8s = await import("../engine/k8s_upgrade/run.ts");
      const bound = await k8s.bindKubernetesUpgrade(journal, binding);
      return { kind: "ran", outcome: await k8s.executeKubernetesUpgrade({ ...runOptions, bound }) };
    }
    if (parsed.plan.kind === "ConfigApply") {
      // A ConfigApply has its own executor (engine/config_apply/run_config_apply.ts).
      const ca = await import("../engine/config_apply/run_config_apply.ts");
      const bound = await ca.bindConfigApply(journal, binding);
      return { kind: "ran", outcome: await ca.executeConfigApply({ ...runOptions, bound }) };
    }
    const bound = await run.bindPlan(journal, binding);
    const outcome = await run.executePlan({ ...runOptions, bound });
    return { kind: "ran", outcome };
  } finally {
    cluster.close();
    await journal.close();
  }
}

/**
 * The wall clock the command's phase display measures elapsed time against (the run itself
 * opens its own, above); loaded lazily like every adapter of a run.
 */
export async function applyDisplayClock(): Promise<Clock> {
  const { SystemClock } = await import("../adapters/clock/system_clock.ts");
  return new SystemClock();
}
