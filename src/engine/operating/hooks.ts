/**
 * Node hooks (docs/operating.md#node-hooks): plan-declared Kubernetes Jobs before and after each
 * node step. Creating a Job is an external mutation like any other, so it takes the one mutation
 * path (`engine/executor/mutation.ts`): the phase intent, the machine's identity observed fresh,
 * the fenced attempt transaction, the create, its response recorded. Then the Job's completion is
 * observed and recorded as the phase's fact: `succeeded`, `failed`, or `unresolved` when nothing
 * proves it finished before the hook's deadline. Anything but `succeeded` holds the rollout.
 *
 * A post hook runs whenever its pre hook was attempted (a Job create was admitted), whatever
 * happened in between, so `ceph osd unset noout` follows `set noout` even when the step halts. It
 * runs through the same mutation path: if the journal no longer admits an attempt (an earlier
 * attempt of the step lost its response and left it unresolved, so nothing more may be sent),
 * the post hook is recorded as not sent, never sent around the journal. It is not lost: it was
 * recorded as owed before the pre hook's attempt, and `owed_hooks.ts` sends it once the operation
 * is settled (docs/operating.md#owed-post-hooks).
 */
import type { NodeHook, OperatedPlan } from "../../domain/plan/schema.ts";
import type { KubeObject, KubeResourceRef } from "../../ports/kube.ts";
import type { StepState as AnyStepState } from "../executor/deps.ts";
import { requestDigest } from "../executor/digests.ts";
import { type Halt, unresolved } from "../executor/halt.ts";
import { errorText, mutate, type Sent } from "../executor/mutation.ts";

export const JOBS: KubeResourceRef = {
  group: "batch",
  version: "v1",
  plural: "jobs",
  namespaced: true,
};

/** A hook stage. */
export type HookStage = "pre" | "post";

/** How one hook stage ended. */
export interface HookRun {
  readonly hook: string;
  readonly stage: HookStage;
  /** A Job create was admitted by the journal (the request may have been sent). */
  readonly attempted: boolean;
  readonly outcome: "succeeded" | "failed" | "unresolved" | "not-sent";
  readonly job: string;
  readonly detail: string;
}

/** The step of any kind that takes node hooks. */
type StepState = AnyStepState<OperatedPlan>;

/** One create's transport bound: a POST is small; the Job's own run has `timeoutSeconds`. */
const CREATE_TRANSPORT_SECONDS = 30;

/** The hooks of the step's plan. */
function hooksOf(s: StepState): readonly NodeHook[] {
  return s.bound.plan.spec.hooks ?? [];
}

/**
 * Runs every pre hook in plan order; stops at the first that does not succeed. Returns the names
 * of the hooks whose pre Job was attempted (their post hooks must run) and the halt, if any.
 */
export async function runPreHooks(
  s: StepState,
): Promise<{ readonly attempted: ReadonlySet<string>; readonly halt?: Halt }> {
  const attempted = new Set<string>();
  for (const hook of hooksOf(s)) {
    if (!hook.pre) continue;
    // Owed before the pre hook can go out: a crash or a lost response after its send can no
    // longer lose the post hook (engine/operating/owed_hooks.ts sends it once the step settles).
    if (hook.post) await recordOwed(s, hook, hook.pre.command, hook.post.command);
    const r = await runHook(s, hook, "pre", hook.pre.command);
    if (r.attempted) attempted.add(hook.name);
    if (r.outcome !== "succeeded") return { attempted, halt: hookHalt(r) };
  }
  return { attempted };
}

/**
 * Runs the post hooks, in reverse plan order (undo in the opposite order of do): each one whose
 * pre hook was attempted, and each hook without a pre hook when the step's phases all succeeded.
 * Every one runs even when an earlier one fails; the first that did not succeed is the halt.
 */
export async function runPostHooks(
  s: StepState,
  preAttempted: ReadonlySet<string>,
  stepSucceeded: boolean,
): Promise<Halt | undefined> {
  let first: Halt | undefined;
  for (const hook of [...hooksOf(s)].reverse()) {
    if (!hook.post) continue;
    if (hook.pre ? !preAttempted.has(hook.name) : !stepSucceeded) continue;
    const r = await runHook(s, hook, "post", hook.post.command);
    if (r.outcome !== "succeeded") first ??= hookHalt(r);
  }
  return first;
}

