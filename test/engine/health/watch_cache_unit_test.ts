/**
 * The watch cache's freshness edges, on a scripted list/watch (no sockets): which watch's
 * events count, and which ends of a watch may be resumed from the last version.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { WatchCache } from "../../../src/engine/health/watch_cache.ts";
import type {
  KubeObject,
  KubeResourceRef,
  KubeWatchEnd,
  KubeWatchEvent,
} from "../../../src/ports/kube.ts";

const PODS: KubeResourceRef = { group: "", version: "v1", plural: "pods", namespaced: true };
const clock = { now: () => 1_000, sleep: () => Promise.resolve() };

const pod = (name: string, rv: string): KubeObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { namespace: "db", name, resourceVersion: rv },
});

/** A list/watch whose watches the test drives: each watch's events and end. */
function scripted() {
  const watches: Array<{
    emit: (e: KubeWatchEvent) => void;
    end: (e: KubeWatchEnd) => void;
    resourceVersion: string | undefined;
  }> = [];
  let listRv = 10;
  const port = {
    listObjects: () =>
      Promise.resolve({ items: [pod("pg-0", String(listRv))], resourceVersion: String(listRv++) }),
    watch: (
      _ref: KubeResourceRef,
      opts: { resourceVersion?: string },
      onEvent: (e: KubeWatchEvent) => void,
    ) =>
      new Promise<KubeWatchEnd>((resolve) => {
        watches.push({ emit: onEvent, end: resolve, resourceVersion: opts.resourceVersion });
      }),
  };
  return { port: port as never, watches };
}

const names = (c: WatchCache) => c.snapshot().items.map((o) => o.metadata?.name).sort();
const settle = () => new Promise((r) => setTimeout(r, 0));

Deno.test("a watch the cache abandoned for a newer list changes nothing it holds", async () => {
  const s = scripted();
  const cache = new WatchCache(s.port, PODS, clock);
  await cache.sync();
  await cache.refresh({});
  assertEquals(s.watches.length, 2);
  // The first watch still delivers (its stream had not closed yet): ignored.
  s.watches[0]!.emit({ type: "ADDED", object: pod("ghost", "99") });
  assertEquals(names(cache), ["pg-0"]);
  s.watches[1]!.emit({ type: "ADDED", object: pod("pg-1", "12") });
  assertEquals(names(cache), ["pg-0", "pg-1"]);
});

Deno.test("only a cleanly closed watch is resumed; an expired or failed one leaves the cache stale for a list", async () => {
  for (
    const end of [
      { kind: "expired" },
      { kind: "failed", reason: "KubeUnreachable", message: "reset" },
    ] as const
  ) {
    const s = scripted();
    const cache = new WatchCache(s.port, PODS, clock);
    await cache.sync();
    s.watches[0]!.end(end);
    await settle();
    assertEquals(cache.freshness.state, "stale", end.kind);
    // Events may have been lost: nothing resumes from the old version.
    assertEquals(s.watches.length, 1, `${end.kind}: a watch was resumed`);
  }
  const s = scripted();
  const cache = new WatchCache(s.port, PODS, clock);
  await cache.sync();
  s.watches[0]!.end({ kind: "closed" });
  await settle();
  assertEquals(cache.freshness.state, "stale");
  assertEquals(s.watches.length, 2);
  assertEquals(s.watches[1]!.resourceVersion, "10");
  s.watches[1]!.emit({ type: "MODIFIED", object: pod("pg-0", "11") });
  assertEquals(cache.freshness.state, "live");
});
