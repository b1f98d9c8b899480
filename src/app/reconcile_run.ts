/**
 * What `cairn reconcile` wires once its configuration is valid: the wall clock, JSON logs,
 * metrics, the journal, the cluster connection, the Git-driven reconciler
 * (`app/reconcile_wiring.ts`) and the ops server, then runs the loop until the signal stops it.
 * The command only turns config, env and flags into a `Config` and maps failures to exit codes.
 */
import type { KubeconfigFiles } from "../adapters/kube/kubeconfig_files.ts";
import { hostname } from "node:os";
import { join } from "node:path";
import type { Clock } from "../ports/clock.ts";
import type { WindowSpec } from "../domain/ops/window.ts";
import { HttpAlertmanager } from "../adapters/alertmanager/http_alertmanager.ts";
import { WebhookNotifier } from "../adapters/notify/webhook_notifier.ts";
import type { Logger, LogLevel } from "../ports/logger.ts";

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
  readonly kubeconfigPath: KubeconfigFiles;
  readonly talosconfigPath: string;
  readonly kubeContext?: string | undefined;
  readonly talosContext?: string | undefined;
  readonly listen: Readonly<{ host: string; port: number }>;
  readonly hookSecretPath?: string | undefined;
  readonly logLevel: LogLevel;
  readonly gitTimeoutSeconds: number;
  readonly leaderElection?: LeaderElectionSettings | undefined;
  readonly selfHosting?: SelfHostingSettings | undefined;
  /** The cluster's default maintenance windows (docs/operating.md#maintenance-windows). */
  readonly maintenanceWindows?: readonly WindowSpec[] | undefined;
  /** Alertmanager's base URL: veto bindings and expected-noise silences. */
  readonly alertmanagerUrl?: string | undefined;
  /** Registry host → base URL serving it, for the installer checks (config `registryMirrors`). */
  readonly registryMirrors?: Readonly<Record<string, string>> | undefined;
  /** Webhook notifications (docs/operating.md#notifications). */
  readonly notifications?:
    | ReadonlyArray<{ readonly url: string; readonly format: "json" | "slack" | "matrix" }>
    | undefined;
}

/** Where this replica runs on the cluster it upgrades (config `selfHosting`). */
export interface SelfHostingSettings {
  readonly podNamespace: string;
  readonly podName: string;
  readonly replicaSelector: string;
}

/** Lease election among replicas (config `leaderElection`). */
export interface LeaderElectionSettings {
  readonly namespace: string;
  readonly name: string;
  readonly identity?: string | undefined;
  readonly leaseDurationSeconds: number;
  readonly renewDeadlineSeconds: number;
  readonly retryPeriodSeconds: number;
}

/**
 * After SIGTERM, git network calls in flight get this long to finish (a report push usually
 * does), then they are killed: a stuck fetch never holds a shutdown past it.
 */
