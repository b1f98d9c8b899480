/**
 * `cairn apply FILE`: runs one signed TalosUpgrade plan now with the system clock. Signatures and
 * the approval policy are verified first; then every authorising check runs on current evidence
 * (the dispatch check: plan checks, bound-file digests, expiry, the trust root as it is now, the
 * cluster's own name, installer resolution), again before each node's commitment. A refusal is
 * journaled and sends nothing. The reconciler calls the same executor (engine/executor/run_plan.ts).
 */
import { resolve } from "node:path";
import {
  type Command,
  EXIT,
  OUTPUT_OPTION,
  parseRegistryMirrors,
  printJson,
  UsageError,
  wantsJson,
} from "./command.ts";
import { CairnError } from "../domain/errors.ts";
import type { RolloutOutcome } from "../engine/executor/rollout.ts";

export const command: Command = {
  path: ["apply"],
  summary: "Verify a signed plan's approval and run it now",
  usage: "FILE --kubeconfig K --talosconfig T --journal URL --allowed-signers F " +
    "[--approvals N] [--health-policy P] [--output json]",
  help: `
Verifies FILE.sig against allowed_signers and the approval policy (the author plus N approvers),
then re-runs every check that authorises it on current evidence: the checks of 'cairn plan
check' over the bound files as they are now in the repository (catalogue, health policy and
evidence manifest digests, catalogue freshness, expiry, versions), the signatures under
allowed_signers as read now, the cluster's own name (Talos Infos.cluster.talos.dev) against
metadata.cluster, and each hop's installer resolved for the plan's platform against its pinned
digest. The same check runs again before each node's commitment. A refusal is recorded in the
journal and nothing is sent.

Then runs the plan node by node: intent, attempt and response for every mutation in the journal,
fresh health rounds of the plan's bound health policy before progressing, and an honest
classification of each node step.

  --health-policy P       optional; refused unless P is byte for byte the policy the plan binds
  --registry-mirror H=URL resolve installer references naming registry host H at URL (repeatable)

Exit codes: 0 every node completed; 1 refused, or the rollout halted.`,
  options: {
    kubeconfig: { type: "string" },
    talosconfig: { type: "string" },
    journal: { type: "string" },
    "allowed-signers": { type: "string" },
    approvals: { type: "string", default: "1" },
    "health-policy": { type: "string" },
    "registry-mirror": { type: "string", multiple: true },
    ...OUTPUT_OPTION,
  },
  positionals: { min: 1, max: 1 },
  async run(args, io) {
    const report = (out: RolloutOutcome) => {
      if (wantsJson(args)) printJson(io, out);
      else {
        for (const n of out.nodes) io.stdout(`${n.node} ${n.state} ${n.reason}: ${n.detail}\n`);
        io.stdout(`rollout ${out.state}\n`);
      }
      return out.state === "completed" ? EXIT.ok : EXIT.refused;
    };
    const need = (k: string) => {
      const v = args.values[k];
      if (typeof v !== "string") throw new UsageError(`--${k} is required`);
      return v;
    };
    const file = resolve(io.cwd, args.positionals[0]!);
    const [kubeconfig, talosconfig, journalUrl, signersFile] = [
      need("kubeconfig"),
      need("talosconfig"),
      need("journal"),
      need("allowed-signers"),
    ];
    const approvals = Number(args.values["approvals"]);
    if (!Number.isSafeInteger(approvals) || approvals < 0) {
      throw new UsageError("--approvals must be a non-negative integer");
    }
    const bytes = await read(file);
    const signatures = await Deno.readTextFile(`${file}.sig`).catch(() => undefined);
    const { parsePlan } = await import("../domain/plan/parse.ts");
    const parsed = await parsePlan(bytes, { file });
    const { parseAllowedSigners } = await import("../domain/trust/allowed_signers.ts");
    const { evaluatePolicy } = await import("../domain/trust/policy.ts");
    const verdict = await evaluatePolicy({
      plan: bytes,
      signatures,
      signers: parseAllowedSigners(new TextDecoder().decode(await read(signersFile)), signersFile),
      author: parsed.plan.metadata.author,
      requiredApprovals: approvals,
      atMs: Date.now(),
    });
    if (!verdict.ok) {
      if (wantsJson(args)) printJson(io, { refused: true, policy: verdict });
      else io.stderr(`refused: ${verdict.reasons.join(", ")}: ${verdict.summary}\n`);
      return EXIT.refused;
    }
    const m = await import("../app/run_plan.ts");
    const run = await import("../engine/executor/run_plan.ts");
    const policyPath = args.values["health-policy"];
    if (typeof policyPath === "string") {
      await m.requireBoundPolicy(resolve(io.cwd, policyPath), parsed.plan);
    }
    const { openJournal } = await import("../adapters/journal/libsql_journal.ts");
    const { cryptoIdSource } = await import("../adapters/journal/ids.ts");
    const { SystemClock } = await import("../adapters/clock/system_clock.ts");
    const { JsonLogger } = await import("../adapters/log/json_logger.ts");
    const { workingTreeBoundFiles } = await import("../adapters/repo/bound_file_reader.ts");
    const { registryInstallerResolver } = await import("../adapters/oci/installer_resolver.ts");
    const { fileTrustRoot } = await import("../app/reconcile_wiring.ts");
    const clock = new SystemClock();
    const journal = await openJournal({
      url: journalUrl,
      ids: cryptoIdSource(),
      nowMs: clock.now(),
    });
    const cluster = await m.connectCluster({
      kubeconfigPath: resolve(io.cwd, kubeconfig),
      talosconfigPath: resolve(io.cwd, talosconfig),
    });
    const owner = `ctl_apply_${crypto.randomUUID().slice(0, 8)}`;
    const authority = {
      bytes,
      signatures: signatures ?? "",
      requiredApprovals: approvals,
      files: workingTreeBoundFiles(file),
      trust: fileTrustRoot(signersFile),
      installers: registryInstallerResolver({
        mirrors: parseRegistryMirrors(args.values["registry-mirror"]),
        timeoutMs: 30_000,
      }),
    };
    try {
      const refused = await run.authorizeBeforeBind({
        journal,
        parsed,
        authority,
        cluster,
        clock,
        owner,
        callTimeoutMs: (ms) => ms,
      });
      if (refused) return report(refused);
      const bound = await run.bindPlan(journal, {
        parsed,
        bytes,
        signatures: signatures ?? "",
        firstSeenCommit: "apply",
        approver: { identity: verdict.approvers.join(",") || "policy", role: "approver" },
        nowMs: clock.now(),
      });
      return report(
        await run.executePlan({
          journal,
          bound,
          cluster,
          authority,
          clock,
          log: new JsonLogger({ write: (l) => io.stderr(l), clock }),
          owner,
          callTimeoutMs: (ms) => ms,
          pollIntervalMs: 5_000,
          roundIntervalMs: 30_000,
          signal: io.signal,
        }),
      );
    } finally {
      cluster.close();
      await journal.close();
    }
  },
};

async function read(path: string): Promise<Uint8Array> {
  try {
    return await Deno.readFile(path);
  } catch (e) {
    throw new CairnError({
      reason: "FileUnreadable",
      message: `cannot read ${path}: ${e instanceof Error ? e.message : String(e)}`,
    });
  }
}
