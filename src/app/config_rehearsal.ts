/**
 * A ConfigApply rehearsal (docs/config-apply.md): the twin process, cairn's real adapters on its
 * virtual clock, a journal, the plan bound and approved, the named faults aimed at one node, and
 * `run()` executing it through the ConfigApply executor (`engine/config_apply/`). The report is
 * the same execution report a real run publishes (`rehearsal_report.ts`). The TalosUpgrade
 * rehearsal is `rehearsal.ts`; `cli/rehearse.ts` picks one by the plan's kind.
 */
import type { Rehearsal, RehearsalOptions } from "./rehearsal.ts";
import { armRehearsalFaults } from "./rehearsal.ts";
import { watchPhases } from "./phase_watch.ts";
import type { BoundPlan } from "../engine/executor/deps.ts";
import type { ConfigApplyPlan } from "../domain/plan/schema.ts";
import type { Kube } from "../ports/kube.ts";

/** A rehearsal whose plan is a ConfigApply. */
export type ConfigRehearsal = Omit<Rehearsal, "bound"> & {
  readonly bound: BoundPlan<ConfigApplyPlan>;
};

/** Starts the twin, binds the ConfigApply plan, arms the faults; `run()` executes it. */
export async function startConfigRehearsal(o: RehearsalOptions): Promise<ConfigRehearsal> {
  const { startTwinProcess } = await import("./twin_process.ts");
  const twin = await startTwinProcess({
    cluster: o.cluster,
    ...(o.pkiCacheDir ? { pkiCacheDir: o.pkiCacheDir } : {}),
    ...(o.stateDir ? { stateDir: o.stateDir } : {}),
  });
  const closers: Array<() => Promise<unknown> | void> = [() => twin.stop()];
  try {
    const { openJournal } = await import("../adapters/journal/libsql_journal.ts");
    const { cryptoIdSource } = await import("../adapters/journal/ids.ts");
    const { parsePlan } = await import("../domain/plan/parse.ts");
    const { asConfigApply, bindConfigApply, executeConfigApply } = await import(
      "../engine/config_apply/run_config_apply.ts"
    );
    const { authorizeRollout } = await import("../engine/executor/dispatch_gate.ts");
    const { dispatchAuthority } = await import("../engine/executor/run_plan.ts");
    const { workingTreeBoundFiles } = await import("../adapters/repo/bound_file_reader.ts");
    const { connectTwin, twinExecutionTiming } = await import("./twin_cluster.ts");
    const { fileTrustRoot } = await import("./reconcile_wiring.ts");
    const { control, clock, cluster } = await connectTwin(twin);
    closers.push(() => cluster.close());
    const raw = await openJournal({ url: o.journalUrl, ids: cryptoIdSource(), nowMs: clock.now() });
    closers.push(() => raw.close());
    const parsed = await parsePlan(o.planBytes, { file: o.planPath });
    const plan = asConfigApply(parsed);
    const owner = o.owner ?? "ctl_rehearsal";
    const timing = twinExecutionTiming(clock);
    const authority = {
      bytes: o.planBytes,
      signatures: o.signatures ?? "",
      requiredApprovals: o.requiredApprovals ?? 1,
      files: workingTreeBoundFiles(o.planPath, o.repoRoot ? { root: o.repoRoot } : {}),
      ...(o.allowedSignersPath ? { trust: fileTrustRoot(o.allowedSignersPath) } : {}),
    };
    // The dispatch check before binding: a plan it refuses is journaled, never bound.
    const pre = await authorizeRollout(
      raw,
      owner,
      parsed.sha256,
      dispatchAuthority(plan, authority, {
        clock,
        callTimeoutMs: timing.callTimeoutMs,
        talos: cluster.talos,
      }),
    );
    const bound = pre.ok
      ? await bindConfigApply(raw, {
        parsed,
        bytes: o.planBytes,
        signatures: o.signatures ?? "",
        firstSeenCommit: "rehearsal",
        approver: { identity: "rehearsal", role: "approver" },
        nowMs: clock.now(),
      })
      : { plan, digest: parsed.sha256 };
    const faultNode = o.faultNode ?? plan.spec.nodes[0]!.name;
    const { effect, journal } = await armRehearsalFaults(
      o,
      await presetContext(cluster.kube, plan, faultNode),
      { raw, control, now: () => clock.now() },
    );
    return {
      twin,
      control,
      clock,
      journal,
      bound,
      cluster,
      faultNode,
      effect,
      run: (r = {}) =>
        pre.ok
          ? executeConfigApply({
            journal: r.onPhase
              ? watchPhases(journal, plan.spec.nodes.map((n) => n.name), r.onPhase)
              : journal,
            bound,
            cluster,
            authority,
            ...timing,
            log: o.log,
            owner,
            ...(r.signal ? { signal: r.signal } : {}),
          })
          : Promise.resolve({
            state: pre.stop.verdict === "refused" ? "refused" : "halted",
            nodes: [{
              node: plan.spec.nodes[0]!.name,
              operationId: undefined,
              state: "not-committed",
              reason: pre.stop.reason,
              detail: pre.stop.detail,
              refused: pre.stop.verdict === "refused",
            }],
          }),
      report: async (outcome) => {
        const { rehearsalReport } = await import("./rehearsal_report.ts");
        return await rehearsalReport({
          journal: raw,
          parsed,
          planPath: o.planPath,
          requiredApprovals: o.requiredApprovals ?? 1,
          outcome,
          generatedAt: clock.now(),
        });
      },
      async stop() {
        for (const c of closers.splice(0).reverse()) await c();
      },
    };
  } catch (e) {
    for (const c of closers.reverse()) await c();
    throw e;
  }
}

/** What the presets aim with: the node's pods, no drain (a ConfigApply drains nothing). */
async function presetContext(kube: Kube, plan: ConfigApplyPlan, node: string) {
  const pods = (await kube.listPods(node)).items;
  const nodes = (await kube.listNodes()).items.map((n) => n.name);
  return {
    node,
    otherNodes: nodes.filter((n) => n !== node),
    pods: pods.map((p) => ({
      name: p.name,
      evictable: !p.daemonSet && !p.mirror && p.owner !== undefined &&
        p.phase !== "Succeeded" && p.phase !== "Failed",
      graceSeconds: p.terminationGracePeriodSeconds,
    })),
    drainBoundSeconds: 0,
    verifySeconds: plan.spec.phases.deadlines.apply.verificationSeconds,
  };
}
