/**
 * Row 17 readers: an object store's endpoint and each broker server's stream health, read through
 * the API server's proxy subresource on named routes (`../routes.ts`). The product's own answer
 * decides; the API server's own failure (no route to the pod, access refused), an answer cut at
 * the size bound, a read from before this round or no read at all is unreadable — never a pass,
 * and never a reason to try another way in (no exec, no credentials of the product).
 */
import type { Binding } from "../policy_schema.ts";
import {
  brokerPods,
  brokerTarget,
  excerpt,
  isProxyStatus,
  objectStoreTarget,
  routeKey,
} from "../routes.ts";
import type {
  BindingResult,
  Finding,
  ObservationBasis,
  ReadInputs,
  RouteObservation,
  RouteTarget,
} from "../types.ts";
import { finish, POD_KEY, staleness, unreadableResult } from "./common.ts";

type ObjectStoreBinding = Extract<Binding, { reader: "object-store-endpoint" }>;
type BrokerBinding = Extract<Binding, { reader: "broker-streams" }>;

export function readObjectStoreEndpoint(
  b: ObjectStoreBinding,
  inputs: ReadInputs,
  startedAtMs: number,
): BindingResult {
  const target = objectStoreTarget(b);
  const subject = `service ${target.namespace}/${target.name}:${target.port}`;
  const got = observation(b, inputs, startedAtMs, target, subject);
  if ("verdict" in got) return finish(b, inputs, startedAtMs, [got], [], 0);
  const { answer } = got;
  const finding = s3RootFinding(subject, answer);
  return finish(b, inputs, startedAtMs, [finding], [routeBasis(got)], 1);
}

/** ceph-rgw: an anonymous GET of the S3 root lists no buckets, with 200 and the S3 document. */
function s3RootFinding(
  subject: string,
  a: NonNullable<RouteObservation["answer"]>,
): Finding {
  const listing = a.body.includes("<ListAllMyBucketsResult");
  if (a.status === 200 && listing) {
    return {
      subject,
      verdict: "pass",
      reason: "HealthCheckPassed",
      message: "S3 root answered 200 with a ListAllMyBucketsResult",
    };
  }
  if (a.status === 200 && a.truncated) {
    return unreachable(subject, "answer cut at the size bound before the S3 document was seen");
  }
  const code = /<Code>([A-Za-z]{1,40})<\/Code>/.exec(a.body)?.[1];
  return {
    subject,
    verdict: "fail",
    reason: "HealthRouteFailed",
    message: a.status === 200
      ? "S3 root answered 200 without a ListAllMyBucketsResult"
      : `S3 root answered HTTP ${a.status}${code ? ` (${code})` : ""}`,
  };
}

export function readBrokerStreams(
  b: BrokerBinding,
  inputs: ReadInputs,
  startedAtMs: number,
): BindingResult {
  const snap = inputs.kube.resource(POD_KEY);
  const stale = staleness(snap, POD_KEY, b.freshnessSeconds, inputs.nowMs);
  if (stale || !snap) {
    return unreadableResult(b, stale!.reason, stale!.message, startedAtMs, inputs.nowMs);
  }
  const pods = brokerPods(b, snap.items);
  const findings: Finding[] = [];
  const basis: ObservationBasis[] = [];
  for (const pod of pods) {
    const target = brokerTarget(b, pod);
    const subject = `server ${target.namespace}/${target.name}`;
    const got = observation(b, inputs, startedAtMs, target, subject);
    if ("verdict" in got) {
      findings.push(got);
      continue;
    }
    findings.push(natsHealthzFinding(subject, got.answer));
    basis.push(routeBasis(got));
  }
  return finish(b, inputs, startedAtMs, findings, basis, pods.length);
}

/**
 * nats-jetstream: /healthz on a JetStream server checks that the server and every stream and
 * consumer assigned to it are current: 200 `{"status":"ok"}`, else 503 with the error.
 */
function natsHealthzFinding(
  subject: string,
  a: NonNullable<RouteObservation["answer"]>,
): Finding {
  let doc: { status?: unknown; error?: unknown } | undefined;
  try {
    doc = JSON.parse(a.body);
  } catch {
    doc = undefined;
  }
  if (doc === undefined || typeof doc !== "object" || doc === null || !("status" in doc)) {
    return unreachable(
      subject,
      a.truncated ? "answer cut at the size bound" : `HTTP ${a.status} without a /healthz document`,
    );
  }
  if (a.status === 200 && doc.status === "ok") {
    return {
      subject,
      verdict: "pass",
      reason: "HealthCheckPassed",
      message: "/healthz ok: server and its streams current",
    };
  }
  const why = typeof doc.error === "string" ? `: ${excerpt(doc.error)}` : "";
  return {
    subject,
    verdict: "fail",
    reason: "HealthRouteFailed",
    message: `/healthz answered HTTP ${a.status} status ${excerpt(String(doc.status), 40)}${why}`,
  };
}

/** The route's observation from this round, or the finding that says why there is none. */
function observation(
  b: Binding,
  inputs: ReadInputs,
  startedAtMs: number,
  target: RouteTarget,
  subject: string,
): Finding | (RouteObservation & { answer: NonNullable<RouteObservation["answer"]> }) {
  const o = inputs.routes?.get(b.name, routeKey(target));
  if (!inputs.routes) return unreachable(subject, "this evidence source reads no proxy routes");
  if (!o || o.observedAtMs < startedAtMs) return unreachable(subject, "not read in this round");
  if (o.error) {
    return { subject, verdict: "unreadable", reason: o.error.reason, message: o.error.message };
  }
  if (!o.answer) return unreachable(subject, "no answer recorded");
  // The API server answers its own failures (no route to the pod, access refused) as a
  // `kind: Status` object; the product's own 403 or 503 is the product's evidence.
  if (isProxyStatus(o.answer.body)) {
    return unreachable(
      subject,
      `the API server answered HTTP ${o.answer.status} itself (route not reached or not allowed)`,
    );
  }
  return { ...o, answer: o.answer };
}

function unreachable(subject: string, message: string): Finding {
  return { subject, verdict: "unreadable", reason: "HealthRouteUnreachable", message };
}

function routeBasis(o: RouteObservation): ObservationBasis {
  const t = o.target;
  return {
    kind: t.kind === "pod" ? "Pod" : "Service",
    name: `${t.name}:${t.port}${t.path}`,
    namespace: t.namespace,
    observedAtMs: o.observedAtMs,
    source: "route",
  };
}
