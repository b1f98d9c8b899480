/**
 * What `cairn reconcile` wires once its configuration is valid: the wall clock, JSON logs,
 * metrics, the journal, the cluster connection, the Git-driven reconciler
 * (`app/reconcile_wiring.ts`) and the ops server, then runs the loop until the signal stops it.
 * The command only turns config, env and flags into a `Config` and maps failures to exit codes.
 */
import { hostname } from "node:os";
import { join } from "node:path";
import type { LogLevel } from "../ports/logger.ts";

/**
 * The settings the loop runs with: the validated configuration (`config.ts`'s `Config` is one),
 * named here field by field because app/ does not import the entry points' modules.
 */
export interface ReconcileSettings {
  readonly remote: string;
  readonly branch: string;
  readonly planBranchesGlob: string;
  readonly reportBranch: string;
  readonly reportAuthor: Readonly<{ name: string; email: string }>;
  readonly pollIntervalSeconds: number;
  readonly allowedSignersPath: string;
  readonly requiredApprovals: number;
  readonly journalUrl: string;
  readonly stateDir: string;
  readonly evidenceCacheDir: string;
  readonly kubeconfigPath: string;
  readonly talosconfigPath: string;
  readonly kubeContext?: string | undefined;
  readonly talosContext?: string | undefined;
  readonly listen: Readonly<{ host: string; port: number }>;
  readonly hookSecretPath?: string | undefined;
  readonly logLevel: LogLevel;
}

export interface ReconcileRunRequest {
  readonly config: ReconcileSettings;
  /** The version the metrics report. */
  readonly version: string;
  /** JSON log lines go here. */
  readonly stderr: (text: string) => void;
  /** Stops the loop cleanly between steps (SIGTERM/SIGINT). */
  readonly signal: AbortSignal;
  /** How a failure to listen reads to the user (the CLI frame owns that wording). */
  readonly describeListenFailure: (e: unknown, at: ReconcileSettings["listen"]) => unknown;
}

/** Opens everything, runs the loop until `signal`, closes what it opened. */
export async function runReconcile(req: ReconcileRunRequest): Promise<void> {
  const { config } = req;
  const { SystemClock } = await import("../adapters/clock/system_clock.ts");
  const { JsonLogger } = await import("../adapters/log/json_logger.ts");
  const { createCairnMetrics } = await import("../adapters/metrics/cairn_metrics.ts");
  const { cryptoIdSource, openJournal } = await import("../adapters/journal/by_url.ts");
  const { startOpsServer } = await import("../adapters/http/ops_server.ts");
  const { connectCluster } = await import("./run_plan.ts");
  const { registryInstallerResolver } = await import("../adapters/oci/installer_resolver.ts");
  const { createReconciler, HookWakeup, readHookSecret } = await import("./reconcile_wiring.ts");
  // Before anything is opened: an unreadable or empty secret refuses to start. No secret
  // configured: no hook endpoint (polling only), never an unauthenticated one.
  const hookSecret = config.hookSecretPath
    ? await readHookSecret(config.hookSecretPath)
    : undefined;
  const clock = new SystemClock();
  const log = new JsonLogger({ write: req.stderr, clock, level: config.logLevel });
  const metrics = createCairnMetrics({ version: req.version });
  await Deno.mkdir(config.stateDir, { recursive: true });
  const journal = await openJournal({
    url: config.journalUrl,
    ids: cryptoIdSource(),
    nowMs: clock.now(),
  });
  const cluster = await connectCluster({
    kubeconfigPath: config.kubeconfigPath,
    talosconfigPath: config.talosconfigPath,
    ...(config.kubeContext ? { kubeContext: config.kubeContext } : {}),
    ...(config.talosContext ? { talosContext: config.talosContext } : {}),
  });
  const wakeup = new HookWakeup(req.signal);
  try {
    const reconciler = await createReconciler({
      git: {
        remote: config.remote,
        cacheDir: join(config.stateDir, "repo-cache"),
        branch: config.branch,
        reportBranch: config.reportBranch,
        reportAuthor: config.reportAuthor,
        clock,
        pendingReportsDir: join(config.stateDir, "pending-reports"),
      },
      executor: {
        journal,
        cluster,
        clock,
        log,
        owner: `ctl_${hostname()}_${Deno.pid}`,
        callTimeoutMs: (ms) => ms,
        pollIntervalMs: 5_000,
        roundIntervalMs: 30_000,
        metrics,
        installers: registryInstallerResolver({ timeoutMs: 30_000 }),
      },
      allowedSignersPath: config.allowedSignersPath,
      requiredApprovals: config.requiredApprovals,
      pollIntervalMs: config.pollIntervalSeconds * 1000,
      planBranchesGlob: config.planBranchesGlob,
      evidenceCacheDir: config.evidenceCacheDir,
      signal: req.signal,
      wakeup,
    });
    const ops = await startOpsServer({
      host: config.listen.host,
      port: config.listen.port,
      metrics,
      readiness: () => reconciler.readiness(),
      ...(hookSecret ? { hookSecret, onGitHook: () => wakeup.nudge() } : {}),
    }).catch((e) => {
      throw req.describeListenFailure(e, config.listen);
    });
    log.info("reconciler started", { url: ops.url, branch: config.branch });
    try {
      await reconciler.run();
    } finally {
      await ops.close();
    }
  } finally {
    cluster.close();
    await journal.close();
  }
}
