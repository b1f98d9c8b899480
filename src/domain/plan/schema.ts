/**
 * zod schemas of the four plan kinds as written (docs/plans.md#plan-kinds). Every object is strict:
 * an unknown field is refused, never ignored. Everything that reaches a mutation is bound here;
 * changing any of it is a new plan, a new digest and a new approval. Semantic rules that relate
 * fields to each other or to the release catalogue live in `checks.ts`.
 */
import { z } from "../zod.ts";
import { tryParseVersion } from "../version.ts";
import { boundPathProblem } from "./bound_path.ts";
import { windowProblem } from "../ops/window.ts";
import { componentIdProblem } from "../playbook/ids.ts";

/** The only plan API version cairn reads. */
export const PLAN_API_VERSION = "cairn.dev/v1alpha1";
/** The plan kinds, as a closed vocabulary. */
export const PLAN_KINDS = [
  "TalosUpgrade",
  "KubernetesUpgrade",
  "ConfigApply",
  "ComponentUpgrade",
] as const;
/** One of {@link PLAN_KINDS}. */
export type PlanKind = (typeof PLAN_KINDS)[number];

const SHA256 = /^[0-9a-f]{64}$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** A `v`-prefixed semantic version string (`v1.14.2`, `v1.14.0-beta.0`). */
export const VersionString = z.string().refine(
  (s) => s.startsWith("v") && tryParseVersion(s) !== undefined,
  { message: "expected a v-prefixed semantic version like v1.14.2" },
);
/** Lower-case hex SHA-256. */
export const Sha256 = z.string().regex(SHA256, "expected 64 lower-case hex characters");
const Name = z.string().max(63).regex(DNS_LABEL, "expected a DNS label (a-z, 0-9, -)");
const PositiveSeconds = z.number().int().positive().max(7 * 24 * 3600);
/** A bound path; a bad one is refused with its own reason (`BoundPathInvalid`, see parse.ts). */
const RelativePath = z.string().superRefine((p, ctx) => {
  const why = boundPathProblem(p);
  if (why) {
    ctx.addIssue({
      code: "custom",
      message: `bound path ${JSON.stringify(p.slice(0, 120))} ${why}`,
      params: { reason: "BoundPathInvalid" },
    });
  }
});

/** A git commit id (40 lower-case hex). */
const CommitId = z.string().regex(/^[0-9a-f]{40}$/, "expected a 40-hex commit id");

/** A file the plan binds by path and content digest. */
export const BoundFile = z.strictObject({ path: RelativePath, sha256: Sha256 });

/** Common envelope metadata. `expires` is RFC 3339 UTC. */
export const Metadata = z.strictObject({
  /** Also the file name: `plans/<name>.yaml`. */
  name: z.string().max(253).regex(DNS_SUBDOMAIN, "expected lower-case a-z, 0-9, '-' and '.'"),
  cluster: Name,
  /** An SSH principal (as in allowed_signers), e.g. `alice@example.com`. */
  author: z.string().min(3).max(256).regex(/^[^\s,]+$/, "expected an SSH principal"),
  expires: z.string().regex(RFC3339_UTC, "expected an RFC 3339 UTC time like 2026-12-20T00:00:00Z")
    .refine((s) => !Number.isNaN(Date.parse(s)), { message: "expected a real date and time" }),
});

/** A node in rollout order. `address` is the Talos API endpoint of the node (IP or hostname). */
export const PlanNode = z.strictObject({
  name: z.string().max(253).regex(DNS_SUBDOMAIN, "expected a Kubernetes node name"),
  role: z.enum(["worker", "controlplane"]),
  address: z.string().min(1).max(253).regex(/^[0-9A-Za-z.:-]+$/, "expected an IP or hostname"),
});

/** Transport deadline (one RPC) and verification deadline (postconditions) of a phase. */
export const PhaseDeadline = z.strictObject({
  transportSeconds: PositiveSeconds,
  verificationSeconds: PositiveSeconds,
});

/** Per-phase deadlines of a Talos node step (docs/operation-model.md#the-node-step). */
export const TalosDeadlines = z.strictObject({
  pull: PhaseDeadline,
  install: PhaseDeadline,
  cordon: PhaseDeadline,
  drain: PhaseDeadline,
  reboot: PhaseDeadline,
  verify: PhaseDeadline,
  uncordon: PhaseDeadline,
});

/** Rollout shape. Only one node at a time is supported; the field makes that explicit. */
export const Rollout = z.strictObject({ maxParallel: z.number().int().positive() });

