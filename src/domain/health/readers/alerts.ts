/**
 * The Alertmanager veto (docs/operating.md#alert-veto-and-silences): a firing alert matching the
 * binding's matchers fails the round, and each one is evidence, named by its labels and the time
 * it started. No read in this round, a read that failed, or no Alertmanager at all is unreadable:
 * an alert source that cannot be asked never passes.
 */
import type { Binding } from "../policy_schema.ts";
import type { AlertSeen, BindingResult, Finding, ObservationBasis, ReadInputs } from "../types.ts";
import { finish } from "./common.ts";

type AlertBinding = Extract<Binding, { reader: "alertmanager-alerts" }>;

/** `CephOSDDownHigh{namespace="rook-ceph",severity="warning"}`: how an alert is named. */
export function alertName(a: AlertSeen): string {
  const { alertname, ...rest } = a.labels;
  const labels = Object.keys(rest).sort().map((k) => `${k}=${JSON.stringify(rest[k])}`);
  return `${alertname ?? "alert"}{${labels.join(",")}}`;
}

export function readAlertmanagerAlerts(
  b: AlertBinding,
  inputs: ReadInputs,
  startedAtMs: number,
): BindingResult {
  const subject = "alertmanager";
  const o = inputs.alerts?.get(b.name);
  const unread = (message: string, reason: Finding["reason"] = "AlertmanagerUnreadable") =>
    finish(b, inputs, startedAtMs, [{ subject, verdict: "unreadable", reason, message }], [], 0);
  if (!inputs.alerts) return unread("no Alertmanager is configured for this controller");
  if (!o || o.observedAtMs < startedAtMs) return unread("not read in this round");
  if (o.error) return unread(o.error.message, o.error.reason);
  if (!o.alerts) return unread("no answer recorded");
  if (inputs.nowMs - o.observedAtMs > b.freshnessSeconds * 1000) {
    return unread(`read ${inputs.nowMs - o.observedAtMs} ms ago, older than the binding allows`);
  }
  const basis: ObservationBasis[] = o.alerts.map((a) => ({
    kind: "Alert",
    name: `${alertName(a)} since ${a.startsAt}`,
    uid: a.fingerprint,
    observedAtMs: o.observedAtMs,
    source: "alertmanager",
  }));
  const findings: Finding[] = o.alerts.length === 0
    ? [{
      subject,
      verdict: "pass",
      reason: "HealthCheckPassed",
      message: `no firing alert matches at ${o.source}`,
    }]
    : o.alerts.map((a) => ({
      subject: alertName(a),
      verdict: "fail",
      reason: "AlertFiring",
      message: `firing since ${a.startsAt}`,
    }));
  // Alertmanager answered: that is the one subject this binding covers.
  const result = finish(b, inputs, startedAtMs, findings, basis, 1);
  return basis.length === 0
    ? {
      ...result,
      basis: [{
        kind: "Alertmanager",
        name: o.source,
        observedAtMs: o.observedAtMs,
        source: "alertmanager",
      }],
    }
    : result;
}
