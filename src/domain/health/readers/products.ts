/**
 * Row 18 readers: a metrics-storage operator's and an MQTT cluster's own resources, each judged
 * by a predicate written for one versioned API (`../product_kinds.ts`) that counts every member
 * the product needs, not pod readiness. Missing status is unreadable; a status written for an
 * older generation fails.
 */
import type { Binding } from "../policy_schema.ts";
import { EMQX, PROMETHEUS } from "../product_kinds.ts";
import type { BindingResult, Finding, KubeObjectLike, ReadInputs } from "../types.ts";
import { finish, objectBasis, objectId, staleness, statusOf, unreadableResult } from "./common.ts";

type MetricsBinding = Extract<Binding, { reader: "metrics-storage" }>;
type MqttBinding = Extract<Binding, { reader: "mqtt-cluster" }>;
type R = Record<string, unknown>;
const rec = (v: unknown): R => (v !== null && typeof v === "object" ? v as R : {});
const num = (v: unknown): number | undefined => (typeof v === "number" ? v : undefined);

export function readMetricsStorage(
  b: MetricsBinding,
  inputs: ReadInputs,
  startedAtMs: number,
): BindingResult {
  return readProduct(b, inputs, startedAtMs, PROMETHEUS, prometheusFinding);
}

export function readMqttCluster(
  b: MqttBinding,
  inputs: ReadInputs,
  startedAtMs: number,
): BindingResult {
  return readProduct(b, inputs, startedAtMs, EMQX, emqxFinding);
}

function readProduct(
  b: MetricsBinding | MqttBinding,
  inputs: ReadInputs,
  startedAtMs: number,
  kind: { apiVersion: string; kind: string },
  judge: (o: KubeObjectLike) => Finding,
): BindingResult {
  const key = `${kind.apiVersion}/${kind.kind}`;
  const snap = inputs.kube.resource(key);
  const stale = staleness(snap, key, b.freshnessSeconds, inputs.nowMs);
  if (stale || !snap) {
    return unreadableResult(b, stale!.reason, stale!.message, startedAtMs, inputs.nowMs);
  }
  const sel = b.selection;
  const objects = snap.items.filter((o) =>
    (!sel.namespace || o.metadata?.namespace === sel.namespace) &&
    (!sel.name || o.metadata?.name === sel.name)
  );
  if (sel.name && objects.length === 0) {
    const f: Finding = {
      subject: `${kind.kind} ${sel.namespace ? sel.namespace + "/" : ""}${sel.name}`,
      verdict: "fail",
      reason: "HealthObjectNotFound",
      message: "object does not exist",
    };
    return finish(b, inputs, startedAtMs, [f], [], 0);
  }
  return finish(
    b,
    inputs,
    startedAtMs,
    objects.map(judge),
    objects.map((o) => objectBasis(kind.kind, o, snap, inputs.nowMs)),
    objects.length,
  );
}

function conditionOf(status: R, type: string): R | undefined {
  const list = Array.isArray(status["conditions"]) ? status["conditions"] as unknown[] : [];
  return list.map(rec).find((c) => c["type"] === type);
}

/**
 * prometheus-operator (monitoring.coreos.com/v1 Prometheus): not paused; `Available` and
 * `Reconciled` True for the current generation; every replica of every shard available and
 * updated (`spec.replicas` × `spec.shards`, both defaulting to 1 as the operator defaults them).
 */