/** Retry limits for reads and unattempted phases; never permission to repeat a mutation. */
export const RetryPolicy = z.strictObject({ maxAttempts: z.number().int().min(1).max(10) });

/**
 * A recovery action the approvers authorise in advance
 * (docs/recovery.md#authorised-recovery-actions).
 */
export const RecoveryAction = z.discriminatedUnion("action", [
  z.strictObject({ action: z.literal("uncordonOwnedCordon") }),
  // No `retryImagePull`: nothing ever honoured it, and a plan must not authorise what cairn does
  // not do. A refused or lost pull holds the step (`PullRefused` / `PullResponseLost`).
  z.strictObject({
    action: z.literal("partialDrain"),
    /** Principal who reviewed leaving pods behind. */
    reviewedBy: z.string().min(3).regex(/^[^\s,]+$/, "expected an SSH principal"),
    /** Pods allowed to remain when the drain bound passes, at most. */
    maxRemainingPods: z.number().int().min(1),
    justification: z.string().min(1).max(1000),
  }),
]);

/** One Talos hop: source → target with the installer bound by digest. */
export const TalosHop = z.strictObject({
  from: VersionString,
  to: VersionString,
  /** `lifecycle` = LifecycleService.Upgrade; `legacy` = MachineService.Upgrade. */
  rpcPath: z.enum(["lifecycle", "legacy"]),
  installer: z.strictObject({
    /** `<registry>/<platform>-installer/<schematic>:<to>@sha256:<digest>` */
    image: z.string().regex(
      /^[a-z0-9.-]+(:\d+)?(\/[a-z0-9._-]+)+:[A-Za-z0-9._+-]+@sha256:[0-9a-f]{64}$/,
      "expected an image reference with tag and @sha256 digest",
    ),
    schematic: Sha256,
  }),
});

/**
 * A maintenance window (docs/operating.md): a five-field cron start in an IANA zone and how long it
 * stays open. No node is committed outside one, nor when its expected step would overrun it.
 */
export const MaintenanceWindow = z.strictObject({
  start: z.string().min(1).max(120),
  durationMinutes: z.number().int().positive().max(7 * 24 * 60),
  timeZone: z.string().min(1).max(64),
}).superRefine((w, ctx) => {
  const why = windowProblem(w);
  if (why) {
    ctx.addIssue({
      code: "custom",
      message: `maintenance window: ${why}`,
      params: { reason: "MaintenanceWindowInvalid" },
    });
  }
});

const HookCommand = z.array(z.string().min(1).max(4096)).min(1).max(64);

/**
 * A node hook (docs/operating.md#node-hooks): a Kubernetes Job run before (`pre`) and after
 * (`post`) each node step, e.g. `ceph osd set noout` / `unset`. The image is pinned by digest like
 * everything else that reaches a mutation; the post command always runs when its pre command was
 * attempted.
 */
export const NodeHook = z.strictObject({
  name: Name,
  namespace: Name,
  image: z.string().regex(
    /^[a-z0-9.-]+(:\d+)?(\/[a-z0-9._-]+)+(:[A-Za-z0-9._+-]+)?@sha256:[0-9a-f]{64}$/,
    "expected an image reference pinned by @sha256 digest",
  ),
  serviceAccountName: Name.optional(),
  /** How long the Job may take to finish before its outcome is unresolved. */
  timeoutSeconds: PositiveSeconds,
  pre: z.strictObject({ command: HookCommand }).optional(),
  post: z.strictObject({ command: HookCommand }).optional(),
});

/** Alerts a node step is expected to raise, silenced only on that node while its step runs. */
export const ExpectedNoise = z.strictObject({
  name: Name,
  matchers: z.array(z.strictObject({
    name: z.string().min(1).max(200),
    value: z.string().min(1).max(1000),
    isRegex: z.boolean().default(false),
    isEqual: z.boolean().default(true),
  })).min(1).max(8),
  /** The alert label that carries the node's name; the silence matches it exactly. */
  nodeLabel: z.string().min(1).max(200).default("node"),
});

/**
 * What operates beside the steps of every executing kind (docs/operating.md): maintenance windows,
 * the expected step duration they are fitted with, breakpoints, node hooks, expected-noise silences
 * and stall reports.
 */
