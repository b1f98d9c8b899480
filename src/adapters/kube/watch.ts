/**
 * One watch stream through the library's `Watch`, resolved with how it ended: our abort, a clean
 * close by the server, 410 Gone (as an HTTP status or as an in-stream ERROR event), or a failure.
 */
import type * as K8s from "@kubernetes/client-node";
import type {
  KubeObject,
  KubeWatchEnd,
  KubeWatchEvent,
  KubeWatchEventType,
  KubeWatchOptions,
} from "../../ports/kube.ts";
import { httpStatusOf, parseStatus, reasonForHttpStatus, toKubeError } from "./errors.ts";

const TYPES = new Set<string>(["ADDED", "MODIFIED", "DELETED", "BOOKMARK"]);

function errorEventEnd(obj: unknown): KubeWatchEnd {
  const s = parseStatus(obj);
  const code = s?.code ?? 500;
  if (code === 410) return { kind: "expired" };
  return {
    kind: "failed",
    reason: reasonForHttpStatus(code),
    message: s?.message ?? "watch error",
  };
}

function doneEnd(err: unknown, signal: AbortSignal | undefined, path: string): KubeWatchEnd {
  if (err === null || err === undefined) return { kind: "closed" };
  if (signal?.aborted || (err instanceof Error && err.name === "AbortError")) {
    return { kind: "aborted" };
  }
  if (httpStatusOf(err) === 410) return { kind: "expired" };
  const e = toKubeError(err, `WATCH ${path}`);
  return { kind: "failed", reason: e.reason, message: e.message };
}

/** Streams `path` from `opts.resourceVersion` until the watch ends. */
export function watchResource(
  watch: K8s.Watch,
  path: string,
  opts: KubeWatchOptions,
  onEvent: (event: KubeWatchEvent) => void,
): Promise<KubeWatchEnd> {
  if (opts.signal?.aborted) return Promise.resolve({ kind: "aborted" });
  return new Promise((resolve) => {
    let ended = false;
    let controller: AbortController | undefined;
    const finish = (end: KubeWatchEnd) => {
      if (ended) return;
      ended = true;
      opts.signal?.removeEventListener("abort", onAbort);
      controller?.abort();
      resolve(end);
    };
    const onAbort = () => finish({ kind: "aborted" });
    opts.signal?.addEventListener("abort", onAbort, { once: true });
    const query: Record<string, string> = {};
    if (opts.resourceVersion !== undefined) query.resourceVersion = opts.resourceVersion;
    if (opts.labelSelector) query.labelSelector = opts.labelSelector;
    if (opts.fieldSelector) query.fieldSelector = opts.fieldSelector;
    watch.watch(path, query, (type: string, obj: unknown) => {
      if (ended) return;
      if (type === "ERROR") return finish(errorEventEnd(obj));
      if (TYPES.has(type)) {
        onEvent({ type: type as KubeWatchEventType, object: obj as KubeObject });
      }
    }, (err: unknown) => finish(doneEnd(err, opts.signal, path))).then(
      (c) => {
        controller = c;
        if (ended) c.abort();
      },
      (err: unknown) => finish(doneEnd(err, opts.signal, path)),
    );
  });
}
