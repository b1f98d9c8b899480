/**
 * How a Talos mutation's call ended, as the port reports it: shared by `GrpcTalos` and the
 * in-process port (`sim/inproc/talos.ts`), so both classify a stream's end and an abort before
 * sending, and read the installer's completion line, by the same rules.
 */
import type { TalosMutation } from "../../ports/talos.ts";
import { Code, mutationFailure } from "./errors.ts";

/** Talos method paths (cairn's `proto/` subset) named by both clients. */
export const MACHINE_SERVICE = "/machine.MachineService/";
export const IMAGE_PULL = "/machine.ImageService/Pull";
export const LIFECYCLE_UPGRADE = "/machine.LifecycleService/Upgrade";
export const COSI_GET = "/cosi.resource.State/Get";

/** The call was aborted before it was sent: nothing reached the node. */
export function notSent<T>(node: string, method: string): TalosMutation<T> {
  return {
    outcome: "not-sent",
    reason: "TalosCancelled",
    grpcCode: -1,
    message: "aborted before sending",
    node,
    method,
  };
}

/**
 * A mutation stream's end: ok only with its final item (`value`); an OK status without it is an
 * incomplete stream; a failure after some items arrived means the request landed.
 */
export function streamMutationOutcome<T>(
  end: { readonly code: number; readonly message: string; readonly items: readonly unknown[] },
  value: T | undefined,
  node: string,
  path: string,
): TalosMutation<T> {
  if (end.code === Code.OK && value !== undefined) return { outcome: "ok", value };
  if (end.code === Code.OK) {
    return {
      ...mutationFailure(Code.UNKNOWN, "stream ended without its final item", node, path, true),
      reason: "TalosStreamIncomplete",
    };
  }
  return mutationFailure(end.code, end.message, node, path, end.items.length > 0);
}

/** The tag the installer reports as installed (`installation of <tag> complete`), if it did. */
export function completedInstallTag(lines: readonly string[]): string | undefined {
  return lines.map((l) => /installation of (\S+) complete/.exec(l)?.[1]).find(Boolean);
}
