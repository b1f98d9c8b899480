/**
 * `cairn reconcile`: the long-running GitOps loop (docs/architecture.md#the-gitops-loop) against a
 * real cluster. Settings come from one validated config file, then `CAIRN_*` variables, then flags
 * (src/config.ts). Stops cleanly between steps on SIGTERM/SIGINT.
 */
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
With leaderElection set, replicas elect one leader with a Lease; only it binds and executes,
standbys keep previewing and say so on /readyz. Every git call has a deadline
(gitTimeoutSeconds); SIGTERM kills a fetch in flight and exits within seconds.
JSON logs go to stderr.

  --config FILE         configuration file (docs/deploy.md; every setting also has a flag and CAIRN_* env)
  --kubeconfig K, --talosconfig T
                        the cluster (kubeconfigPath, talosconfigPath; CAIRN_KUBECONFIG or
                        KUBECONFIG, CAIRN_TALOSCONFIG or TALOSCONFIG)
  --context NAME, --talos-context NAME
                        contexts other than the files' current ones (kubeContext, talosContext)
  --journal URL         journal (journalUrl, CAIRN_JOURNAL; default file:<stateDir>/journal.db;
                        postgres://… for a journal several replicas share)
  --evidence-cache DIR  evidence cache the plans' bound evidence manifests are checked against
                        offline (evidenceCacheDir, CAIRN_EVIDENCE_CACHE; default <stateDir>/evidence)

Plan-branch previews also read the cluster with zero writes: node versions against the first
hop, a drain plan per node and one health round (not recorded).

A process that outlived a recovery entry or a journal restore (the journal's epoch is not the
one it started in) stops acting and exits 1 naming both epochs: its supervisor restarts it.

Exit codes: 0 stopped cleanly; 1 configuration refused, or the journal's epoch superseded;
2 usage; 3 internal error.`,
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
    const { runReconcile } = await import("../app/reconcile_run.ts");
    await runReconcile({
      config: loaded.config,
      version: VERSION,
      stderr: io.stderr,
      signal: io.signal,
      describeListenFailure: listenFailure,
    });
    return EXIT.ok;
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
