/**
 * The events a real cluster records as things happen, for a practice cluster: the scheduler's
 * `Scheduled`, the kubelet's `Started` and `Killing` for pods, and `NodeNotSchedulable` /
 * `NodeSchedulable` / `NodeNotReady` / `NodeReady` for nodes, as core/v1 Events, so
 * `kubectl get events` and the Events of `kubectl describe` tell what a drain or a reboot did.
 * Objects loaded with the twin start quiet; only changes while it runs are recorded.
 */
import type { SimClock } from "../clock.ts";
import { isoSeconds, type Obj, type Store } from "./store.ts";

type R = Record<string, unknown>;

const rec = (v: unknown): R => (v && typeof v === "object" ? v as R : {});

interface Seen {
  node?: string;
  running: boolean;
  deleting: boolean;
}

interface NodeSeen {
  unschedulable: boolean;
  ready: boolean;
}

function nodeReady(n: Obj): boolean {
  return ((rec(n.status).conditions ?? []) as R[]).some((c) =>
    c.type === "Ready" && c.status === "True"
  );
}

/** Starts recording events; returns a function that stops it. */
export function startEventRecorder(deps: { store: Store; clock: SimClock }): () => void {
  const { store, clock } = deps;
  const pods = store.findType("", "v1", "pods"), nodes = store.findType("", "v1", "nodes");
  const events = store.findType("", "v1", "events");
  if (!pods || !nodes || !events) return () => {};
  let seq = 0;
  const record = (
    involved: Obj,
    kind: string,
    reason: string,
    message: string,
    source: { component: string; host?: string },
  ) => {
    const now = isoSeconds(clock.now());
    const ns = involved.metadata.namespace ?? "default";
    // Created after the change that caused it has been stored, never inside the store's watch.
    queueMicrotask(() =>
      store.create(events, {
        apiVersion: "v1",
        kind: "Event",
        metadata: {
          name: `${involved.metadata.name}.${(clock.now() * 1000 + seq++).toString(16)}`,
          namespace: ns,
        },
        involvedObject: {
          apiVersion: "v1",
          kind,
          name: involved.metadata.name,
          ...(involved.metadata.namespace ? { namespace: ns } : {}),
          uid: involved.metadata.uid ?? involved.metadata.name,
        },
        reason,
        message,
        source,
        firstTimestamp: now,
        lastTimestamp: now,
        count: 1,
        type: "Normal",
        reportingComponent: source.component,
        reportingInstance: source.host ?? "",
      })
    );
  };
  const podState = (p: Obj): Seen => ({
    ...(typeof rec(p.spec).nodeName === "string" ? { node: rec(p.spec).nodeName as string } : {}),
    running: rec(p.status).phase === "Running",
    deleting: p.metadata.deletionTimestamp !== undefined,
  });
  const nodeState = (n: Obj): NodeSeen => ({
    unschedulable: rec(n.spec).unschedulable === true,
    ready: nodeReady(n),
  });
  const seenPods = new Map<string, Seen>();
  const seenNodes = new Map<string, NodeSeen>();
  for (const p of store.list(pods)) seenPods.set(p.metadata.uid ?? "", podState(p));
  for (const n of store.list(nodes)) seenNodes.set(n.metadata.name, nodeState(n));
  const containerOf = (p: Obj) =>
    String(((rec(p.spec).containers ?? []) as R[])[0]?.name ?? p.metadata.name);

  const stopPods = store.watch(pods, (e) => {
    const p = e.object, uid = p.metadata.uid ?? "";
    if (e.type === "DELETED") return void seenPods.delete(uid);
    const before = seenPods.get(uid) ?? { running: false, deleting: false };
    const now = podState(p);
    seenPods.set(uid, now);
    const ref = `${p.metadata.namespace}/${p.metadata.name}`;
    if (now.node && !before.node) {
      record(p, "Pod", "Scheduled", `Successfully assigned ${ref} to ${now.node}`, {
        component: "default-scheduler",
      });
    }
    if (now.running && !before.running && now.node) {
      record(p, "Pod", "Started", `Started container ${containerOf(p)}`, {
        component: "kubelet",
        host: now.node,
      });
    }
    if (now.deleting && !before.deleting && now.node) {
      record(p, "Pod", "Killing", `Stopping container ${containerOf(p)}`, {
        component: "kubelet",
        host: now.node,
      });
    }
  });
  const stopNodes = store.watch(nodes, (e) => {
    const n = e.object, name = n.metadata.name;
    if (e.type === "DELETED") return void seenNodes.delete(name);
    const before = seenNodes.get(name);
    const now = nodeState(n);
    seenNodes.set(name, now);
    if (!before) return;
    const status = (s: string) => `Node ${name} status is now: ${s}`;
    if (now.unschedulable !== before.unschedulable) {
      const reason = now.unschedulable ? "NodeNotSchedulable" : "NodeSchedulable";
      record(n, "Node", reason, status(reason), { component: "kubelet", host: name });
    }
    if (now.ready !== before.ready) {
      const reason = now.ready ? "NodeReady" : "NodeNotReady";
      record(n, "Node", reason, status(reason), {
        component: now.ready ? "kubelet" : "node-controller",
        ...(now.ready ? { host: name } : {}),
      });
    }
  });
  return () => {
    stopPods();
    stopNodes();
  };
}
