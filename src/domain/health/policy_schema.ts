import { z } from "../zod.ts";

/** A Kubernetes label selector as written in policy files (and in PDB specs). */
export const LabelSelectorSchema = z.strictObject({
  matchLabels: z.record(z.string(), z.string()).optional(),
  matchExpressions: z.array(z.strictObject({
    key: z.string().min(1),
    operator: z.enum(["In", "NotIn", "Exists", "DoesNotExist"]),
    values: z.array(z.string()).optional(),
  })).optional(),
});

/** Which nodes a binding covers: all nodes, the named ones, or those matching labels. */
const NodeSelectionSchema = z.strictObject({
  names: z.array(z.string().min(1)).min(1).optional(),
  labelSelector: LabelSelectorSchema.optional(),
});

/** A tuppr `healthChecks` entry, accepted unchanged. */
export const TupprHealthCheckSchema = z.strictObject({
  apiVersion: z.string().min(1),
  kind: z.string().min(1),
  name: z.string().min(1).optional(),
  namespace: z.string().min(1).optional(),
  labelSelector: LabelSelectorSchema.optional(),
  expr: z.string().min(1),
  timeout: z.string().regex(/^([0-9]+[smh])+$/).optional(),
  description: z.string().optional(),
});

const common = {
  name: z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/).max(63),
  description: z.string().optional(),
  /** Minimum number of subjects the selection must yield and read (default 1). */
  requiredCoverage: z.number().int().min(0).default(1),
  /** Evidence older than this is unreadable. */
  freshnessSeconds: z.number().int().positive().max(3600).default(60),
  /** Upper bound for this binding's reads; the round's remaining time bounds it further. */
  timeoutSeconds: z.number().int().positive().max(3600).default(30),
};

const NodesBinding = z.strictObject({
  ...common,
  reader: z.literal("nodes"),
  selection: NodeSelectionSchema.default({}),
});

const WorkloadsBinding = z.strictObject({
  ...common,
  reader: z.literal("workloads"),
  selection: z.strictObject({
    kinds: z.array(z.enum(["Deployment", "StatefulSet", "DaemonSet"])).min(1)
      .default(["Deployment", "StatefulSet", "DaemonSet"]),
    namespaces: z.array(z.string().min(1)).min(1).optional(),
    labelSelector: LabelSelectorSchema.optional(),
  }).default({ kinds: ["Deployment", "StatefulSet", "DaemonSet"] }),
});

const PdbBinding = z.strictObject({
  ...common,
  reader: z.literal("pdb-feasibility"),
  /** The nodes whose drain must be feasible; `target` = the operation's named node only. */
  selection: z.strictObject({
    nodes: z.union([z.literal("all"), z.literal("target"), NodeSelectionSchema]).default("all"),
  }).default({ nodes: "all" }),
  /** Also fail (not only report) temporary blockers. Permanent blockers always fail. */
  failOnTemporary: z.boolean().default(true),
  /**
   * Budgets whose blocking an operator resolves when the node is cordoned (CNPG switches the
   * primary over). An explicit, reviewed exception with its reason: the finding is still
   * reported, marked operator-handled, and the Eviction API still enforces the budget.
   */
  operatorHandled: z.array(z.strictObject({
    namespace: z.string().min(1),
    name: z.string().min(1),
    reason: z.string().min(10),
  })).default([]),
});

const KubeObjectSelection = z.strictObject({
  apiVersion: z.string().min(1),
  kind: z.string().min(1),
  /** Resource plural when it is not the lower-cased kind + "s". */
  plural: z.string().min(1).optional(),
  name: z.string().min(1).optional(),
  namespace: z.string().min(1).optional(),
  labelSelector: LabelSelectorSchema.optional(),
});

const KubeObjectBinding = z.strictObject({
  ...common,
  reader: z.literal("kube-object"),
  selection: KubeObjectSelection.optional(),
  /** CEL over `object` (the whole object) and `status` (its status), as tuppr binds them. */
  predicate: z.strictObject({ cel: z.string().min(1) }).optional(),
  /** A tuppr healthChecks entry, unchanged; alternative to selection + predicate. */
  healthCheck: TupprHealthCheckSchema.optional(),
});

const TalosEtcdBinding = z.strictObject({
  ...common,
  reader: z.literal("talos-etcd"),
  /** Control-plane nodes to ask (default: nodes labelled node-role.kubernetes.io/control-plane). */
  selection: NodeSelectionSchema.default({}),
});

const TalosServicesBinding = z.strictObject({
  ...common,
  reader: z.literal("talos-services"),
  selection: NodeSelectionSchema.default({}),
  predicate: z.strictObject({ services: z.array(z.string().min(1)).min(1) }),
});

