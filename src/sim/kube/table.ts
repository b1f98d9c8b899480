/**
 * Server-side printing: the `meta.k8s.io/v1` Table the real apiserver answers when a client asks
 * for it (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`, which `kubectl get` sends).
 * The columns and cells follow what the apiserver's printers compute for each kind (the columns
 * `kubectl get` shows, `priority: 1` ones only with `-o wide`); kinds without a printer get NAME
 * and AGE. Ages are computed against the twin's clock, as the apiserver computes them against its
 * own.
 */
import type { Obj, ResourceType } from "./store.ts";

type R = Record<string, unknown>;

export interface ColumnDefinition {
  readonly name: string;
  readonly type: "string" | "integer" | "number" | "boolean" | "date";
  readonly format: string;
  readonly description: string;
  readonly priority: number;
}

interface Printer {
  readonly columns: readonly ColumnDefinition[];
  /** Cells after NAME, in column order, for printers whose first column is NAME. */
  cells?(o: Obj, now: number): unknown[];
  /** The whole row, for printers whose first column is not NAME (events). */
  row?(o: Obj, now: number): unknown[];
}

/** Whether an Accept header asks for a meta.k8s.io/v1 Table (v1beta1 is no longer served). */
export function wantsTable(accept: string | undefined): boolean {
  return (accept ?? "").split(",").some((part) => {
    const params = part.split(";").map((p) => p.trim());
    return params.includes("as=Table") && params.includes("g=meta.k8s.io") &&
      params.includes("v=v1");
  });
}

/**
 * kubectl's (and the apiserver's) short duration: `45s`, `3m20s`, `12m`, `5h30m`, `2d4h`, `400d`,
 * `3y20d`. A moment more than a second in the future is `<invalid>`.
 */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    return hours % 24 === 0 ? `${hours / 24 | 0}d` : `${hours / 24 | 0}d${hours % 24}h`;
  }
  if (hours < 24 * 365 * 2) return `${hours / 24 | 0}d`;
  const days = hours / 24 | 0, years = days / 365 | 0;
  if (hours < 24 * 365 * 8) return days % 365 === 0 ? `${years}y` : `${years}y${days % 365}d`;
  return `${years}y`;
}

/** Time since an RFC 3339 timestamp, `<unknown>` when there is none. */
export function since(timestamp: unknown, now: number): string {
  if (typeof timestamp !== "string" || timestamp === "") return "<unknown>";
  const t = Date.parse(timestamp);
  return Number.isNaN(t) ? "<unknown>" : humanDuration(now - t);
}

const col = (
  name: string,
  type: ColumnDefinition["type"],
  description: string,
  priority = 0,
  format = "",
): ColumnDefinition => ({ name, type, format, description, priority });

const NAME = col("Name", "string", "Name of the object (metadata.name).", 0, "name");
const AGE = col("Age", "string", "Time since the object was created (metadata.creationTimestamp).");

const obj = (v: unknown): R => (v && typeof v === "object" ? v as R : {});
const arr = (v: unknown): R[] => (Array.isArray(v) ? v as R[] : []);
const int = (v: unknown): number => (typeof v === "number" ? v : 0);
const orNone = (v: unknown): string => (typeof v === "string" && v !== "" ? v : "<none>");
const age = (o: Obj, now: number) => since(o.metadata.creationTimestamp, now);

/** `key=value,...` of a selector map, sorted by key; `<none>` when empty. */
function selectorText(m: unknown): string {
  const entries = Object.entries(obj(m)).sort(([a], [b]) => a.localeCompare(b));
  return entries.length === 0 ? "<none>" : entries.map(([k, v]) => `${k}=${v}`).join(",");
}