export const GIT_STOP_GRACE_MS = 3_000;

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
  const { selfHostingGuard } = await import("../engine/leadership/self_hosting.ts");
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
  const gitStop = graceAfter(req.signal, GIT_STOP_GRACE_MS);
  let election: Awaited<ReturnType<typeof startElection>> | undefined;
  try {
    election = config.leaderElection
      ? await startElection(config, clock, log, () => wakeup.nudge())
      : undefined;
    const reconciler = await createReconciler({
      git: {
        remote: config.remote,
        cacheDir: join(config.stateDir, "repo-cache"),
        branch: config.branch,
        reportBranch: config.reportBranch,
        reportAuthor: config.reportAuthor,
        clock,
        pendingReportsDir: join(config.stateDir, "pending-reports"),
        timeoutMs: config.gitTimeoutSeconds * 1000,
        stop: gitStop.signal,
      },
      executor: {
        journal,
        cluster,
        clock,
        log,
        owner: `ctl_${hostname()}_${Deno.pid}`,
        callTimeoutMs: (ms) => ms,
        pollIntervalMs: 5_000,
        // A real clock: the drain reacts to pod and budget events (engine/drain_run.ts).
        drainWake: "events",
        roundIntervalMs: 30_000,
        metrics,
        installers: registryInstallerResolver({
          ...(config.registryMirrors ? { mirrors: config.registryMirrors } : {}),
          timeoutMs: 30_000,
        }),
        ...operatingSettings(config),
        ...(config.notifications?.length
          ? { notifier: new WebhookNotifier(config.notifications, log) }
          : {}),
        ...(election && config.selfHosting
          ? {
            selfHosting: selfHostingGuard({
              kube: cluster.kube,
              self: {
                namespace: config.selfHosting.podNamespace,
                name: config.selfHosting.podName,
              },
              replicaSelector: config.selfHosting.replicaSelector,
              leadership: election.elector,
              log,
              timeoutMs: 10_000,
            }),
          }
          : {}),
      },
      allowedSignersPath: config.allowedSignersPath,
      requiredApprovals: config.requiredApprovals,
      pollIntervalMs: config.pollIntervalSeconds * 1000,
      planBranchesGlob: config.planBranchesGlob,
      evidenceCacheDir: config.evidenceCacheDir,
      signal: req.signal,
      wakeup,
      ...(election ? { leadership: election.elector } : {}),
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
    // The Lease is handed over only once this replica's executions have stopped.
    await election?.stop();
    gitStop.clear();
    cluster.close();
    await journal.close();
  }
}

/** A signal aborted `ms` after `signal` is; `clear` drops the pending timer. */
function graceAfter(signal: AbortSignal, ms: number): { signal: AbortSignal; clear(): void } {
  const grace = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const start = () => timer = setTimeout(() => grace.abort(signal.reason), ms);
  if (signal.aborted) start();
  else signal.addEventListener("abort", start, { once: true });
  return {
    signal: grace.signal,
    clear: () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", start);
    },
  };
}

/**
 * Opens the Lease client and starts the election rounds. Each process is its own candidate: the
 * configured identity (default the host name, which is the pod name) plus a random suffix.
 */
async function startElection(
  config: ReconcileSettings,
  clock: Clock,
  log: Logger,
  onChange: () => void,
) {
  const le = config.leaderElection!;
  const { createLeaseClient } = await import("../adapters/kube/lease_client.ts");
  const { LeaderElector } = await import("../engine/leadership/elector.ts");
  const { checkElectionConfig } = await import("../engine/leadership/election.ts");
  const { CairnError } = await import("../domain/errors.ts");
  const suffix = Array.from(
    crypto.getRandomValues(new Uint8Array(4)),
    (b) => b.toString(16).padStart(2, "0"),
  ).join("");
  const electionConfig = {
    identity: `${le.identity ?? hostname()}_${suffix}`,
    leaseDurationMs: le.leaseDurationSeconds * 1000,
    renewDeadlineMs: le.renewDeadlineSeconds * 1000,
    retryPeriodMs: le.retryPeriodSeconds * 1000,
  };
  const bad = checkElectionConfig(electionConfig);
  if (bad) throw new CairnError({ reason: "ConfigInvalid", message: `leaderElection: ${bad}` });
  const store = await createLeaseClient({
    kubeconfigPath: config.kubeconfigPath,
    ...(config.kubeContext ? { context: config.kubeContext } : {}),
    namespace: le.namespace,
    name: le.name,
  });
  const elector = new LeaderElector({ store, clock, config: electionConfig, log, onChange });
  // The first round before the loop starts: a replica knows its part before its first cycle.
  await elector.round();
  const stopper = new AbortController();
  const running = elector.run(stopper.signal);
  return {
    elector,
    async stop() {
      stopper.abort();
      await running;
    },
  };
}

/** The cluster default windows and the Alertmanager (docs/operating.md), as configured. */
function operatingSettings(config: ReconcileSettings) {
  const operating = {
    ...(config.maintenanceWindows ? { defaultWindows: config.maintenanceWindows } : {}),
    ...(config.alertmanagerUrl
      ? { alertmanager: new HttpAlertmanager(config.alertmanagerUrl) }
      : {}),
  };
  return Object.keys(operating).length ? { operating } : {};
}
