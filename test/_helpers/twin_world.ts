/**
 * A rehearsal world for executor tests: the twin process (Kubernetes API simulator + Talos apid
 * simulator under Node, real HTTPS and gRPC over mTLS), cairn's real adapters, the twin's virtual
 * clock, an in-memory libSQL journal, and the example plan bound and approved.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { openJournal } from "../../src/adapters/journal/libsql_journal.ts";
import { cryptoIdSource } from "../../src/adapters/journal/ids.ts";
import type { TwinClock } from "../../src/adapters/clock/twin_clock.ts";
import {
  connectTwin,
  type TwinEndpoints,
  twinExecutionTiming,
  twinInstallerResolver,
} from "../../src/app/twin_cluster.ts";
import { startTwinProcess, TEST_PKI_CACHE, type TwinProcess } from "../../src/app/twin_process.ts";
import { type AuthorityInputs, bindPlan, executePlan } from "../../src/engine/executor/run_plan.ts";
import { workingTreeBoundFiles } from "../../src/adapters/repo/bound_file_reader.ts";
import { parsePlan } from "../../src/domain/plan/parse.ts";
import type { Fault } from "../../src/sim/faults.ts";
import { TwinControl } from "../../src/sim/twin_control.ts";
import type { Journal } from "../../src/ports/journal.ts";
import type { BoundPlan, ExecutionObserver } from "../../src/engine/executor/deps.ts";
import type { RolloutOutcome } from "../../src/engine/executor/rollout.ts";
import { MemoryLogger } from "./memory_logger.ts";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/**
 * Runs `fn` against the home-ops twin in its own process (real sockets), connected as cairn
 * connects to a cluster, and stops both after it.
 */
export async function withHomeOpsTwin(
  fn: (t: Awaited<ReturnType<typeof connectTwin>>) => Promise<void>,
): Promise<void> {
  const twin = await startTwinProcess({
    cluster: join(ROOT, "fixtures/clusters/home-ops.yaml"),
    pkiCacheDir: TEST_PKI_CACHE,
  });
  const conn = await connectTwin(twin);
  try {
    await fn(conn);
  } finally {
    conn.cluster.close();
    await twin.stop();
  }
}

/** A connected world: adapters, virtual clock, journal, and the plan bound and approved. */
export interface World {
  readonly control: TwinControl;
  readonly clock: TwinClock;
  readonly journal: Journal;
  readonly bound: BoundPlan;
  readonly log: MemoryLogger;
  run(opts?: { signal?: AbortSignal; observer?: ExecutionObserver }): Promise<RolloutOutcome>;
  /** Closes the adapters and the journal (not the twin). */
  close(): Promise<void>;
}

export interface TwinWorld extends World {
  readonly twin: TwinProcess;
  stop(): Promise<void>;
}

export interface WorldOptions {
  readonly plan?: string;
  /** Replaces the plan text before it is parsed (to shape a scenario). */
  readonly editPlan?: (text: string) => string;
  readonly journalUrl?: string;
  /** This controller instance's identity (default `ctl_test`). */
  readonly owner?: string;
  /** Overrides of what the dispatch check reads (trust root, bound files, installers). */
  readonly authority?: Partial<AuthorityInputs>;
  /** Journal write-point hook (crash tests). */
  readonly writePoint?: (name: string) => Promise<void>;
}

export interface TwinWorldOptions extends WorldOptions {
  readonly cluster?: string;
  readonly faults?: readonly Fault[];
}

/** Where a running twin is. */
export type { TwinEndpoints };

export async function startTwinWorld(o: TwinWorldOptions = {}): Promise<TwinWorld> {
  const twin = await startTwinProcess({
    cluster: join(ROOT, o.cluster ?? "fixtures/clusters/home-ops.yaml"),
    pkiCacheDir: TEST_PKI_CACHE,
  });
  try {
    const control = new TwinControl(twin.controlUrl);
    for (const f of o.faults ?? []) await control.arm(f);
    const world = await connectWorld(twin, o);
    return {
      ...world,
      twin,
      async stop() {
        await world.close();
        await twin.stop();
      },
    };
  } catch (e) {
    await twin.stop();
    throw e;
  }
}

/** Connects cairn's real adapters and a journal to a running twin and binds the plan. */
export async function connectWorld(t: TwinEndpoints, o: WorldOptions = {}): Promise<World> {
  const { control, clock, cluster } = await connectTwin(t);
  const journal = await openJournal({
    url: o.journalUrl ?? ":memory:",
    ids: cryptoIdSource(),
    nowMs: clock.now(),
    ...(o.writePoint ? { writePoint: o.writePoint } : {}),
  });
  const planPath = join(ROOT, o.plan ?? "plans/talos-v1.14.2.yaml");
  let text = await Deno.readTextFile(planPath);
  if (o.editPlan) text = o.editPlan(text);
  const bytes = new TextEncoder().encode(text);
  const parsed = await parsePlan(bytes, { file: planPath });
  const bound = await bindPlan(journal, {
    parsed,
    bytes,
    signatures: "",
    firstSeenCommit: "test",
    approver: { identity: "bob@example.com", role: "approver" },
    nowMs: clock.now(),
  });
  // The dispatch check reads the plan's bound files from this repository (the gate uses the
  // bound health policy from there); no trust root unless the test gives one.
  const authority: AuthorityInputs = {
    bytes,
    signatures: "",
    requiredApprovals: 1,
    files: workingTreeBoundFiles(planPath),
    // A twin process serves a registry for its installer images: resolve against it.
    ...("registry" in t ? { installers: await twinInstallerResolver(t as TwinProcess) } : {}),
    ...o.authority,
  };
  const log = new MemoryLogger();
  return {
    control,
    clock,
    journal,
    bound,
    log,
    run: (r = {}) =>
      executePlan({
        journal,
        bound,
        cluster,
        authority,
        ...twinExecutionTiming(clock),
        log,
        owner: o.owner ?? "ctl_test",
        ...(r.signal ? { signal: r.signal } : {}),
        ...(r.observer ? { observer: r.observer } : {}),
      }),
    async close() {
      cluster.close();
      await journal.close();
    },
  };
}

/** Keeps only the named nodes in the plan's node list (scenario plans). */
export function onlyNodes(...names: string[]): (text: string) => string {
  return (text) => {
    const head = text.slice(0, text.indexOf("  nodes:\n"));
    const tail = text.slice(text.indexOf("  rollout:"));
    const nodes = names.map((n) => {
      const m = text.match(
        new RegExp(`    - name: ${n}\\n      role: (\\w+)\\n      address: (\\S+)\\n`),
      );
      if (!m) throw new Error(`node ${n} is not in the plan`);
      return m[0];
    });
    return `${head}  nodes:\n${nodes.join("")}${tail}`;
  };
}
