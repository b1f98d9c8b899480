/**
 * Reads the apiserver's `apiserver_requested_deprecated_apis` gauge from its `/metrics` text:
 * one series per deprecated API that clients requested since that apiserver started, labelled
 * `group`, `version`, `resource`, `subresource` and `removed_release` (the Kubernetes minor that
 * removes it). Behind a load balancer `/metrics` answers from one apiserver; its view covers the
 * requests that instance served. Pure.
 */
import type { DeprecatedApiUse } from "./preflight.ts";

const SERIES = /^apiserver_requested_deprecated_apis\{([^}]*)\}\s+(\S+)/;
const LABEL = /([a-z_]+)="((?:[^"\\]|\\.)*)"/g;

/** Every requested deprecated API in a Prometheus text exposition (value > 0). */
export function parseDeprecatedApiMetrics(text: string): DeprecatedApiUse[] {
  const out: DeprecatedApiUse[] = [];
  for (const line of text.split("\n")) {
    const m = SERIES.exec(line);
    if (!m || !(Number(m[2]) > 0)) continue;
    const labels = new Map([...m[1]!.matchAll(LABEL)].map((l) => [l[1]!, l[2]!]));
    out.push({
      group: labels.get("group") ?? "",
      version: labels.get("version") ?? "",
      resource: labels.get("resource") ?? "",
      removedRelease: labels.get("removed_release") ?? "",
    });
  }
  return out;
}