const OperatingControls = {
  /** Maintenance windows; absent: the cluster's default windows (none: always open). */
  windows: z.array(MaintenanceWindow).min(1).max(16).optional(),
  /**
   * How long one step is expected to take, for the window fit (a step is committed only when this
   * much of its window is left). Absent: the sum of the step's phase bounds.
   */
  expectedStepMinutes: z.number().int().positive().max(7 * 24 * 60).optional(),
  /**
   * Where the rollout stops after a node's step until a signed continuation for this plan digest
   * and breakpoint arrives through git (docs/operating.md#breakpoints).
   */
  breakpoints: z.array(z.strictObject({ name: Name, after: z.string().min(1).max(253) }))
    .max(64).optional(),
  /** Jobs run before and after each node step (docs/operating.md#node-hooks). */
  hooks: z.array(NodeHook).min(1).max(8).optional(),
  /**
   * Alerts expected while a node's step runs (seed 004's known noise): silenced for that node
   * and that step only, as a lease (docs/operating.md#alert-veto-and-silences).
   */
  expectedNoise: z.array(ExpectedNoise).min(1).max(16).optional(),
  /**
   * How long a step may wait on one blocker (a PDB, an unreadable binding, a node not back)
   * before it is reported stalled while it waits; default half of that wait's bound.
   */
  stallAfterSeconds: PositiveSeconds.optional(),
} as const;

const Envelope = { apiVersion: z.literal(PLAN_API_VERSION), metadata: Metadata } as const;
const Shared = {
  /** Release catalogue snapshot the checks used, bound by digest. */
  catalogue: BoundFile,
  /** Health policy (gate and verification bindings), bound by digest. */
  healthPolicy: BoundFile,
  retry: RetryPolicy,
} as const;

/** TalosUpgrade: node-by-node OS upgrade along validated hops. */
export const TalosUpgradeSchema = z.strictObject({
  ...Envelope,
  kind: z.literal("TalosUpgrade"),
  spec: z.strictObject({
    ...Shared,
    /** Pinned-evidence manifest the safeguards rest on, bound by digest (optional). */
    evidence: BoundFile.optional(),
    platform: z.enum(["metal", "aws", "azure", "gcp", "vmware", "nocloud", "openstack"]),
    arch: z.enum(["amd64", "arm64"]),
    /** Kubernetes and kubelet versions running across the rollout (support matrix checks). */
    kubernetes: z.strictObject({ version: VersionString, kubelet: VersionString }),
    hops: z.array(TalosHop).min(1).max(8),
    nodes: z.array(PlanNode).min(1).max(5000),
    rollout: Rollout,
    phases: z.strictObject({
      /** Drain bound, compared with termination grace periods at plan time. */
      drainTimeoutSeconds: PositiveSeconds,
      rebootMode: z.enum(["default", "powercycle"]),
      deadlines: TalosDeadlines,
    }),
    recovery: z.array(RecoveryAction).max(8),
    ...OperatingControls,
  }),
});

/** KubernetesUpgrade: control-plane components and kubelets to a target version. */
export const KubernetesUpgradeSchema = z.strictObject({
  ...Envelope,
  kind: z.literal("KubernetesUpgrade"),
  spec: z.strictObject({
    ...Shared,
    /** Pinned-evidence manifest the safeguards rest on, bound by digest (optional). */
    evidence: BoundFile.optional(),
    /** Talos version every node must run (mixed versions hold the plan). */
    talosVersion: VersionString,
    from: VersionString,
    to: VersionString,
    nodes: z.array(PlanNode).min(1).max(5000),
    rollout: Rollout,
    phases: z.strictObject({
      deadlines: z.strictObject({ controlPlane: PhaseDeadline, kubelet: PhaseDeadline }),
    }),
    recovery: z.array(RecoveryAction).max(8),
    ...OperatingControls,
  }),
});

/** ConfigApply: a machine config applied with an explicit mode. */
export const ConfigApplySchema = z.strictObject({
  ...Envelope,
  kind: z.literal("ConfigApply"),
  spec: z.strictObject({
    ...Shared,
    talosVersion: VersionString,
    /** Talos ApplyConfiguration mode, never `auto`: the plan states what it expects. */
    mode: z.enum(["noReboot", "reboot", "staged", "try"]),
    /** Activation classification of the whole effective diff; `unknown` holds the plan. */
    activation: z.enum(["immediate", "explicitActivation", "installUpgradeOnly"]),
    config: BoundFile,
    nodes: z.array(PlanNode).min(1).max(5000),
    rollout: Rollout,
    phases: z.strictObject({ deadlines: z.strictObject({ apply: PhaseDeadline }) }),
    recovery: z.array(RecoveryAction).max(8),
    ...OperatingControls,
  }),
});

