import type { Binding } from "../policy_schema.ts";
import type { BindingResult, ReadInputs } from "../types.ts";
import { readKubeObject } from "./kube_object.ts";
import { readNodes } from "./nodes.ts";
import { readPdbFeasibility } from "./pdb.ts";
import { readNodeVersions, readTalosEtcd, readTalosServices } from "./talos.ts";
import { readWorkloads } from "./workloads.ts";
import { readBrokerStreams, readObjectStoreEndpoint } from "./routes.ts";
import { readMetricsStorage, readMqttCluster } from "./products.ts";
import { readAlertmanagerAlerts } from "./alerts.ts";

/** Evaluates one binding over the evidence in `inputs` (pure). */
export function readBinding(b: Binding, inputs: ReadInputs, startedAtMs: number): BindingResult {
  switch (b.reader) {
    case "nodes":
      return readNodes(b, inputs, startedAtMs);
    case "workloads":
      return readWorkloads(b, inputs, startedAtMs);
    case "pdb-feasibility":
      return readPdbFeasibility(b, inputs, startedAtMs);
    case "kube-object":
      return readKubeObject(b, inputs, startedAtMs);
    case "talos-etcd":
      return readTalosEtcd(b, inputs, startedAtMs);
    case "talos-services":
      return readTalosServices(b, inputs, startedAtMs);
    case "node-versions":
      return readNodeVersions(b, inputs, startedAtMs);
    case "object-store-endpoint":
      return readObjectStoreEndpoint(b, inputs, startedAtMs);
    case "broker-streams":
      return readBrokerStreams(b, inputs, startedAtMs);
    case "metrics-storage":
      return readMetricsStorage(b, inputs, startedAtMs);
    case "mqtt-cluster":
      return readMqttCluster(b, inputs, startedAtMs);
    case "alertmanager-alerts":
      return readAlertmanagerAlerts(b, inputs, startedAtMs);
  }
}