const NodeVersionsBinding = z.strictObject({
  ...common,
  reader: z.literal("node-versions"),
  selection: NodeSelectionSchema.default({}),
  predicate: z.strictObject({
    talosVersion: z.string().regex(/^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/).optional(),
    schematic: z.string().regex(/^[0-9a-f]{64}$/).optional(),
    kubeletVersion: z.string().regex(/^v\d+\.\d+\.\d+$/).optional(),
  }),
});

/**
 * Row 17: an object store's endpoint through the API server's service proxy. The route is named
 * (namespace, service, port) and the path is fixed by the product, never an arbitrary URL.
 */
const ObjectStoreEndpointBinding = z.strictObject({
  ...common,
  reader: z.literal("object-store-endpoint"),
  /** `ceph-rgw`: an anonymous GET of the S3 root answers 200 with a ListAllMyBucketsResult. */
  product: z.literal("ceph-rgw"),
  route: z.strictObject({
    namespace: z.string().min(1),
    service: z.string().min(1),
    port: z.string().min(1),
  }),
});

/**
 * Row 17: every broker server's own stream health, one route per server pod (per-server
 * coverage: `requiredCoverage` is the number of servers the product needs).
 */
const BrokerStreamsBinding = z.strictObject({
  ...common,
  reader: z.literal("broker-streams"),
  /** `nats-jetstream`: GET /healthz on the monitoring port; 200 `{"status":"ok"}` when current. */
  product: z.literal("nats-jetstream"),
  selection: z.strictObject({
    namespace: z.string().min(1),
    labelSelector: LabelSelectorSchema,
    /** The monitoring port (name or number). */
    port: z.string().min(1).default("8222"),
  }),
});

const ProductObjectSelection = z.strictObject({
  namespace: z.string().min(1).optional(),
  name: z.string().min(1).optional(),
}).default({});

/** Row 18: a metrics-storage operator's own resource, every required member running. */
const MetricsStorageBinding = z.strictObject({
  ...common,
  reader: z.literal("metrics-storage"),
  /** `prometheus-operator`: monitoring.coreos.com/v1 Prometheus. */
  product: z.literal("prometheus-operator"),
  selection: ProductObjectSelection,
});

/** Row 18: an MQTT cluster's own resource, every core and replicant node running. */
const MqttClusterBinding = z.strictObject({
  ...common,
  reader: z.literal("mqtt-cluster"),
  /** `emqx-operator`: apps.emqx.io/v2beta1 EMQX. */
  product: z.literal("emqx-operator"),
  selection: ProductObjectSelection,
});

/**
 * A vetoing Alertmanager query (docs/operating.md#alert-veto-and-silences): any active,
 * unsilenced alert matching every matcher fails the round; an Alertmanager that cannot be read
 * makes it unreadable, never a pass.
 */
const AlertmanagerAlertsBinding = z.strictObject({
  ...common,
  reader: z.literal("alertmanager-alerts"),
  matchers: z.array(z.strictObject({
    name: z.string().min(1).max(200),
    value: z.string().max(1000),
    isRegex: z.boolean().default(false),
    isEqual: z.boolean().default(true),
  })).min(1).max(16),
});

export const BindingSchema = z.discriminatedUnion("reader", [
  AlertmanagerAlertsBinding,
  NodesBinding,
  WorkloadsBinding,
  PdbBinding,
  KubeObjectBinding,
  TalosEtcdBinding,
  TalosServicesBinding,
  NodeVersionsBinding,
  ObjectStoreEndpointBinding,
  BrokerStreamsBinding,
  MetricsStorageBinding,
  MqttClusterBinding,
]);

export const HealthPolicySchema = z.strictObject({
  apiVersion: z.literal("cairn.dev/v1alpha1"),
  kind: z.literal("HealthPolicy"),
  metadata: z.strictObject({
    name: z.string().min(1),
    cluster: z.string().min(1),
  }),
  spec: z.strictObject({
    bindings: z.array(BindingSchema).min(1),
  }),
});

export type LabelSelector = z.output<typeof LabelSelectorSchema>;
export type TupprHealthCheck = z.output<typeof TupprHealthCheckSchema>;
export type Binding = z.output<typeof BindingSchema>;
export type ReaderKind = Binding["reader"];
export type NodeSelection = z.output<typeof NodeSelectionSchema>;
export type KubeObjectSel = z.output<typeof KubeObjectSelection>;
export type HealthPolicyDoc = z.output<typeof HealthPolicySchema>;
