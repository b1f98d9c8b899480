/**
 * Which safeguard row a health binding evaluates, by the reader that produced its result. The
 * label is recorded with every result (`health_results.reader`), so a report maps results to rows
 * from the record alone: `nodes`, `talos-etcd`, `talos-services` and `node-versions` are the
 * cluster gate (row 13), `pdb-feasibility` the disruption budgets (14), `workloads` the workload
 * readiness (15), a `kube-object` reader over a database operator's own resource the database
 * operator (16), `object-store-endpoint` and `broker-streams` the object store and broker routes
 * (17), `metrics-storage` and `mqtt-cluster` the metrics-storage operator and MQTT cluster (18).
 */
import type { Binding } from "../health/policy_schema.ts";
import { kubeObjectCheck } from "../health/policy_structure.ts";
import type { SafeguardId } from "./table.ts";

/** The label recorded with a result: the reader kind, plus `<apiVersion>/<Kind>` for `kube-object`. */
export function readerLabel(b: Binding): string {
  if (b.reader !== "kube-object") return b.reader;
  const { selection } = kubeObjectCheck(b);
  return `kube-object ${selection.apiVersion}/${selection.kind}`;
}

/**
 * API groups of database operators whose own resources carry phase and readiness (CloudNativePG,
 * Zalando, Crunchy, Percona, MariaDB, MongoDB Community). A kube-object reader over any other
 * group evaluates no database-operator row.
 */
const DATABASE_OPERATOR_GROUPS: ReadonlySet<string> = new Set([
  "postgresql.cnpg.io",
  "acid.zalan.do",
  "postgres-operator.crunchydata.com",
  "pxc.percona.com",
  "ps.percona.com",
  "psmdb.percona.com",
  "k8s.mariadb.com",
  "mongodbcommunity.mongodb.com",
]);

const BY_KIND: Readonly<Record<string, SafeguardId>> = {
  "nodes": "ClusterGate",
  "talos-etcd": "ClusterGate",
  "talos-services": "ClusterGate",
  "node-versions": "ClusterGate",
  "pdb-feasibility": "DisruptionBudgetsAudited",
  "workloads": "WorkloadsReady",
  "object-store-endpoint": "ObjectStoreAndBrokerHealthy",
  "broker-streams": "ObjectStoreAndBrokerHealthy",
  "metrics-storage": "MetricsAndMqttHealthy",
  "mqtt-cluster": "MetricsAndMqttHealthy",
};

/** The row a recorded reader label evaluates, if any. */
export function rowOfReader(label: string): SafeguardId | undefined {
  const [kind, resource] = label.split(" ", 2);
  if (kind === "kube-object") {
    const group = (resource ?? "").split("/")[0] ?? "";
    return DATABASE_OPERATOR_GROUPS.has(group) ? "DatabaseOperatorReady" : undefined;
  }
  return kind === undefined ? undefined : BY_KIND[kind];
}

/** Rows health bindings can evaluate, with the readers that would. */
export const HEALTH_ROWS: ReadonlyArray<readonly [SafeguardId, string]> = [
  ["ClusterGate", "nodes, talos-etcd, talos-services or node-versions"],
  ["DisruptionBudgetsAudited", "pdb-feasibility"],
  ["WorkloadsReady", "workloads"],
  ["DatabaseOperatorReady", "kube-object over a database operator's resource"],
  ["ObjectStoreAndBrokerHealthy", "object-store-endpoint or broker-streams"],
  ["MetricsAndMqttHealthy", "metrics-storage or mqtt-cluster"],
];
