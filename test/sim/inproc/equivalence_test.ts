/**
 * The in-process twin against the socket twin: the same plan on the same cluster description
 * gives the executor's journal the same timeline — the same events in the same order with the same
 * bodies, at the same virtual times through the reboot — whether the executor reaches the models
 * through the real adapters (HTTPS, gRPC over mTLS, a Node child process) or the in-process ports.
 * Normalised: journal ids (random vs counter), Kubernetes resourceVersions (the socket twin's
 * start-up lets the operators write before the kubelet facts, the in-process one after), and
 * grpc-js's own deadline text. Health rounds are left out of the comparison, and times after the
 * reboot: the socket twin's watch caches are fed over HTTP in real time, so it may need one more
 * 5 s poll before a round sees the cluster settle; the in-process twin is deterministic.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import type { OperationDetail } from "../../../src/ports/journal.ts";
import type { Fault } from "../../../src/sim/faults.ts";
import { startInprocWorld } from "../../_helpers/inproc_world.ts";
import { onlyNodes, startTwinWorld } from "../../_helpers/twin_world.ts";

function timeline(d: OperationDetail): string[] {
  const rebootAnswered = d.events.findIndex((e) =>
    e.kind === "response" && d.attempts.some((a) => a.phase === "reboot" && e.body.includes(a.id))
  );
  return d.events.flatMap((e, i) =>
    e.kind === "health-round" ? [] : [
      `${e.kind}${i <= rebootAnswered ? ` @${e.atMs}` : ""} ${
        e.body
          .replace(/"(obs|att|op|hr|phs|act|ep|dc)_[A-Za-z0-9]+"/g, '"$1_*"')
          .replace(/"(rv|resourceVersion)":"\d+"/g, '"$1":"*"')
          .replace(/rv=\d+/g, "rv=*")
          .replace(/Deadline exceeded after [^"]*/g, "Deadline exceeded")
      }`,
    ]
  );
}

async function both(faults: readonly Fault[]) {
  const inproc = await startInprocWorld({ nodes: ["worker-1"], faults });
  let a: { outcome: string[]; timeline: string[] };
  try {
    const out = await inproc.run();
    a = {
      outcome: out.nodes.map((n) => `${n.node}:${n.state}:${n.reason}`),
      timeline: timeline((await inproc.operations())[0]!),
    };
  } finally {
    await inproc.close();
  }
  const socket = await startTwinWorld({ editPlan: onlyNodes("worker-1"), faults });
  try {
    const out = await socket.run();
    const op = (await socket.journal.listOperations())[0]!;
    const b = {
      outcome: out.nodes.map((n) => `${n.node}:${n.state}:${n.reason}`),
      timeline: timeline((await socket.journal.showOperation(op.id))!),
    };
    return { a, b };
  } finally {
    await socket.stop();
  }
}

Deno.test("in process and over sockets, a clean 1-node rollout writes the same journal timeline", async () => {
  const { a, b } = await both([]);
  assertEquals(a.outcome, ["worker-1:completed:CompletionObserved"]);
  assertEquals(a, b);
});

Deno.test("in process and over sockets, a lost reboot response writes the same journal timeline", async () => {
  // `mode: reset` answers UNAVAILABLE at once (no 20 s real deadline on the socket side).
  const { a, b } = await both([{
    kind: "lose-response",
    point: "talos.Reboot",
    target: "worker-1",
    params: { mode: "reset" },
  }]);
  assertEquals(a.outcome, ["worker-1:unresolved:RebootResponseLost"]);
  assertEquals(a, b);
});