function hookHalt(r: HookRun): Halt {
  return unresolved(
    r.outcome === "failed" ? "HookFailed" : "HookUnresolved",
    `${r.stage} hook ${r.hook} (Job ${r.job}): ${r.detail}`,
  );
}

/** The Job of one hook stage for this step; its name is stable for the operation. */
async function jobFor(s: StepState, hook: NodeHook, stage: HookStage, command: readonly string[]) {
  const suffix = (await requestDigest({ op: s.operationId, hook: hook.name, stage })).slice(0, 10);
  const name = `cairn-${hook.name.slice(0, 36)}-${stage}-${suffix}`;
  const labels = {
    "app.kubernetes.io/managed-by": "cairn",
    "cairn.dev/hook": hook.name,
    "cairn.dev/stage": stage,
  };
  const body = {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: {
      name,
      namespace: hook.namespace,
      labels,
      annotations: { "cairn.dev/operation": s.operationId, "cairn.dev/node": s.node },
    },
    spec: {
      // The hook's outcome is one run's: a retry would be a second mutation nobody journaled.
      backoffLimit: 0,
      activeDeadlineSeconds: hook.timeoutSeconds,
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: "Never",
          ...(hook.serviceAccountName ? { serviceAccountName: hook.serviceAccountName } : {}),
          containers: [{
            name: "hook",
            image: hook.image,
            command: [...command],
            env: [
              { name: "CAIRN_NODE", value: s.node },
              { name: "CAIRN_NODE_ADDRESS", value: s.address },
              { name: "CAIRN_HOOK_STAGE", value: stage },
            ],
          }],
        },
      },
    },
  };
  return { name, body };
}

/** The request a hook stage's attempt records (its digest identifies the stage's attempt). */
function hookRequest(hook: NodeHook, stage: HookStage, body: Record<string, unknown>) {
  return { verb: "create", kind: "Job", hook: hook.name, stage, job: body };
}

/** Records the post hook this step owes once its pre hook may be attempted. */
async function recordOwed(
  s: StepState,
  hook: NodeHook,
  preCommand: readonly string[],
  postCommand: readonly string[],
): Promise<void> {
  const pre = await jobFor(s, hook, "pre", preCommand);
  const post = await jobFor(s, hook, "post", postCommand);
  await s.deps.journal.recordHookOwed({
    operationId: s.operationId,
    token: s.token,
    hook: hook.name,
    namespace: hook.namespace,
    job: post.body,
    timeoutSeconds: hook.timeoutSeconds,
    preRequestDigest: await requestDigest(hookRequest(hook, "pre", pre.body)),
    postRequestDigest: await requestDigest(hookRequest(hook, "post", post.body)),
    nowMs: s.deps.clock.now(),
  });
}

/** One hook stage: the Job created through the mutation path, then its completion observed. */
export async function runHook(
  s: StepState,
  hook: NodeHook,
  stage: HookStage,
  command: readonly string[],
): Promise<HookRun> {
  const { name, body } = await jobFor(s, hook, stage, command);
  const job = `${hook.namespace}/${name}`;
  const phase = stage === "pre" ? "pre-hook" : "post-hook";
  const r = await mutate(s, {
    phase,
    request: hookRequest(hook, stage, body),
    route: "kube-apiserver",
    deadline: {
      transportSeconds: CREATE_TRANSPORT_SECONDS,
      verificationSeconds: hook.timeoutSeconds,
    },
    send: async (timeoutMs): Promise<Sent<string>> => {
      const out = await s.deps.kube.createObject(JOBS, hook.namespace, body, { timeoutMs });
      if (out.kind === "created") {
        return { responseClass: "accepted", detail: `created uid=${out.uid}`, value: out.uid };
      }
      // The server's own answer accounts for the attempt; it is not a validation rejection of the
      // step's mutation, so it never makes the operation `rejected`.
      return {
        responseClass: "target-error",
        detail: `${out.kind}${"code" in out ? ` ${out.code}` : ""}: ${out.message}`,
      };
    },
  });
  if (r.kind === "refused") {
    const run: HookRun = {
      hook: hook.name,
      stage,
      attempted: false,
      outcome: "not-sent",
      job,
      detail: `not sent: ${r.reason}: ${r.detail}`,
    };
    await fact(s, phase, run);
    return run;
  }
  if (r.sent.responseClass !== "accepted") {
    const run: HookRun = {
      hook: hook.name,
      stage,
      attempted: true,
      outcome: "unresolved",
      job,
      detail: `create not accepted: ${r.sent.detail}`,
    };
    await fact(s, phase, run);
    return run;
  }
  const run = await observeJob(s, hook, stage, name, job);
  await fact(s, phase, run);
  s.deps.log.info("node hook finished", {
    node: s.node,
    phase,
    verdict: run.outcome,
    path: job,
  });
  return run;
}

