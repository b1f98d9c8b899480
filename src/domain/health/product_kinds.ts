/**
 * The versioned resources the product readers of rows 17 and 18 read. A predicate is written for
 * exactly this apiVersion: another version is another contract and needs its own reader.
 */
export const PROMETHEUS = { apiVersion: "monitoring.coreos.com/v1", kind: "Prometheus" } as const;
export const EMQX = { apiVersion: "apps.emqx.io/v2beta1", kind: "EMQX" } as const;

/** Answers cut at this many bytes: a health route's answer is small; more is not read. */
export const ROUTE_MAX_BYTES = 64 * 1024;
