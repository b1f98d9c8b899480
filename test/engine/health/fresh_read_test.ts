/**
 * Rounds that decide a terminal state read fresh lists, never a watch cache that may have skipped
 * events; a list older than a version already seen is refused, never judged (docs/dst.md,
 * Findings: a lagging cache turned an upgraded node `failed`).
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { CairnError } from "../../../src/domain/errors.ts";
import { parseHealthPolicy } from "../../../src/domain/health/policy_parse.ts";
import { ClusterEvidence } from "../../../src/engine/health/cluster_evidence.ts";
import { WatchCache } from "../../../src/engine/health/watch_cache.ts";
import { journalHealthGate } from "../../../src/engine/executor/health_gate.ts";
import type { Journal } from "../../../src/ports/journal.ts";
import type {
  KubeList,
  KubeObject,
  KubeWatchEnd,
  KubeWatchEvent,
} from "../../../src/ports/kube.ts";
import { SimClock } from "../../../src/sim/clock.ts";
import type { ListWatch } from "../../../src/engine/health/watch_cache.ts";

const NODES = { group: "", version: "v1", plural: "nodes", namespaced: false };

function node(name: string, rv: number, unschedulable: boolean): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: { name, uid: `uid-${name}`, resourceVersion: String(rv) },
    spec: unschedulable ? { unschedulable: true } : {},
    status: { conditions: [{ type: "Ready", status: "True" }] },
  } as KubeObject;
}

/**
 * A server of Node objects whose watch can be told to lose events (a watch that skips them), and
 * whose next list can be answered from an older state (a lagging replica).
 */
class FakeServer implements ListWatch {
  rv = 5;
  objects = new Map([["n1", node("n1", 5, true)]]);
  lists = 0;
  dropEvents = false;
  nextListFrom: KubeList<KubeObject> | undefined;
  #watchers = new Set<(e: KubeWatchEvent) => void>();

  listObjects(): Promise<KubeList<KubeObject>> {
    this.lists++;
    const old = this.nextListFrom;
    this.nextListFrom = undefined;
    return Promise.resolve(
      old ?? { items: [...this.objects.values()], resourceVersion: String(this.rv) },
    );
  }

  watch(
    _ref: unknown,
    opts: { signal?: AbortSignal },
    onEvent: (e: KubeWatchEvent) => void,
  ): Promise<KubeWatchEnd> {
    this.#watchers.add(onEvent);
    return new Promise((resolve) =>
      opts.signal?.addEventListener("abort", () => {
        this.#watchers.delete(onEvent);
        resolve({ kind: "aborted" });
      }, { once: true })
    );
  }

  set(name: string, unschedulable: boolean) {
    const o = node(name, ++this.rv, unschedulable);
    this.objects.set(name, o);
    if (!this.dropEvents) { for (const w of this.#watchers) w({ type: "MODIFIED", object: o }); }
  }
}

const clock = () => new SimClock(Date.parse("2026-12-01T00:00:00Z"));

Deno.test("watch cache: a fresh read lists again once per round, and sees what the watch lost", async () => {
  const server = new FakeServer();
  const cache = new WatchCache(server, NODES, clock());
  await cache.sync();
  server.dropEvents = true;
  server.set("n1", false);
  await cache.sync();
  assertEquals(server.lists, 1, "a live cache does not list");
  const spec = () => cache.snapshot().items[0]!["spec"] as { unschedulable?: boolean };
  assertEquals(spec().unschedulable, true, "the watch lost the uncordon");
  const round = {};
  await Promise.all([cache.refresh(round), cache.refresh(round)]);
  assertEquals(server.lists, 2, "bindings of one round share one list");
  assertEquals(spec().unschedulable, undefined, "the fresh list holds the uncordon");
  await cache.refresh({});
  assertEquals(server.lists, 3, "the next round lists again");
});

Deno.test("watch cache: a fresh list older than a version already seen is refused, the cache stale", async () => {
  const server = new FakeServer();
  const cache = new WatchCache(server, NODES, clock());
  await cache.sync();
  const before = await server.listObjects();
  server.set("n1", false); // delivered: the cache has seen version 6
  server.nextListFrom = before; // a lagging replica answers with version 5
  const e = await cache.refresh({}).then(() => undefined, (x) => x);
  assert(e instanceof CairnError && e.reason === "HealthListStale", String(e));
  assertEquals(cache.freshness.state, "stale");
  await cache.refresh({});
  assertEquals(cache.freshness.state, "live", "a current list makes it live again");
});

Deno.test("watch cache: a fresh list that fails leaves the cache stale, not live on old content", async () => {
  const server = new FakeServer();
  const cache = new WatchCache(server, NODES, clock());
  await cache.sync();
  server.listObjects = () => Promise.reject(new Error("connect ECONNREFUSED"));
  await cache.refresh({}).then(() => assert(false, "must throw"), () => undefined);
  assertEquals(cache.freshness.state, "stale");
});

Deno.test("health gate: verification and post-gate rounds read fresh lists; gate rounds the cache", async () => {
  const server = new FakeServer();
  const c = clock();
  const parsed = parseHealthPolicy(
    "apiVersion: cairn.dev/v1alpha1\nkind: HealthPolicy\nmetadata: {name: t, cluster: c}\n" +
      "spec:\n  bindings:\n    - {name: nodes-ready, reader: nodes, requiredCoverage: 1}\n",
    "t.yaml",
  );
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  const journal = { recordHealthRound: () => Promise.resolve("hr_1") } as unknown as Journal;
  const gate = journalHealthGate({
    clock: c,
    journal,
    evidence: new ClusterEvidence(server, undefined, c),
    policy: parsed.policy,
    cluster: "c",
    intervalMs: 30_000,
  });
  assertEquals((await gate.round("gate", {})).verdict, "fail", "n1 is cordoned");
  server.dropEvents = true;
  server.set("n1", false);
  assertEquals((await gate.round("gate", {})).verdict, "fail", "a gate round reads the cache");
  assertEquals(server.lists, 1);
  assertEquals((await gate.round("verify", {})).verdict, "pass");
  assertEquals((await gate.round("post-gate", {})).verdict, "pass");
  assertEquals(server.lists, 3, "each deciding round listed");
});

Deno.test("watch cache: a fresh list superseded by a later one waits for it, never judging the content before both", async () => {
  const server = new FakeServer();
  const cache = new WatchCache(server, NODES, clock());
  await cache.sync();
  server.dropEvents = true;
  server.set("n1", false); // the watch lost the uncordon: the cache says cordoned
  const superseded = cache.refresh({}); // its list is answered at once
  // A second round's list, started before the first one's answer arrives, hangs until released.
  let release: () => void = () => {};
  const answer = server.listObjects();
  server.listObjects = () => new Promise((resolve) => (release = () => void answer.then(resolve)));
  const later = cache.refresh({});
  let settled = false;
  void superseded.then(() => (settled = true));
  await new Promise((r) => setTimeout(r, 0));
  assertEquals(settled, false, "the superseded caller waits for the later list");
  release();
  await superseded;
  const spec = cache.snapshot().items[0]!["spec"] as { unschedulable?: boolean };
  assertEquals(spec.unschedulable, undefined, "and judges what the later list brought");
  await later;
});
