import { cachedCel, evalCel } from "../cel.ts";
import { kubeObjectCheck } from "../policy_parse.ts";
import type { Binding, KubeObjectSel } from "../policy_schema.ts";
import { selectorMatches } from "../selector.ts";
import type { BindingResult, Finding, KubeObjectLike, ReadInputs } from "../types.ts";
import {
  finish,
  generationStale,
  objectBasis,
  objectId,
  staleness,
  statusOf,
  unreadableResult,
} from "./common.ts";

type KubeObjectBinding = Extract<Binding, { reader: "kube-object" }>;

/** The watch-cache key for a selection: `apiVersion/Kind`. */
export function resourceKey(sel: { apiVersion: string; kind: string }): string {
  return `${sel.apiVersion}/${sel.kind}`;
}

/**
 * A CEL predicate over each selected object, with `object` and `status` bound as tuppr binds
 * them. Unlike tuppr, an object without a status is unreadable (never evaluated against an
 * empty map), and a status written for an older generation fails.
 */
export function readKubeObject(
  b: KubeObjectBinding,
  inputs: ReadInputs,
  startedAtMs: number,
): BindingResult {
  const { selection, expr } = kubeObjectCheck(b);
  const key = resourceKey(selection);
  const snap = inputs.kube.resource(key);
  const stale = staleness(snap, key, b.freshnessSeconds, inputs.nowMs);
  if (stale || !snap) {
    return unreadableResult(b, stale!.reason, stale!.message, startedAtMs, inputs.nowMs);
  }
  const objects = snap.items.filter((o) => selects(selection, o));
  if (selection.name && objects.length === 0) {
    const f: Finding = {
      subject: `${selection.kind} ${
        selection.namespace ? selection.namespace + "/" : ""
      }${selection.name}`,
      verdict: "fail",
      reason: "HealthObjectNotFound",
      message: "object does not exist",
    };
    return finish(b, inputs, startedAtMs, [f], [], 0);
  }
  const findings = objects.map((o) => evaluateObject(selection.kind, o, expr));
  const basis = objects.map((o) => objectBasis(selection.kind, o, snap, inputs.nowMs));
  return finish(b, inputs, startedAtMs, findings, basis, objects.length);
}

function selects(sel: KubeObjectSel, o: KubeObjectLike): boolean {
  const m = o.metadata ?? {};
  if (sel.name && m.name !== sel.name) return false;
  if (sel.namespace && m.namespace !== sel.namespace) return false;
  return !sel.labelSelector || selectorMatches(sel.labelSelector, m.labels);
}

/** Evaluates the predicate on one object. */
export function evaluateObject(kind: string, o: KubeObjectLike, expr: string): Finding {
  const subject = `${kind} ${objectId(o)}`;
  const status = statusOf(o);
  if (!status) {
    return {
      subject,
      verdict: "unreadable",
      reason: "HealthStatusMissing",
      message: "object has no status; its controller has not reported",
    };
  }
  if (generationStale(o, status) && typeof status["observedGeneration"] === "number") {
    return {
      subject,
      verdict: "fail",
      reason: "HealthGenerationStale",
      message: `status.observedGeneration ${String(status["observedGeneration"])} < generation ${
        String(o.metadata?.generation)
      }`,
    };
  }
  const out = evalCel(cachedCel(expr), { object: o, status });
  if (!out.ok) {
    return { subject, verdict: "unreadable", reason: "HealthCelError", message: out.error };
  }
  if (typeof out.value !== "boolean") {
    return {
      subject,
      verdict: "unreadable",
      reason: "HealthCelError",
      message: "predicate did not return a boolean",
    };
  }
  return out.value
    ? { subject, verdict: "pass", reason: "HealthCheckPassed", message: "predicate true" }
    : {
      subject,
      verdict: "fail",
      reason: "HealthCheckFailed",
      message: `predicate false: ${expr}`,
    };
}
