/**
 * `cairn reconcile`: the long-running GitOps loop (docs/architecture.md#the-gitops-loop) against a
 * real cluster. Settings come from one validated config file, then `CAIRN_*` variables, then flags
 * (src/config.ts). Stops cleanly between steps on SIGTERM/SIGINT.
 */
import { hostname } from "node:os";
import { join } from "node:path";
import { CONFIG_FLAG_OPTIONS, MAX_CONFIG_BYTES, safeLoadConfig } from "../config.ts";
import { CairnError } from "../domain/errors.ts";
import { type Command, EXIT, reportProblems, UsageError } from "./command.ts";
import { listenFailure } from "./failure.ts";

const VERSION = "0.1.0";

export const command: Command = {
  path: ["reconcile"],
  summary: "Watch a Git remote: preview plan branches, execute merged plans, commit reports",
  usage: "--config FILE [setting flags]",
  help: `Runs until SIGTERM. Fetches the watched branch and plan branches every
pollIntervalSeconds and on POST /hooks/git; verifies every plan's signatures against the
allowed_signers trust root (by path, never from the repository); binds a merged plan's name to
its digest on first sight and refuses any later change (PlanChangedAfterApproval); writes
reports/<plan>/preview/<branch>.md per plan branch; executes merged plans one per cluster in
merge order; commits reports/<plan>/execution.md at milestones, all on the report branch
(reportBranch, default cairn-reports, fast-forward only). Each plan is gated by the health
policy it binds (spec.healthPolicy, digest-verified on the watched branch); there is no
operator-wide policy. Before a run and before each node's commitment every authorising check
runs again on current evidence (plan checks, bound-file digests, expiry, the trust root as it is
now, the cluster's own name); a refusal is journaled and reported, and nothing is sent. Serves /metrics, /healthz, /readyz.
JSON logs go to stderr.

  --config FILE         configuration file (see docs; every setting also has a flag and CAIRN_* env)
  --kubeconfig K, --talosconfig T
                        the cluster (kubeconfigPath, talosconfigPath; CAIRN_KUBECONFIG or
                        KUBECONFIG, CAIRN_TALOSCONFIG or TALOSCONFIG)
  --context NAME, --talos-context NAME
                        contexts other than the files' current ones (kubeContext, talosContext)
  --journal URL         journal (journalUrl, CAIRN_JOURNAL; default file:<stateDir>/journal.db)
  --evidence-cache DIR  evidence cache the plans' bound evidence manifests are checked against
                        offline (evidenceCacheDir, CAIRN_EVIDENCE_CACHE; default <stateDir>/evidence)

Plan-branch previews also read the cluster with zero writes: node versions against the first
hop, a drain plan per node and one health round (not recorded).

Exit codes: 0 stopped cleanly; 1 configuration refused; 2 usage; 3 internal error.`,
  options: { ...CONFIG_FLAG_OPTIONS, "health-policy": { type: "string" } },
  async run(args, io) {
    // Before the configuration is read: an operator reaching for the removed override learns
    // why it is gone, not that some other setting is missing.
    if (args.values["health-policy"] !== undefined || io.env["CAIRN_HEALTH_POLICY"]) {
      throw new UsageError(
        "--health-policy / CAIRN_HEALTH_POLICY are gone: each plan is gated by the health " +
          "policy it binds (spec.healthPolicy), verified by its digest",
      );
    }
    const configPath = args.values["config"] as string | undefined;
    const file = configPath ? { text: await readConfig(configPath), name: configPath } : undefined;
    // Every configuration problem at once: fixing them one run at a time wastes the user's time.
    const loaded = safeLoadConfig({ ...(file ? { file } : {}), env: io.env, flags: args.values });
    if (!loaded.ok) return reportProblems(io, loaded.problems);
    const config = loaded.config;
    const { SystemClock } = await import("../adapters/clock/system_clock.ts");
    const { JsonLogger } = await import("../adapters/log/json_logger.ts");
    const { createCairnMetrics } = await import("../adapters/metrics/cairn_metrics.ts");
    const { cryptoIdSource, openJournal } = await import("../adapters/journal/libsql_journal.ts");
    const { startOpsServer } = await import("../adapters/http/ops_server.ts");
    const { connectCluster } = await import("../app/run_plan.ts");
    const { registryInstallerResolver } = await import("../adapters/oci/installer_resolver.ts");
    const { createReconciler, HookWakeup, readHookSecret } = await import(
      "../app/reconcile_wiring.ts"
    );
    // Before anything is opened: an unreadable or empty secret refuses to start. No secret
    // configured: no hook endpoint (polling only), never an unauthenticated one.
    const hookSecret = config.hookSecretPath
      ? await readHookSecret(config.hookSecretPath)
      : undefined;
    const clock = new SystemClock();
    const log = new JsonLogger({ write: io.stderr, clock, level: config.logLevel });
    const metrics = createCairnMetrics({ version: VERSION });
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
    const wakeup = new HookWakeup(io.signal);
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
        signal: io.signal,
        wakeup,
      });
      const ops = await startOpsServer({
        host: config.listen.host,
        port: config.listen.port,
        metrics,
        readiness: () => reconciler.readiness(),
        ...(hookSecret ? { hookSecret, onGitHook: () => wakeup.nudge() } : {}),
      }).catch((e) => {
        throw listenFailure(e, config.listen);
      });
      log.info("reconciler started", { url: ops.url, branch: config.branch });
      try {
        await reconciler.run();
      } finally {
        await ops.close();
      }
      return EXIT.ok;
    } finally {
      cluster.close();
      await journal.close();
    }
  },
};

async function readConfig(path: string): Promise<string> {
  try {
    const info = await Deno.stat(path);
    if (info.size > MAX_CONFIG_BYTES) {
      throw new CairnError({
        reason: "ConfigInvalid",
        message: `${path} is ${info.size} bytes; a config is at most ${MAX_CONFIG_BYTES}`,
      });
    }
    return await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof CairnError) throw e;
    throw new CairnError({
      reason: "ConfigInvalid",
      message: `cannot read ${path}: ${e instanceof Error ? e.message : String(e)}`,
    });
  }
}
