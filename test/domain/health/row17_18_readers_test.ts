/**
 * The readers of safeguard rows 17 and 18: an object store's S3 root and each NATS JetStream
 * server's /healthz through the API server's proxy (row 17), Prometheus and EMQX by their own
 * versioned status (row 18). Each passes only on its product's own healthy answer; the API
 * server's own failure, a missing or old reading is unreadable, never a pass.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { readBinding } from "../../../src/domain/health/readers/index.ts";
import { routeKey } from "../../../src/domain/health/routes.ts";
import type { RouteObservation, RouteTarget } from "../../../src/domain/health/types.ts";
import { rowOfReader } from "../../../src/domain/safeguards/reader_rows.ts";
import { binding, inputs, NOW, pod } from "./fixtures.ts";

const RGW: RouteTarget = {
  namespace: "rook-ceph",
  kind: "service",
  name: "rook-ceph-rgw-store",
  port: "http",
  path: "/",
};
const S3_OK = '<?xml version="1.0"?><ListAllMyBucketsResult><Buckets/></ListAllMyBucketsResult>';
const objectStore = binding({
  reader: "object-store-endpoint",
  product: "ceph-rgw",
  route: { namespace: "rook-ceph", service: "rook-ceph-rgw-store", port: "http" },
});

function routes(obs: Array<Partial<RouteObservation> & { target: RouteTarget }>, b = "b") {
  const m = new Map(obs.map((o) => [routeKey(o.target), { observedAtMs: NOW, ...o }]));
  return { get: (binding: string, key: string) => (binding === b ? m.get(key) : undefined) };
}

const answer = (status: number, body: string, truncated = false) => ({ status, body, truncated });
const k8sStatus = (code: number) =>
  JSON.stringify({ kind: "Status", apiVersion: "v1", status: "Failure", code });

Deno.test("object-store-endpoint passes only on the S3 root's own 200 listing", () => {
  const read = (o: Partial<RouteObservation>) =>
    readBinding(objectStore, { ...inputs({}), routes: routes([{ target: RGW, ...o }]) }, NOW);
  const ok = read({ answer: answer(200, S3_OK) });
  assertEquals([ok.verdict, ok.coverage.observed], ["pass", 1]);
  assertEquals(ok.basis[0]?.source, "route");
  const denied = read({
    answer: answer(403, "<Error><Code>AccessDenied</Code><Message>x</Message></Error>"),
  });
  assertEquals([denied.verdict, denied.reason], ["fail", "HealthRouteFailed"]);
  assert(denied.message.includes("HTTP 403 (AccessDenied)"), denied.message);
  const wrongDoc = read({ answer: answer(200, "<html>hello</html>") });
  assertEquals(wrongDoc.verdict, "fail");
  // The API server's own 503 (no endpoints) says nothing about the store: unreadable.
  const proxy = read({ answer: answer(503, k8sStatus(503)) });
  assertEquals([proxy.verdict, proxy.reason], ["unreadable", "HealthRouteUnreachable"]);
  const forbidden = read({ answer: answer(403, k8sStatus(403)) });
  assertEquals(forbidden.verdict, "unreadable");
  const timedOut = read({ error: { reason: "KubeTimeout", message: "GET timed out" } });
  assertEquals([timedOut.verdict, timedOut.reason], ["unreadable", "KubeTimeout"]);
});

Deno.test("object-store-endpoint never passes on a reading from before the round or none", () => {
  const old = readBinding(objectStore, {
    ...inputs({}),
    routes: routes([{ target: RGW, observedAtMs: NOW - 1, answer: answer(200, S3_OK) }]),
  }, NOW);
  assertEquals([old.verdict, old.reason], ["unreadable", "HealthRouteUnreachable"]);
  const none = readBinding(objectStore, { ...inputs({}), routes: routes([]) }, NOW);
  assertEquals(none.verdict, "unreadable");
  const noSource = readBinding(objectStore, inputs({}), NOW);
  assertEquals(noSource.verdict, "unreadable");
});

const broker = binding({
  reader: "broker-streams",
  product: "nats-jetstream",
  selection: {
    namespace: "messaging",
    labelSelector: { matchLabels: { "app.kubernetes.io/name": "nats" } },
  },
  requiredCoverage: 3,
});
const natsPods = ["nats-0", "nats-1", "nats-2"].map((n, i) =>
  pod("messaging", n, `worker-${i + 1}`, { "app.kubernetes.io/name": "nats" })
);
const server = (name: string): RouteTarget => ({
  namespace: "messaging",
  kind: "pod",
  name,
  port: "8222",
  path: "/healthz",
});
const OK = '{"status":"ok"}';

Deno.test("broker-streams reads every server: one lagging server fails the binding, named", () => {
  const all = readBinding(broker, {
    ...inputs({ "v1/Pod": natsPods }),
    routes: routes(natsPods.map((p) => ({
      target: server(p.metadata.name),
      answer: answer(200, OK),
    }))),
  }, NOW);
  assertEquals([all.verdict, all.coverage], ["pass", { required: 3, observed: 3 }]);
  const lagging = readBinding(broker, {
    ...inputs({ "v1/Pod": natsPods }),
    routes: routes([
      { target: server("nats-0"), answer: answer(200, OK) },
      {
        target: server("nats-1"),
        answer: answer(
          503,
          '{"status":"unavailable","status_code":503,"error":"JetStream stream \'$G > ORDERS\' is not current"}',
        ),
      },
      { target: server("nats-2"), answer: answer(200, OK) },
    ]),
  }, NOW);
  assertEquals([lagging.verdict, lagging.reason], ["fail", "HealthRouteFailed"]);
  assert(lagging.message.startsWith("server messaging/nats-1:"), lagging.message);
  assert(lagging.message.includes("ORDERS"), lagging.message);
});

Deno.test("broker-streams: an unread server is unreadable, a missing server fails coverage", () => {
  const unread = readBinding(broker, {
    ...inputs({ "v1/Pod": natsPods }),
    routes: routes([
      { target: server("nats-0"), answer: answer(200, OK) },
      { target: server("nats-1"), answer: answer(200, OK) },
    ]),
  }, NOW);
  assertEquals(unread.verdict, "unreadable");
  assert(unread.message.includes("nats-2"), unread.message);
  const two = readBinding(broker, {
    ...inputs({ "v1/Pod": natsPods.slice(0, 2) }),
    routes: routes(natsPods.map((p) => ({
      target: server(p.metadata.name),
      answer: answer(200, OK),
    }))),
  }, NOW);
  assertEquals([two.verdict, two.reason], ["fail", "HealthSelectionEmpty"]);
  const garbled = readBinding(broker, {
    ...inputs({ "v1/Pod": natsPods }),
    routes: routes(natsPods.map((p) => ({
      target: server(p.metadata.name),
      answer: answer(200, '{"stat', true),
    }))),
  }, NOW);
  assertEquals(garbled.verdict, "unreadable");
});

const prometheus = (status: Record<string, unknown> | undefined, spec = { replicas: 2 }) => ({
  apiVersion: "monitoring.coreos.com/v1",
  kind: "Prometheus",
  metadata: { namespace: "observability", name: "k8s", generation: 3, uid: "u-prom" },
  spec,
  ...(status ? { status } : {}),
});
const healthyProm = {
  paused: false,
  availableReplicas: 2,
  updatedReplicas: 2,
  unavailableReplicas: 0,
  conditions: [
    { type: "Available", status: "True", observedGeneration: 3 },
    { type: "Reconciled", status: "True", observedGeneration: 3 },
  ],
  shardStatuses: [{ shardID: "0", availableReplicas: 2, replicas: 2 }],
};
const metrics = binding({ reader: "metrics-storage", product: "prometheus-operator" });
const PROM = "monitoring.coreos.com/v1/Prometheus";

Deno.test("metrics-storage passes only with every replica of every shard, current generation", () => {
  assertEquals(
    readBinding(metrics, inputs({ [PROM]: [prometheus(healthyProm)] }), NOW).verdict,
    "pass",
  );
  const short = readBinding(
    metrics,
    inputs({
      [PROM]: [prometheus({ ...healthyProm, availableReplicas: 1, unavailableReplicas: 1 })],
    }),
    NOW,
  );
  assertEquals([short.verdict, short.reason], ["fail", "HealthMembersMissing"]);
  const sharded = readBinding(
    metrics,
    inputs({
      [PROM]: [prometheus({ ...healthyProm, availableReplicas: 4, updatedReplicas: 4 }, {
        replicas: 2,
        shards: 2,
      } as { replicas: number })],
    }),
    NOW,
  );
  assertEquals([sharded.verdict, sharded.reason], ["fail", "HealthMembersMissing"]);
  assert(sharded.message.includes("1 of 2 shards"), sharded.message);
  const stale = readBinding(
    metrics,
    inputs({
      [PROM]: [prometheus({
        ...healthyProm,
        conditions: [
          { type: "Available", status: "True", observedGeneration: 2 },
          { type: "Reconciled", status: "True", observedGeneration: 2 },
        ],
      })],
    }),
    NOW,
  );
  assertEquals([stale.verdict, stale.reason], ["fail", "HealthGenerationStale"]);
  const paused = readBinding(
    metrics,
    inputs({ [PROM]: [prometheus({ ...healthyProm, paused: true })] }),
    NOW,
  );
  assertEquals(paused.verdict, "fail");
  const none = readBinding(metrics, inputs({ [PROM]: [prometheus(undefined)] }), NOW);
  assertEquals([none.verdict, none.reason], ["unreadable", "HealthStatusMissing"]);
  const empty = readBinding(metrics, inputs({ [PROM]: [] }), NOW);
  assertEquals([empty.verdict, empty.reason], ["fail", "HealthSelectionEmpty"]);
});

const emqx = (status: Record<string, unknown> | undefined) => ({
  apiVersion: "apps.emqx.io/v2beta1",
  kind: "EMQX",
  metadata: { namespace: "home-automation", name: "emqx", generation: 1 },
  spec: { coreTemplate: { spec: { replicas: 3 } }, replicantTemplate: { spec: { replicas: 2 } } },
  ...(status ? { status } : {}),
});
const nodes = (n: number, role: string, state = "running") =>
  Array.from({ length: n }, (_, i) => ({ node: `emqx@${role}-${i}`, node_status: state, role }));
const healthyEmqx = {
  conditions: [{ type: "Ready", status: "True" }],
  coreNodesStatus: { replicas: 3, readyReplicas: 3 },
  coreNodes: nodes(3, "core"),
  replicantNodesStatus: { replicas: 2, readyReplicas: 2 },
  replicantNodes: nodes(2, "replicant"),
};
const mqtt = binding({ reader: "mqtt-cluster", product: "emqx-operator" });
const EMQX_KEY = "apps.emqx.io/v2beta1/EMQX";

Deno.test("mqtt-cluster covers every core and replicant node, not only Ready", () => {
  assertEquals(readBinding(mqtt, inputs({ [EMQX_KEY]: [emqx(healthyEmqx)] }), NOW).verdict, "pass");
  const core = readBinding(
    mqtt,
    inputs({
      [EMQX_KEY]: [emqx({
        ...healthyEmqx,
        coreNodes: [...nodes(2, "core"), ...nodes(1, "core", "stopped")],
      })],
    }),
    NOW,
  );
  assertEquals([core.verdict, core.reason], ["fail", "HealthMembersMissing"]);
  assert(core.message.includes("core nodes: 2 running"), core.message);
  const replicant = readBinding(
    mqtt,
    inputs({
      [EMQX_KEY]: [emqx({
        ...healthyEmqx,
        replicantNodes: nodes(1, "replicant"),
      })],
    }),
    NOW,
  );
  assertEquals(replicant.verdict, "fail");
  const notReady = readBinding(
    mqtt,
    inputs({
      [EMQX_KEY]: [emqx({
        ...healthyEmqx,
        conditions: [{ type: "Ready", status: "False" }],
      })],
    }),
    NOW,
  );
  assertEquals(notReady.verdict, "fail");
  assertEquals(
    readBinding(mqtt, inputs({ [EMQX_KEY]: [emqx(undefined)] }), NOW).verdict,
    "unreadable",
  );
});

Deno.test("the four readers evaluate rows 17 and 18, by the label recorded with each result", () => {
  const labels = [objectStore, broker, metrics, mqtt].map((b) =>
    readBinding(b, inputs({}), NOW).reader
  );
  assertEquals(labels.map(rowOfReader), [
    "ObjectStoreAndBrokerHealthy",
    "ObjectStoreAndBrokerHealthy",
    "MetricsAndMqttHealthy",
    "MetricsAndMqttHealthy",
  ]);
});