/** Reads the Job until it reports Complete or Failed, or the hook's deadline passes. */
async function observeJob(
  s: StepState,
  hook: NodeHook,
  stage: HookStage,
  name: string,
  job: string,
): Promise<HookRun> {
  const ended = await watchJob(s.deps, {
    namespace: hook.namespace,
    name,
    timeoutSeconds: hook.timeoutSeconds,
  });
  return { hook: hook.name, stage, attempted: true, job, ...ended };
}

/**
 * Reads a hook Job until its Complete or Failed condition, or `unresolved` when neither was
 * observed before its deadline.
 */
export async function watchJob(
  deps: Pick<StepState["deps"], "clock" | "kube" | "callTimeoutMs" | "pollIntervalMs" | "signal">,
  j: { readonly namespace: string; readonly name: string; readonly timeoutSeconds: number },
): Promise<{ outcome: "succeeded" | "failed" | "unresolved"; detail: string }> {
  const { clock, kube } = deps;
  const deadline = clock.now() + j.timeoutSeconds * 1000;
  let last = "not read yet";
  while (true) {
    try {
      const obj = await kube.getObject(JOBS, j.name, j.namespace, {
        timeoutMs: deps.callTimeoutMs(CREATE_TRANSPORT_SECONDS * 1000),
      });
      const ended = jobEnd(obj);
      if (ended) return ended;
      last = obj ? "running" : "not found";
    } catch (e) {
      // An unreadable Job is not a failed one: keep reading until the deadline.
      last = `unreadable: ${errorText(e)}`;
    }
    if (clock.now() >= deadline || deps.signal?.aborted) {
      return {
        outcome: "unresolved",
        detail: `no completion observed within ${j.timeoutSeconds}s (last read: ${last})`,
      };
    }
    await clock.sleep(Math.min(deps.pollIntervalMs, Math.max(1, deadline - clock.now())));
  }
}

/** The Job's end as its status conditions state it; undefined while it runs. */
export function jobEnd(
  obj: KubeObject | undefined,
): { outcome: "succeeded" | "failed"; detail: string } | undefined {
  const status = (obj?.["status"] ?? {}) as Record<string, unknown>;
  const conditions = Array.isArray(status["conditions"]) ? status["conditions"] : [];
  for (const c of conditions as Array<Record<string, unknown>>) {
    if (c["status"] !== "True") continue;
    if (c["type"] === "Complete") {
      return { outcome: "succeeded", detail: `Complete (succeeded=${status["succeeded"] ?? 0})` };
    }
    if (c["type"] === "Failed") {
      return {
        outcome: "failed",
        detail: `Failed: ${c["reason"] ?? ""} ${c["message"] ?? ""} (failed=${
          status["failed"] ?? 0
        })`.replace(/\s+/g, " "),
      };
    }
  }
  return undefined;
}

async function fact(s: StepState, phase: "pre-hook" | "post-hook", run: HookRun): Promise<void> {
  await s.deps.journal.recordPhase({
    operationId: s.operationId,
    token: s.token,
    phase,
    kind: "fact",
    detail: { ...run },
    nowMs: s.deps.clock.now(),
  });
}
