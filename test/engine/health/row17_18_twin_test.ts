/**
 * Rows 17 and 18 on the in-process twin's home-ops cluster, read through the real evidence path
 * (`ClusterEvidence`: watch caches for Prometheus, EMQX and the NATS pods, proxy GETs for the
 * object store and every NATS server) with the policy the demo binds. A server that stops
 * answering ok fails the round naming it; a stopped server pod is never a pass.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { parseHealthPolicy } from "../../../src/domain/health/policy_parse.ts";
import { collectRound } from "../../../src/engine/health_round.ts";
import { ClusterEvidence } from "../../../src/engine/health/cluster_evidence.ts";
import { startInprocTwin } from "../../../src/sim/inproc/cluster.ts";
import { homeOps } from "../../_helpers/inproc_world.ts";

const ROOT = new URL("../../../", import.meta.url).pathname;
const ROW_BINDINGS = ["object-store-endpoint", "broker-streams", "metrics-storage", "mqtt-cluster"];

async function policy() {
  const file = "policies/home-ops.yaml";
  const parsed = parseHealthPolicy(await Deno.readTextFile(join(ROOT, file)), file);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  const p = parsed.policy;
  return { ...p, bindings: p.bindings.filter((b) => ROW_BINDINGS.includes(b.name)) };
}

async function world() {
  const twin = startInprocTwin({ description: await homeOps() });
  const evidence = new ClusterEvidence(twin.kube, undefined, twin.timeoutClock);
  const round = async () =>
    await collectRound({ clock: twin.timeoutClock, evidence }, await policy(), {
      intervalMs: 20_000,
    });
  return { twin, evidence, round, stop: () => (evidence.stop(), twin.stop()) };
}

Deno.test("the home-ops twin passes rows 17 and 18 on fresh reads of every route and member", async () => {
  const w = await world();
  try {
    const r = await w.round();
    assertEquals(
      r.results.map((x) => [x.binding, x.verdict]),
      ROW_BINDINGS.map((b) => [b, "pass"]),
    );
    const broker = r.results.find((x) => x.binding === "broker-streams")!;
    assertEquals(broker.coverage, { required: 3, observed: 3 });
    assertEquals(w.twin.controllers.routes.requests, 4, "one GET per server and one for the store");
    assertEquals(w.twin.kube.stats.mutating, 0, "reading routes writes nothing");
  } finally {
    w.stop();
  }
});

Deno.test("a NATS server whose streams lag fails the round, naming the server", async () => {
  const w = await world();
  try {
    w.twin.controllers.routes.set(
      { namespace: "messaging", kind: "pod", name: "nats-1", port: "8222", path: "/healthz" },
      {
        status: 503,
        body: '{"status":"unavailable","error":"JetStream stream \'$G > KV\' is not current"}',
      },
    );
    const r = await w.round();
    const broker = r.results.find((x) => x.binding === "broker-streams")!;
    assertEquals([r.verdict, broker.verdict, broker.reason], ["fail", "fail", "HealthRouteFailed"]);
    assert(broker.message.startsWith("server messaging/nats-1:"), broker.message);
  } finally {
    w.stop();
  }
});

Deno.test("a stopped NATS server pod is unreadable (the proxy's own 503), never a pass", async () => {
  const w = await world();
  try {
    const pods = w.twin.controllers.pods;
    const pod = w.twin.store.get(pods, "messaging", "nats-2")!;
    w.twin.store.put(pods, { ...pod, status: { ...(pod.status as object), phase: "Pending" } });
    const r = await w.round();
    const broker = r.results.find((x) => x.binding === "broker-streams")!;
    assertEquals([broker.verdict, broker.reason], ["unreadable", "HealthRouteUnreachable"]);
    assert(broker.message.includes("nats-2"), broker.message);
  } finally {
    w.stop();
  }
});

Deno.test("a Kubernetes client without proxy access leaves the route bindings unreadable", async () => {
  const twin = startInprocTwin({ description: await homeOps() });
  const { listObjects, watch } = twin.kube;
  const noProxy = { listObjects: listObjects.bind(twin.kube), watch: watch.bind(twin.kube) };
  const evidence = new ClusterEvidence(noProxy, undefined, twin.timeoutClock);
  try {
    const r = await collectRound({ clock: twin.timeoutClock, evidence }, await policy(), {
      intervalMs: 20_000,
    });
    const verdicts = Object.fromEntries(r.results.map((x) => [x.binding, x.verdict]));
    assertEquals(verdicts["object-store-endpoint"], "unreadable");
    assertEquals(verdicts["broker-streams"], "unreadable");
  } finally {
    evidence.stop();
    twin.stop();
  }
});
