/**
 * What apid does to a call before the Talos model sees it, shared by the socket twin's handlers
 * (`server.ts`) and the in-process port (`../inproc/talos.ts`) so both route a target and take
 * its transport faults by the same rules.
 */
import type { Fault, FaultKind, FaultSchedule } from "../faults.ts";
import type { MethodSpec } from "./methods.ts";
import { GRPC, type TalosCluster, type TalosNode, TalosSimError } from "./model.ts";

/** The message of a call whose connection was cut (a lost response in `mode: reset`). */
export const RESET_MESSAGE = "simulated: connection reset by peer";

/** The fault kinds that act on the call's transport rather than inside the machine. */
const TRANSPORT_KINDS: readonly FaultKind[] = [
  "lose-response",
  "delay-landing",
  "unavailable",
  "deadline-exceeded",
];

/** The transport faults that refuse a call before it runs (all a read without effect can take). */
export const REFUSALS: readonly FaultKind[] = ["unavailable", "deadline-exceeded"];

/** The machine a `node` target names; UNAVAILABLE, as a dial that finds no one, otherwise. */
export function routeToNode(cluster: TalosCluster, target: string): TalosNode {
  const node = cluster.find(target);
  if (!node) {
    throw new TalosSimError(
      GRPC.UNAVAILABLE,
      `connection error: dial tcp ${target}:50000: no route to host`,
    );
  }
  return node;
}

/**
 * Takes a transport fault armed for this method on this machine. `unavailable` and
 * `deadline-exceeded` refuse the call here (thrown); `lose-response` and `delay-landing` are
 * returned for the caller to act out; no transport fault armed: undefined (nothing is taken).
 */
export function takeTransportFault(
  faults: FaultSchedule,
  spec: MethodSpec,
  node: TalosNode,
  clock: { now(): number },
): Fault | undefined {
  // By kind: a stale read armed at the same point is the read's business, not the transport's.
  const taken = faults.takeKind(TRANSPORT_KINDS, spec.point, node.name, clock.now());
  if (!taken) return undefined;
  if (taken.kind === "unavailable") {
    throw new TalosSimError(GRPC.UNAVAILABLE, "simulated: upstream connection refused");
  }
  if (taken.kind === "deadline-exceeded") {
    throw new TalosSimError(GRPC.DEADLINE_EXCEEDED, "simulated: context deadline exceeded");
  }
  return taken;
}
