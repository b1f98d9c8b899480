/**
 * The twin store's `put`: a write that changes nothing returns the stored object (no new
 * resourceVersion, no watch event); a change stores a deep copy of its own (the caller's object,
 * or the stored one it spread, changed afterwards changes nothing stored) with a new version, and
 * moves the generation only when the spec changed.
 */
import { deepStrictEqual as assertEquals, ok as assert, strictEqual } from "node:assert/strict";
import { type Obj, Store, type StoredEvent } from "../../../src/sim/kube/store.ts";

type R = Record<string, unknown>;

function setUp() {
  const store = new Store({ now: () => 0 });
  const pdbs = store.findType("policy", "v1", "poddisruptionbudgets")!;
  const events: StoredEvent[] = [];
  store.watch(pdbs, (e) => events.push(e));
  const created = store.create(pdbs, {
    metadata: { name: "db", namespace: "apps" },
    spec: { minAvailable: 1, selector: { matchLabels: { app: "db" } } },
    status: { currentHealthy: 1 },
  })!;
  return { store, pdbs, events, created };
}

Deno.test("store put: an unchanged object is the stored one, with no new version or event", () => {
  const { store, pdbs, events, created } = setUp();
  const again = store.put(pdbs, { ...created, status: { ...(created.status as R) } });
  strictEqual(again, created);
  strictEqual(store.resourceVersion, Number(created.metadata.resourceVersion));
  assertEquals(events.map((e) => e.type), ["ADDED"]);
});

Deno.test("store put: a change is stored as a copy of its own, generation by spec only", () => {
  const { store, pdbs, events, created } = setUp();
  const status = { currentHealthy: 2, nested: { list: [1, 2] } };
  const input: Obj = { ...created, status };
  const stored = store.put(pdbs, input);
  assert(stored !== input && stored.metadata !== created.metadata);
  strictEqual(stored.metadata.generation, 1);
  strictEqual(
    stored.metadata.resourceVersion,
    String(Number(created.metadata.resourceVersion) + 1),
  );
  strictEqual(stored.metadata.uid, created.metadata.uid);
  // Changing what the caller passed (or what it spread from) changes nothing stored.
  status.nested.list.push(3);
  (input.metadata as R)["labels"] = { changed: "yes" };
  assertEquals(store.get(pdbs, "apps", "db")!.status, {
    currentHealthy: 2,
    nested: { list: [1, 2] },
  });
  strictEqual(store.get(pdbs, "apps", "db")!.metadata.labels, undefined);
  strictEqual(
    created.metadata.resourceVersion,
    String(Number(stored.metadata.resourceVersion) - 1),
  );

  const respec = store.put(pdbs, { ...stored, spec: { ...(stored.spec as R), minAvailable: 2 } });
  strictEqual(respec.metadata.generation, 2);
  assertEquals(events.map((e) => e.type), ["ADDED", "MODIFIED", "MODIFIED"]);
  strictEqual(events[2]!.object, respec);
});

Deno.test("store put: the same fields in another key order are a change, as their JSON is", () => {
  const { store, pdbs, created } = setUp();
  const { spec, ...rest } = created;
  const reordered = store.put(pdbs, { ...rest, spec } as Obj);
  assert(reordered !== created);
  strictEqual(reordered.metadata.generation, 1);
});