function labelSelectorText(sel: unknown): string {
  const s = obj(sel);
  const parts = Object.entries(obj(s["matchLabels"])).sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}=${v}`);
  for (const e of arr(s["matchExpressions"])) {
    const values = arr(e["values"]).map(String).join(",");
    const op = String(e["operator"] ?? "");
    parts.push(
      op === "Exists"
        ? String(e["key"])
        : op === "DoesNotExist"
        ? `!${e["key"]}`
        : `${e["key"]} ${op.toLowerCase()} (${values})`,
    );
  }
  return parts.length === 0 ? "<none>" : parts.join(",");
}

const CONTAINERS = col("Containers", "string", "Names of each container in the template.", 1);
const IMAGES = col("Images", "string", "Images referenced by each container in the template.", 1);
const SELECTOR = col("Selector", "string", "The label selector of the workload.", 1);

function templateContainers(o: Obj): [string, string] {
  const cs = arr(obj(obj(obj(o.spec)["template"])["spec"])["containers"]);
  return [cs.map((c) => String(c["name"])).join(","), cs.map((c) => String(c["image"])).join(",")];
}

/** The columns deployments, replica sets and daemon sets end with (all but AGE only wide). */
const WORKLOAD_TAIL_COLUMNS = [AGE, CONTAINERS, IMAGES, SELECTOR];

/** The cells under `WORKLOAD_TAIL_COLUMNS`. */
function workloadTailCells(o: Obj, now: number): unknown[] {
  return [age(o, now), ...templateContainers(o), labelSelectorText(obj(o.spec)["selector"])];
}

/** `spec.replicas`, 1 when it is not set (the API server's default). */
function desiredReplicas(spec: R): number {
  return typeof spec["replicas"] === "number" ? spec["replicas"] : 1;
}

/** Ready, NotReady or Unknown from the Ready condition, then SchedulingDisabled when cordoned. */
export function nodeStatus(node: Obj): string {
  const ready = arr(obj(node.status)["conditions"]).find((c) => c["type"] === "Ready");
  const states = [
    ready?.["status"] === "True" ? "Ready" : ready?.["status"] === "False" ? "NotReady" : "Unknown",
  ];
  if (obj(node.spec)["unschedulable"] === true) states.push("SchedulingDisabled");
  return states.join(",");
}

/** Roles from `node-role.kubernetes.io/<role>` label keys and a `kubernetes.io/role` value. */
export function nodeRoles(node: Obj): string {
  const roles = new Set<string>();
  for (const [k, v] of Object.entries(node.metadata.labels ?? {})) {
    if (k.startsWith("node-role.kubernetes.io/")) {
      const role = k.slice("node-role.kubernetes.io/".length);
      if (role !== "") roles.add(role);
    } else if (k === "kubernetes.io/role" && v !== "") roles.add(v);
  }
  return roles.size === 0 ? "<none>" : [...roles].sort().join(",");
}

function nodeAddress(node: Obj, type: string): string {
  return orNone(arr(obj(node.status)["addresses"]).find((a) => a["type"] === type)?.["address"]);
}

const nodePrinter: Printer = {
  columns: [
    NAME,
    col("Status", "string", "The status of the node: Ready condition, and whether it is cordoned."),
    col("Roles", "string", "The roles of the node (node-role.kubernetes.io/* labels)."),
    AGE,
    col("Version", "string", "Kubelet version (status.nodeInfo.kubeletVersion)."),
    col("Internal-IP", "string", "The node's InternalIP address.", 1),
    col("External-IP", "string", "The node's ExternalIP address.", 1),
    col("OS-Image", "string", "The OS image the node reports (status.nodeInfo.osImage).", 1),
    col("Kernel-Version", "string", "Kernel version the node reports.", 1),
    col("Container-Runtime", "string", "Container runtime the node reports.", 1),
  ],
  cells(o, now) {
    const info = obj(obj(o.status)["nodeInfo"]);
    const unknown = (v: unknown) => (typeof v === "string" && v !== "" ? v : "<unknown>");
    return [
      nodeStatus(o),
      nodeRoles(o),
      age(o, now),
      String(info["kubeletVersion"] ?? ""),
      nodeAddress(o, "InternalIP"),
      nodeAddress(o, "ExternalIP"),
      unknown(info["osImage"]),
      unknown(info["kernelVersion"]),
      unknown(info["containerRuntimeVersion"]),
    ];
  },
};

/** The STATUS kubectl shows for a pod: the most telling reason among phase and containers. */
export function podStatus(pod: Obj): string {
  const status = obj(pod.status);
  let reason = String(status["reason"] || status["phase"] || "Unknown");
  const initStatuses = arr(status["initContainerStatuses"]);
  const initCount = arr(obj(pod.spec)["initContainers"]).length;
  let initializing = false;
  initStatuses.forEach((c, i) => {
    if (initializing) return;
    const terminated = obj(obj(c["state"])["terminated"]);
    const waiting = obj(obj(c["state"])["waiting"]);
    if (c["state"] && obj(c["state"])["terminated"] && terminated["exitCode"] === 0) return;
    if (obj(c["state"])["terminated"]) {
      reason = `Init:${terminated["reason"] || `ExitCode:${terminated["exitCode"]}`}`;
    } else if (waiting["reason"] && waiting["reason"] !== "PodInitializing") {
      reason = `Init:${waiting["reason"]}`;
    } else reason = `Init:${i}/${initCount}`;
    initializing = true;
  });
  if (!initializing) {
    let running = false;
    for (const c of arr(status["containerStatuses"]).slice().reverse()) {
      const state = obj(c["state"]);
      const waiting = obj(state["waiting"]), terminated = obj(state["terminated"]);
      if (waiting["reason"]) reason = String(waiting["reason"]);
      else if (state["terminated"]) {
        reason = String(
          terminated["reason"] ||
            (terminated["signal"]
              ? `Signal:${terminated["signal"]}`
              : `ExitCode:${terminated["exitCode"]}`),
        );
      } else if (state["running"] && c["ready"] === true) running = true;
    }
    if (reason === "Completed" && running) reason = "Running";
  }
  if (pod.metadata.deletionTimestamp && status["reason"] !== "NodeLost") reason = "Terminating";
  return reason;
}

function podRestarts(pod: Obj, now: number): string {
  let restarts = 0, last: number | undefined;
  for (const c of arr(obj(pod.status)["containerStatuses"])) {
    restarts += int(c["restartCount"]);
    const finished = obj(obj(c["lastState"])["terminated"])["finishedAt"];
    if (typeof finished === "string") {
      const t = Date.parse(finished);
      if (!Number.isNaN(t) && (last === undefined || t > last)) last = t;
    }
  }
  return restarts > 0 && last !== undefined
    ? `${restarts} (${humanDuration(now - last)} ago)`
    : String(restarts);
}

const podPrinter: Printer = {
  columns: [
    NAME,
    col("Ready", "string", "Ready containers out of all containers of the pod."),
    col("Status", "string", "The aggregate status of the containers in this pod."),
    col("Restarts", "string", "Container restarts, and how long ago the last one was."),
    AGE,
    col("IP", "string", "The pod's IP address (status.podIP).", 1),
    col("Node", "string", "The node the pod is bound to (spec.nodeName).", 1),
    col("Nominated Node", "string", "The node the scheduler nominated for preemption.", 1),
    col("Readiness Gates", "string", "Readiness gates that hold, out of all of them.", 1),
  ],
  cells(o, now) {
    const status = obj(o.status), spec = obj(o.spec);
    const statuses = arr(status["containerStatuses"]);
    const total = arr(spec["containers"]).length;
    const ready = statuses.filter((c) => c["ready"] === true).length;
    const gates = arr(spec["readinessGates"]);
    const conditions = arr(status["conditions"]);
    const gatesText = gates.length === 0
      ? "<none>"
      : `${
        gates.filter((g) =>
          conditions.some((c) => c["type"] === g["conditionType"] && c["status"] === "True")
        ).length
      }/${gates.length}`;
    return [
      `${ready}/${total}`,
      podStatus(o),
      podRestarts(o, now),
      age(o, now),
      orNone(status["podIP"]),
      orNone(spec["nodeName"]),
      orNone(status["nominatedNodeName"]),
      gatesText,
    ];
  },
};

const deploymentPrinter: Printer = {
  columns: [
    NAME,
    col("Ready", "string", "Ready replicas out of desired replicas."),
    col("Up-to-date", "integer", "Replicas updated to the desired template."),
    col("Available", "integer", "Replicas available to users."),
    ...WORKLOAD_TAIL_COLUMNS,
  ],
  cells(o, now) {
    const status = obj(o.status);
    return [
      `${int(status["readyReplicas"])}/${desiredReplicas(obj(o.spec))}`,
      int(status["updatedReplicas"]),
      int(status["availableReplicas"]),
      ...workloadTailCells(o, now),
    ];
  },
};

const replicaSetPrinter: Printer = {
  columns: [
    NAME,
    col("Desired", "integer", "Number of desired pods."),
    col("Current", "integer", "Number of created pods."),
    col("Ready", "integer", "Number of ready pods."),
    ...WORKLOAD_TAIL_COLUMNS,
  ],
  cells(o, now) {
    const status = obj(o.status);
    return [
      desiredReplicas(obj(o.spec)),
      int(status["replicas"]),
      int(status["readyReplicas"]),
      ...workloadTailCells(o, now),
    ];
  },
};

const statefulSetPrinter: Printer = {
  columns: [
    NAME,
    col("Ready", "string", "Ready replicas out of desired replicas."),
    AGE,
    CONTAINERS,
    IMAGES,
  ],
  cells(o, now) {
    return [
      `${int(obj(o.status)["readyReplicas"])}/${desiredReplicas(obj(o.spec))}`,
      age(o, now),
      ...templateContainers(o),
    ];
  },
};

const daemonSetPrinter: Printer = {
  columns: [
    NAME,
    col("Desired", "integer", "Nodes that should run the daemon pod."),
    col("Current", "integer", "Nodes running at least one daemon pod."),
    col("Ready", "integer", "Nodes whose daemon pod is ready."),
    col("Up-to-date", "integer", "Nodes running the updated daemon pod."),
    col("Available", "integer", "Nodes whose daemon pod is available."),
    col("Node Selector", "string", "The node selector of the pod template."),
    ...WORKLOAD_TAIL_COLUMNS,
  ],
  cells(o, now) {
    const status = obj(o.status);
    return [
      int(status["desiredNumberScheduled"]),
      int(status["currentNumberScheduled"]),
      int(status["numberReady"]),
      int(status["updatedNumberScheduled"]),
      int(status["numberAvailable"]),
      selectorText(obj(obj(obj(o.spec)["template"])["spec"])["nodeSelector"]),
      ...workloadTailCells(o, now),
    ];
  },
};

const pdbPrinter: Printer = {
  columns: [
    NAME,
    col("Min Available", "string", "Pods that must stay available (spec.minAvailable)."),
    col("Max Unavailable", "string", "Pods that may be unavailable (spec.maxUnavailable)."),
    col("Allowed Disruptions", "integer", "Evictions allowed now (status.disruptionsAllowed)."),
    AGE,
  ],
  cells(o, now) {
    const spec = obj(o.spec);
    const intOrString = (v: unknown) => v === undefined || v === null ? "N/A" : String(v);
    return [
      intOrString(spec["minAvailable"]),
      intOrString(spec["maxUnavailable"]),
      int(obj(o.status)["disruptionsAllowed"]),
      age(o, now),
    ];
  },
};

const leasePrinter: Printer = {
  columns: [NAME, col("Holder", "string", "The holder of the lease (spec.holderIdentity)."), AGE],
  cells(o, now) {
    const holder = obj(o.spec)["holderIdentity"];
    return [typeof holder === "string" ? holder : "", age(o, now)];
  },
};

const namespacePrinter: Printer = {
  columns: [NAME, col("Status", "string", "The phase of the namespace."), AGE],
  cells(o, now) {
    return [String(obj(o.status)["phase"] ?? "Active"), age(o, now)];
  },
};

/** The core/v1 Event printer: LAST SEEN TYPE REASON OBJECT MESSAGE (wide adds the rest). */
const eventPrinter: Printer = {
  columns: [
    col("Last Seen", "string", "Time since the event was last seen."),
    col("Type", "string", "Normal or Warning."),
    col("Reason", "string", "Why the event was emitted."),
    col("Object", "string", "The object the event is about."),
    col("Subobject", "string", "The field of the object the event is about.", 1),
    col("Source", "string", "The component that emitted the event.", 1),
    col("Message", "string", "What happened."),
    col("First Seen", "string", "Time since the event was first seen.", 1),
    col("Count", "integer", "How often the event happened.", 1),
    { ...NAME, priority: 1 },
  ],
  row: eventRow,
};

function eventRow(e: Obj, now: number): unknown[] {
  const involved = obj(e["involvedObject"]);
  const source = obj(e["source"]);
  const first = e["firstTimestamp"] ?? e["eventTime"] ?? e.metadata.creationTimestamp;
  const last = e["lastTimestamp"] ?? e["eventTime"] ?? first;
  const count = typeof e["count"] === "number" ? e["count"] : 1;
  const lastSeen = count > 1
    ? `${since(last, now)} (x${count} over ${since(first, now)})`
    : since(last, now);
  const sourceText = [source["component"], source["host"]].filter(Boolean).join(", ");
  return [
    lastSeen,
    String(e["type"] ?? ""),
    String(e["reason"] ?? ""),
    `${String(involved["kind"] ?? "").toLowerCase()}/${involved["name"] ?? ""}`,
    String(involved["fieldPath"] ?? ""),
    sourceText,
    String(e["message"] ?? "").trim(),
    since(first, now),
    count,
    e.metadata.name,
  ];
}

/**
 * A Flux custom resource, printed as the apiserver prints a CRD with `additionalPrinterColumns`:
 * NAME, then the columns the CRD declares in its order (URL `.spec.url`; Age a `date` column of
 * `.metadata.creationTimestamp`, rendered as an age; Ready and Status the Ready condition's status
 * and message, which is where Flux writes the revision: `Applied revision: main@sha1:…`, `stored
 * artifact for revision '…'`, `Helm upgrade succeeded for release … with chart …@…`). A value the
 * object does not have is a null cell (kubectl shows `<none>`).
 */
type FluxColumn = "url" | "age" | "ready" | "status";
const FLUX_COLUMNS: Readonly<Record<FluxColumn, ColumnDefinition>> = {
  url: col("URL", "string", "The source's URL (.spec.url)."),
  age: col("Age", "date", "Time since the object was created (.metadata.creationTimestamp)."),
  ready: col("Ready", "string", "The Ready condition's status (.status.conditions, type Ready)."),
  status: col(
    "Status",
    "string",
    "The Ready condition's message (.status.conditions, type Ready).",
  ),
};

function fluxPrinter(order: readonly FluxColumn[]): Printer {
  return {
    columns: [NAME, ...order.map((c) => FLUX_COLUMNS[c])],
    cells(o, now) {
      const ready = arr(obj(o.status)["conditions"]).find((c) => c["type"] === "Ready");
      const text = (v: unknown) => (typeof v === "string" ? v : null);
      return order.map((c) =>
        c === "url"
          ? text(obj(o.spec)["url"])
          : c === "age"
          ? age(o, now)
          : c === "ready"
          ? text(ready?.["status"])
          : text(ready?.["message"])
      );
    },
  };
}

const defaultPrinter: Printer = { columns: [NAME, AGE], cells: (o, now) => [age(o, now)] };

const PRINTERS: Readonly<Record<string, Printer>> = {
  "/Node": nodePrinter,
  "/Pod": podPrinter,
  "/Namespace": namespacePrinter,
  "/Event": eventPrinter,
  "apps/Deployment": deploymentPrinter,
  "apps/ReplicaSet": replicaSetPrinter,
  "apps/StatefulSet": statefulSetPrinter,
  "apps/DaemonSet": daemonSetPrinter,
  "policy/PodDisruptionBudget": pdbPrinter,
  "coordination.k8s.io/Lease": leasePrinter,
  // The column orders of Flux's CRDs (kustomize-controller, helm-controller, source-controller).
  "kustomize.toolkit.fluxcd.io/Kustomization": fluxPrinter(["age", "ready", "status"]),
  "helm.toolkit.fluxcd.io/HelmRelease": fluxPrinter(["age", "ready", "status"]),
  "source.toolkit.fluxcd.io/GitRepository": fluxPrinter(["url", "age", "ready", "status"]),
  "source.toolkit.fluxcd.io/OCIRepository": fluxPrinter(["url", "ready", "status", "age"]),
};

function printerFor(type: ResourceType): Printer {
  return PRINTERS[`${type.group}/${type.kind}`] ?? defaultPrinter;
}

/** What each row carries as `object`: `includeObject=None|Metadata|Object` (default Metadata). */
export type IncludeObject = "None" | "Metadata" | "Object";

function rowObject(o: Obj, include: IncludeObject): unknown {
  if (include === "None") return undefined;
  if (include === "Object") return o;
  return { kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: o.metadata };
}

/** Builds the Table for `objs` of `type`, with `listMeta` (resourceVersion, continue). */
export function toTable(
  type: ResourceType,
  objs: readonly Obj[],
  now: number,
  include: IncludeObject,
  listMeta: R = {},
): R {
  const printer = printerFor(type);
  return {
    kind: "Table",
    apiVersion: "meta.k8s.io/v1",
    metadata: listMeta,
    columnDefinitions: printer.columns,
    rows: objs.map((o) => {
      const object = rowObject(o, include);
      return {
        cells: printer.row?.(o, now) ?? [o.metadata.name, ...(printer.cells?.(o, now) ?? [])],
        ...(object === undefined ? {} : { object }),
      };
    }),
  };
}

/** Parses `includeObject`, defaulting as the apiserver does. */
export function includeObjectOf(q: URLSearchParams): IncludeObject {
  const v = q.get("includeObject");
  return v === "None" || v === "Object" ? v : "Metadata";
}