/** ComponentUpgrade: a Flux-delivered bump of a protected component (observed, not mutated). */
export const ComponentUpgradeSchema = z.strictObject({
  ...Envelope,
  kind: z.literal("ComponentUpgrade"),
  spec: z.strictObject({
    catalogue: BoundFile.optional(),
    healthPolicy: BoundFile,
    retry: RetryPolicy,
    /** A playbook's id (`playbooks/<id>.yaml`): one name per component, the playbook's. */
    component: z.string().superRefine((id, ctx) => {
      const why = componentIdProblem(id);
      if (why) {
        ctx.addIssue({ code: "custom", message: why, params: { reason: "ComponentUnknown" } });
      }
    }),
    flux: z.strictObject({
      kind: z.enum(["HelmRelease", "Kustomization"]),
      namespace: Name,
      name: Name,
    }),
    from: VersionString,
    to: VersionString,
    /**
     * The reviewed branch: its base and head commits and the pin files of the bump as they are
     * at head, each by digest. At dispatch the watched branch must hold exactly these bytes.
     */
    change: z.strictObject({
      base: CommitId,
      head: CommitId,
      pins: z.array(BoundFile).min(1).max(16),
    }).optional(),
    /** What delivery must show after merge; cairn observes it, never makes it so. */
    delivery: z.strictObject({
      /** The Flux source the bump moves (its artifact must reach `to`). */
      source: z.strictObject({
        kind: z.enum(["OCIRepository", "GitRepository"]),
        namespace: Name,
        name: Name,
      }),
      /**
       * Images operator-rendered workloads must run once the bump landed (a chart bump the
       * operator does not re-render rolls nothing: the running image is the evidence).
       */
      images: z.array(z.strictObject({
        namespace: Name,
        /** A label selector (`key=value[,key=value]`) naming the workloads' pods. */
        selector: z.string().min(1).max(300).regex(
          /^[A-Za-z0-9._/-]+=[A-Za-z0-9._-]*(,[A-Za-z0-9._/-]+=[A-Za-z0-9._-]*)*$/,
        ),
        container: Name,
        image: z.string().min(1).max(300).regex(/^[^\s@]+:[^\s@:/]+$/),
        /** Who renders it (for the report): "the rook-ceph operator (bundled cephcsi)". */
        renderedBy: z.string().min(1).max(200),
      })).max(16).default([]),
    }).optional(),
    /** Playbook after-merge checks run as health rounds until this deadline. */
    phases: z.strictObject({ deadlines: z.strictObject({ rollout: PhaseDeadline }) }),
  }),
});

/** Any plan, discriminated by `kind`. */
export const PlanSchema = z.discriminatedUnion("kind", [
  TalosUpgradeSchema,
  KubernetesUpgradeSchema,
  ConfigApplySchema,
  ComponentUpgradeSchema,
]);

export type TalosUpgradePlan = z.infer<typeof TalosUpgradeSchema>;
export type KubernetesUpgradePlan = z.infer<typeof KubernetesUpgradeSchema>;
export type ConfigApplyPlan = z.infer<typeof ConfigApplySchema>;
export type ComponentUpgradePlan = z.infer<typeof ComponentUpgradeSchema>;
/** The kinds that commit operations, and so take windows, breakpoints and node hooks. */
export type OperatedPlan = TalosUpgradePlan | KubernetesUpgradePlan | ConfigApplyPlan;
/** Whether a plan's kind commits operations (and so takes windows, breakpoints, hooks). */
export function isOperatedPlan(plan: Plan): plan is OperatedPlan {
  return plan.kind === "TalosUpgrade" || plan.kind === "KubernetesUpgrade" ||
    plan.kind === "ConfigApply";
}
/** A schema-valid plan of any kind. */
export type Plan = z.infer<typeof PlanSchema>;
export type PlanNode = z.infer<typeof PlanNode>;
export type TalosHop = z.infer<typeof TalosHop>;
export type PhaseDeadline = z.infer<typeof PhaseDeadline>;
export type RecoveryAction = z.infer<typeof RecoveryAction>;
export type BoundFile = z.infer<typeof BoundFile>;
export type MaintenanceWindow = z.infer<typeof MaintenanceWindow>;
export type NodeHook = z.infer<typeof NodeHook>;