export function prometheusFinding(o: KubeObjectLike): Finding {
  const subject = `Prometheus ${objectId(o)}`;
  const status = statusOf(o);
  if (!status) {
    return {
      subject,
      verdict: "unreadable",
      reason: "HealthStatusMissing",
      message: "no status; the operator has not reported",
    };
  }
  const fail = (reason: Finding["reason"], message: string): Finding => ({
    subject,
    verdict: "fail",
    reason,
    message,
  });
  if (status["paused"] === true) return fail("HealthCheckFailed", "reconciliation is paused");
  const gen = o.metadata?.generation;
  for (const type of ["Available", "Reconciled"]) {
    const c = conditionOf(status, type);
    if (!c) return fail("HealthCheckFailed", `no ${type} condition`);
    const og = num(c["observedGeneration"]);
    if (typeof gen === "number" && (og === undefined || og < gen)) {
      return fail(
        "HealthGenerationStale",
        `${type} observed generation ${og ?? "none"} < generation ${gen}`,
      );
    }
    if (c["status"] !== "True") {
      return fail("HealthCheckFailed", `${type} is ${String(c["status"])}`);
    }
  }
  const spec = rec(o["spec"]);
  const replicas = num(spec["replicas"]) ?? 1;
  const shards = num(spec["shards"]) ?? 1;
  const want = replicas * shards;
  const available = num(status["availableReplicas"]);
  const updated = num(status["updatedReplicas"]);
  if (available === undefined || updated === undefined) {
    return {
      subject,
      verdict: "unreadable",
      reason: "HealthStatusMissing",
      message: "status has no availableReplicas/updatedReplicas",
    };
  }
  if (available < want || updated < want || (num(status["unavailableReplicas"]) ?? 0) > 0) {
    return fail(
      "HealthMembersMissing",
      `${available} available, ${updated} updated of ${want} (${replicas} replicas × ${shards} shards)`,
    );
  }
  const shardStatuses = Array.isArray(status["shardStatuses"])
    ? (status["shardStatuses"] as unknown[]).map(rec)
    : undefined;
  if (shardStatuses) {
    if (shardStatuses.length < shards) {
      return fail("HealthMembersMissing", `${shardStatuses.length} of ${shards} shards report`);
    }
    const short = shardStatuses.find((s) => (num(s["availableReplicas"]) ?? 0) < replicas);
    if (short) {
      return fail(
        "HealthMembersMissing",
        `shard ${String(short["shardID"])}: ${num(short["availableReplicas"]) ?? 0} of ` +
          `${replicas} replicas available`,
      );
    }
  }
  return {
    subject,
    verdict: "pass",
    reason: "HealthCheckPassed",
    message: `Available and Reconciled; ${want} of ${want} replicas available`,
  };
}

/**
 * emqx-operator (apps.emqx.io/v2beta1 EMQX): `Ready` True; every core node the spec asks for
 * (`spec.coreTemplate.spec.replicas`, else the operator's own `coreNodesStatus.replicas`) listed
 * in `status.coreNodes` as running and ready; the same for replicant nodes when any are asked for.
 */
export function emqxFinding(o: KubeObjectLike): Finding {
  const subject = `EMQX ${objectId(o)}`;
  const status = statusOf(o);
  if (!status) {
    return {
      subject,
      verdict: "unreadable",
      reason: "HealthStatusMissing",
      message: "no status; the operator has not reported",
    };
  }
  const ready = conditionOf(status, "Ready");
  if (ready?.["status"] !== "True") {
    return {
      subject,
      verdict: "fail",
      reason: "HealthCheckFailed",
      message: ready ? `Ready is ${String(ready["status"])}` : "no Ready condition",
    };
  }
  const spec = rec(o["spec"]);
  for (const role of ["core", "replicant"] as const) {
    const template = rec(spec[`${role}Template`]);
    const counts = rec(status[`${role}NodesStatus`]);
    const declared = num(rec(template["spec"])["replicas"]);
    const want = declared ?? (role === "core" ? num(counts["replicas"]) : 0);
    if (want === undefined) {
      return {
        subject,
        verdict: "unreadable",
        reason: "HealthStatusMissing",
        message: "core replica count neither declared nor reported",
      };
    }
    if (want === 0) continue;
    const nodes = Array.isArray(status[`${role}Nodes`])
      ? (status[`${role}Nodes`] as unknown[]).map(rec)
      : [];
    const running = nodes.filter((n) => String(n["node_status"] ?? "").toLowerCase() === "running");
    const readyReplicas = num(counts["readyReplicas"]) ?? 0;
    if (running.length < want || readyReplicas < want) {
      return {
        subject,
        verdict: "fail",
        reason: "HealthMembersMissing",
        message: `${role} nodes: ${running.length} running, ${readyReplicas} ready of ${want}`,
      };
    }
  }
  return {
    subject,
    verdict: "pass",
    reason: "HealthCheckPassed",
    message: "Ready; every core and replicant node running",
  };
}
