/**
 * The reconciler's configuration: one zod schema (it doubles as the reference), loaded from a
 * YAML file, then `CAIRN_*` environment variables, then command-line flags (later wins). Pure:
 * the caller reads the file and passes text, env and parsed flags; the result is frozen.
 * Secrets are never configuration values: credentials and keys are passed by path.
 */
import { posix } from "node:path";
import { z } from "./domain/zod.ts";
import { redactUrl } from "./adapters/log/redact.ts";
import { CairnError, type Problem } from "./domain/errors.ts";
import { plainIssueMessage } from "./domain/plain_issue.ts";
import { MIN_SETTLE_FLOOR_MS } from "./domain/operation.ts";
import { formatPath, type LoadedYaml, loadYaml, locate } from "./domain/plan/yaml_load.ts";
import type { LogLevel } from "./ports/logger.ts";
import { MaintenanceWindow } from "./domain/plan/schema.ts";

/** Log levels accepted by `logLevel`. */
export const LOG_LEVELS = ["debug", "info", "warn", "error"] as const satisfies readonly LogLevel[];

/** Largest config file accepted; a config is a few hundred bytes. */
export const MAX_CONFIG_BYTES = 64 * 1024;

// A git ref name as `git check-ref-format` allows it, minus exotic corners: no leading `-` (it
// would be read as an option), no `..`, `@{`, `//`, trailing `.lock`, `.` or `/`.
const REF = /^(?![-./])(?!.*\.\.)(?!.*@\{)(?!.*\/\/)[A-Za-z0-9._/-]+(?<!\.lock)(?<![./])$/;
const BranchName = z.string().regex(REF, "not a valid branch name");
const AbsolutePath = z.string().refine((p) => posix.isAbsolute(p), "must be an absolute path");

const RemoteUrl = z.string().min(1).superRefine((url, ctx) => {
  if (url.startsWith("-")) ctx.addIssue({ code: "custom", message: "must not start with '-'" });
  if (/^(ext|fd)::/i.test(url)) {
    ctx.addIssue({
      code: "custom",
      message: "the ext:: and fd:: transports run commands; refused",
    });
  }
  // deno-lint-ignore no-control-regex
  if (/[\s\u0000-\u001f]/.test(url)) {
    ctx.addIssue({ code: "custom", message: "must not contain spaces or control characters" });
  }
  if (/^[a-z][a-z0-9+.-]*:\/\/[^/@\s]*:[^/@\s]*@/i.test(url)) {
    ctx.addIssue({
      code: "custom",
      message:
        "must not carry a password; use a git credential helper (secrets are passed by path)",
    });
  }
});

/** An http(s) URL without credentials (they would reach logs); secrets are passed by path. */
const HttpUrl = z.string().refine((u) => {
  try {
    const x = new URL(u);
    return (x.protocol === "http:" || x.protocol === "https:") && !x.username && !x.password;
  } catch {
    return false;
  }
}, "expected an http(s) URL without credentials");

/** Where reports go when `reportBranch` is not set. */
export const DEFAULT_REPORT_BRANCH = "cairn-reports";

/** The configuration file's schema. Every field documents what it does and why its default. */
export const ConfigSchema = z.strictObject({
  /** Git URL of the plan repository (any URL `git` understands). No default: it is the point. */
  remote: RemoteUrl,
  /** The watched branch: merged plans here are executed. `main` is the common default branch. */
  branch: BranchName.default("main"),
  /**
   * Glob of branches whose plans get preview reports. `*` previews every proposed branch,
   * which is what reviewers want; narrow it (e.g. `plan/*`) on busy repositories.
   */
  planBranchesGlob: z.string().regex(
    /^(?![-.])(?!.*\.\.)[A-Za-z0-9._/*?[\]-]+$/,
    "not a valid branch glob",
  )
    .default("*"),
  /**
   * Branch previews and execution reports are committed to (created when missing, advanced by
   * fast-forward only). `cairn-reports` by default: milestone commits on the watched branch
   * would be refused by branch protection and bury the plans' history. Set it to `branch` to
   * keep reports beside the plans.
   */
  reportBranch: BranchName.optional(),
  /** Author and committer of report commits, so they are recognisable in `git log`. */
  reportAuthor: z.strictObject({
    name: z.string().min(1).max(200),
    email: z.string().regex(/^[^\s<>@]+@[^\s<>@]+$/, "not an e-mail address").max(200),
  }).default({ name: "cairn", email: "cairn@localhost" }),
  /**
   * Seconds between polls of the remote. 30 keeps latency acceptable without a webhook while
   * costing one small incremental fetch per poll; the webhook makes pickup immediate.
   */
  pollIntervalSeconds: z.int().min(1).max(86_400).default(30),
  /**
   * The trust root: an `allowed_signers` file, by absolute path, outside the watched repository
   * and outside `stateDir` (where the repository cache lives). A repository that could edit its
   * own trust root could approve itself. No default: trust must be chosen.
   */
  allowedSignersPath: AbsolutePath,
  /** Distinct approvers (besides the author) a plan needs. 1 is the four-eyes minimum. */
  requiredApprovals: z.int().min(1).max(32).default(1),
  /** Journal location. Defaults to `file:<stateDir>/journal.db` so state lives in one place. */
  journalUrl: z.string().min(1).optional(),
  /** Directory for the journal and the repository cache; absolute so it never follows the cwd. */
  stateDir: AbsolutePath,
  /**
   * Evidence cache the plans' bound evidence manifests are checked against offline (fill it with
   * `cairn evidence check MANIFEST --cache DIR --fetch`). Defaults to `<stateDir>/evidence` so
   * state lives in one place; an empty cache shows every tuple as unreadable, never as passing.
   */
  evidenceCacheDir: AbsolutePath.optional(),
  /**
   * kubeconfig for the cluster, by path (it holds credentials); a list is merged as kubectl merges
   * `KUBECONFIG` (the first file to name an entry wins, missing files skipped), which is what an
   * unset `CAIRN_KUBECONFIG` with a `KUBECONFIG` of several files gives.
   */
  kubeconfigPath: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]),
  /** talosconfig for the cluster, by path (it holds the client key). */
  talosconfigPath: z.string().min(1),
  /** kubeconfig context to use instead of the file's current one (kubectl's --context). */
  kubeContext: z.string().min(1).optional(),
  /** talosconfig context to use instead of the file's current one (talosctl's --context). */
  talosContext: z.string().min(1).optional(),
  /**
   * Settle floor for recovery decisions, in seconds: how long after an executor stops before
   * its in-flight effects are assumed landed or not. A deployment setting held outside the
   * journal so a journal edit cannot shorten it; ER sets 30 s as the least safe value.
   */
  settleFloorSeconds: z.int().min(MIN_SETTLE_FLOOR_MS / 1000).max(86_400).default(30),
  /**
   * Where `/metrics`, `/healthz`, `/readyz` and `/hooks/git` listen. Loopback by default: the
   * endpoints are unauthenticated apart from the hook. Port 9470 is fixed so scrape configs
   * stay stable; 0 picks a free port.
   */
  listen: z.strictObject({
    host: z.string().min(1).default("127.0.0.1"),
    port: z.int().min(0).max(65_535).default(9470),
  }).default({ host: "127.0.0.1", port: 9470 }),
  /** File holding the webhook shared secret. Unset: hooks are accepted unauthenticated (they only trigger a fetch). */
  hookSecretPath: z.string().min(1).optional(),
  /** Minimum log level. `info` logs milestones without per-round chatter. */
  logLevel: z.enum(LOG_LEVELS).default("info"),
  /**
   * Deadline of each git network call (fetch, push), in seconds. A remote that accepts the
   * connection and never answers costs at most this; `/readyz` turns not-ready once a fetch has
   * run this long. 60 covers a slow fetch of a plan repository with room to spare.
   */
  gitTimeoutSeconds: z.int().min(1).max(3_600).default(60),
  /**
   * Leader election among replicas sharing one journal (a Kubernetes Lease). Unset: this is the
   * only replica and always leads. Only the leader binds and executes merged plans; standbys
   * keep previewing. The journal's fencing, not the Lease, is what stops a deposed leader.
   */
  leaderElection: z.strictObject({
    /** Namespace of the Lease (where cairn runs). */
    namespace: z.string().regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, "not a namespace name"),
    /** Name of the Lease. */
    name: z.string().regex(/^[a-z0-9]([-.a-z0-9]{0,251}[a-z0-9])?$/, "not an object name")
      .default("cairn-leader"),
    /**
     * This replica's name in the Lease (a random suffix is added per process, so a restart is
     * a new candidate). Default: the host name, which is the pod name in Kubernetes.
     */
    identity: z.string().regex(/^[A-Za-z0-9._-]{1,200}$/, "letters, digits, '.', '_', '-'")
      .optional(),
    /** How long a held Lease must stay unrenewed before a standby takes it (client-go: 15). */
    leaseDurationSeconds: z.int().min(2).max(600).default(15),
    /** The leader stops leading when it could not renew for this long (client-go: 10). */
    renewDeadlineSeconds: z.int().min(1).max(599).default(10),
    /** Time between election rounds (client-go: 2). */
    retryPeriodSeconds: z.int().min(1).max(598).default(2),
  }).superRefine((l, ctx) => {
    if (!(l.leaseDurationSeconds > l.renewDeadlineSeconds)) {
      ctx.addIssue({
        code: "custom",
        path: ["renewDeadlineSeconds"],
        message: "must be shorter than leaseDurationSeconds (else two replicas could both lead)",
      });
    }
    if (!(l.renewDeadlineSeconds > l.retryPeriodSeconds)) {
      ctx.addIssue({
        code: "custom",
        path: ["retryPeriodSeconds"],
        message:
          "must be shorter than renewDeadlineSeconds (else a leader could never renew in time)",
      });
    }
  }).optional(),
  /**
   * Where this replica runs when cairn runs on the cluster it upgrades (the downward API sets
   * CAIRN_POD_NAMESPACE and CAIRN_POD_NAME). With leader election, the leader hands the Lease
   * over before a node that hosts its own pod is drained, so the step is run by a replica that
   * stays up; a replica that cannot find a ready peer on another node holds the step instead.
   */
  selfHosting: z.strictObject({
    podNamespace: z.string().regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, "not a namespace name"),
    podName: z.string().regex(/^[a-z0-9]([-.a-z0-9]{0,251}[a-z0-9])?$/, "not a pod name"),
    /** Label selector of cairn's replicas (the Deployment's pods) in `podNamespace`. */
    replicaSelector: z.string().min(1).default("app.kubernetes.io/name=cairn"),
  }).optional(),
  /**
   * The cluster's default maintenance windows (docs/operating.md#maintenance-windows): a plan
   * that declares none is committed only inside these. Absent: no window restriction.
   */
  maintenanceWindows: z.array(MaintenanceWindow).min(1).max(16).optional(),
  /**
   * Alertmanager's base URL (no credentials): vetoing alert bindings read it and expected-noise
   * silences are created there. Absent: alert bindings are unreadable, no silence is created.
   */
  alertmanagerUrl: HttpUrl.optional(),
  /**
   * Registry host → base URL that serves it, for resolving the plans' installer references before
   * each commitment (an in-cluster pull-through mirror, or the twin's loopback registry standing
   * in for factory.talos.dev in tests). Absent: each reference is resolved at the host it names.
   */
  registryMirrors: z.record(
    z.string().regex(/^[A-Za-z0-9.-]+(:\d+)?$/, "not a registry host"),
    HttpUrl,
  ).optional(),
  /**
   * Webhooks told of preview ready, execution start, hold, stall, unresolved and completed
   * (docs/operating.md#notifications): generic JSON, or Slack / Matrix-compatible payloads.
   */
  notifications: z.array(z.strictObject({
    url: HttpUrl,
    format: z.enum(["json", "slack", "matrix"]).default("json"),
  })).max(8).optional(),
}).superRefine((c, ctx) => {
  for (const root of [c.stateDir, localRepoPath(c.remote)]) {
    if (root !== undefined && isInside(c.allowedSignersPath, root)) {
      ctx.addIssue({
        code: "custom",
        path: ["allowedSignersPath"],
        message:
          `must not be inside ${root}: the trust root may not live in the watched repository or its cache`,
      });
    }
  }
});

/** The configuration as written (before defaults). */
export type RawConfig = z.input<typeof ConfigSchema>;

/** The effective, frozen configuration: defaults applied, derived fields filled. */
export type Config = Readonly<
  Omit<
    z.output<typeof ConfigSchema>,
    "reportBranch" | "journalUrl" | "evidenceCacheDir" | "reportAuthor" | "listen"
  > & {
    readonly reportBranch: string;
    readonly journalUrl: string;
    readonly evidenceCacheDir: string;
    readonly reportAuthor: Readonly<{ name: string; email: string }>;
    readonly listen: Readonly<{ host: string; port: number }>;
  }
>;

function localRepoPath(remote: string): string | undefined {
  if (remote.startsWith("/")) return remote;
  if (/^file:\/\//i.test(remote)) {
    try {
      return decodeURIComponent(new URL(remote).pathname);
    } catch {
      return undefined;
    }
  }
  return undefined;
}

function isInside(path: string, root: string): boolean {
  const p = posix.normalize(path);
  const r = posix.normalize(root).replace(/\/+$/, "");
  return p === r || p.startsWith(r + "/");
}

/** One setting that env and flags can override. */
interface Setting {
  readonly path: readonly [string] | readonly [string, string];
  readonly env: string;
  readonly flag: string;
  readonly int?: true;
  /** The ecosystem's own variable, read when the `CAIRN_*` one is unset (`KUBECONFIG`). */
  readonly fallbackEnv?: string;
}

/** Every overridable setting: `CAIRN_<SNAKE>` and `--<kebab>`. */
export const SETTINGS: readonly Setting[] = [
  { path: ["remote"], env: "CAIRN_REMOTE", flag: "remote" },
  { path: ["branch"], env: "CAIRN_BRANCH", flag: "branch" },
  { path: ["planBranchesGlob"], env: "CAIRN_PLAN_BRANCHES_GLOB", flag: "plan-branches-glob" },
  { path: ["reportBranch"], env: "CAIRN_REPORT_BRANCH", flag: "report-branch" },
  { path: ["reportAuthor", "name"], env: "CAIRN_REPORT_AUTHOR_NAME", flag: "report-author-name" },
  {
    path: ["reportAuthor", "email"],
    env: "CAIRN_REPORT_AUTHOR_EMAIL",
    flag: "report-author-email",
  },
  {
    path: ["pollIntervalSeconds"],
    env: "CAIRN_POLL_INTERVAL_SECONDS",
    flag: "poll-interval-seconds",
    int: true,
  },
  { path: ["allowedSignersPath"], env: "CAIRN_ALLOWED_SIGNERS_PATH", flag: "allowed-signers" },
  {
    path: ["requiredApprovals"],
    env: "CAIRN_REQUIRED_APPROVALS",
    flag: "required-approvals",
    int: true,
  },
  // One name per concept: every journal command reads CAIRN_JOURNAL and --journal.
  { path: ["journalUrl"], env: "CAIRN_JOURNAL", flag: "journal" },
  { path: ["stateDir"], env: "CAIRN_STATE_DIR", flag: "state-dir" },
  { path: ["evidenceCacheDir"], env: "CAIRN_EVIDENCE_CACHE", flag: "evidence-cache" },
  {
    path: ["kubeconfigPath"],
    env: "CAIRN_KUBECONFIG",
    flag: "kubeconfig",
    fallbackEnv: "KUBECONFIG",
  },
  {
    path: ["talosconfigPath"],
    env: "CAIRN_TALOSCONFIG",
    flag: "talosconfig",
    fallbackEnv: "TALOSCONFIG",
  },
  { path: ["kubeContext"], env: "CAIRN_KUBE_CONTEXT", flag: "context" },
  { path: ["talosContext"], env: "CAIRN_TALOS_CONTEXT", flag: "talos-context" },
  {
    path: ["settleFloorSeconds"],
    env: "CAIRN_SETTLE_FLOOR_SECONDS",
    flag: "settle-floor-seconds",
    int: true,
  },
  { path: ["listen", "host"], env: "CAIRN_LISTEN_HOST", flag: "listen-host" },
  { path: ["listen", "port"], env: "CAIRN_LISTEN_PORT", flag: "listen-port", int: true },
  { path: ["hookSecretPath"], env: "CAIRN_HOOK_SECRET_PATH", flag: "hook-secret" },
  { path: ["logLevel"], env: "CAIRN_LOG_LEVEL", flag: "log-level" },
  {
    path: ["gitTimeoutSeconds"],
    env: "CAIRN_GIT_TIMEOUT_SECONDS",
    flag: "git-timeout-seconds",
    int: true,
  },
  { path: ["leaderElection", "namespace"], env: "CAIRN_LEASE_NAMESPACE", flag: "lease-namespace" },
  { path: ["leaderElection", "identity"], env: "CAIRN_LEASE_IDENTITY", flag: "lease-identity" },
  { path: ["selfHosting", "podNamespace"], env: "CAIRN_POD_NAMESPACE", flag: "pod-namespace" },
  { path: ["selfHosting", "podName"], env: "CAIRN_POD_NAME", flag: "pod-name" },
];

/** `parseArgs` options for every setting plus `--config FILE`; spread into a command's options. */
export const CONFIG_FLAG_OPTIONS: Readonly<Record<string, { type: "string" }>> = Object.freeze(
  Object.fromEntries([
    ["config", { type: "string" as const }],
    ...SETTINGS.map((s) => [s.flag, { type: "string" as const }]),
  ]),
);

/** Inputs of {@link loadConfig}: everything it reads, passed in. */
export interface LoadConfigInput {
  /** The config file's text and the name to report in locations (omit when there is none). */
  readonly file?: { readonly text: string; readonly name: string };
  /** The process environment; only `CAIRN_*` names in {@link SETTINGS} are read. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Parsed flags keyed by flag name (`poll-interval-seconds`); unknown keys are ignored. */
  readonly flags?: Readonly<Record<string, unknown>>;
}

/** Result of {@link safeLoadConfig}. */
export type SafeLoadConfigResult =
  | { readonly ok: true; readonly config: Config }
  | { readonly ok: false; readonly problems: readonly Problem[] };

type Origin = { readonly kind: "env" | "flag"; readonly name: string };

function invalid(message: string, extra: Partial<Problem> = {}): Problem {
  return { reason: "ConfigInvalid", message, ...extra };
}

function originLabel(o: Origin): string {
  return o.kind === "env" ? `${o.name} (environment)` : `--${o.name}`;
}

function readFile(file: { text: string; name: string }): LoadedYaml | "empty" | Problem[] {
  const withoutComments = file.text.replace(/^\s*#.*$/gm, "").trim();
  if (withoutComments === "") return "empty";
  const r = loadYaml(new TextEncoder().encode(file.text), {
    file: file.name,
    maxBytes: MAX_CONFIG_BYTES,
  });
  if (r.ok) return r.loaded;
  // The loader speaks in plan reasons; a config problem is always ConfigInvalid.
  return r.problems.map((p) => ({ ...p, reason: "ConfigInvalid" as const }));
}

function overlay(
  raw: Record<string, unknown>,
  input: LoadConfigInput,
  origins: Map<string, Origin>,
): Problem[] {
  const problems: Problem[] = [];
  for (const s of SETTINGS) {
    const fromEnv: string | readonly string[] | undefined = input.env?.[s.env] ||
      envFallback(s, input.env);
    const fromFlag = input.flags?.[s.flag];
    const pick: [string | readonly string[], Origin] | undefined = typeof fromFlag === "string"
      ? [fromFlag, { kind: "flag", name: s.flag }]
      : fromEnv !== undefined && fromEnv !== "" && fromEnv.length > 0
      ? [fromEnv, { kind: "env", name: input.env?.[s.env] ? s.env : s.fallbackEnv ?? s.env }]
      : undefined;
    if (!pick) continue;
    const [text, origin] = pick;
    if (typeof text !== "string") {
      setAt(raw, s.path, [...text]); // a KUBECONFIG list, merged where it is read
      origins.set(s.path.join("."), origin);
      continue;
    }
    if (s.int && !/^\d{1,9}$/.test(text.trim())) {
      problems.push(invalid(`${originLabel(origin)}: expected a whole number, got "${text}"`));
      continue;
    }
    setAt(raw, s.path, s.int ? Number(text.trim()) : text);
    origins.set(s.path.join("."), origin);
  }
  return problems;
}

function setAt(raw: Record<string, unknown>, path: Setting["path"], value: unknown): void {
  const [head, sub] = path;
  if (sub === undefined) raw[head] = value;
  else {
    const parent = raw[head];
    raw[head] = { ...(isRecord(parent) ? parent : {}), [sub]: value };
  }
}

/**
 * The ecosystem's variable: KUBECONFIG is a list of files (merged as kubectl merges them, where
 * the kubeconfig is read), TALOSCONFIG one file (talosctl reads a single path).
 */
function envFallback(
  s: Setting,
  env: Readonly<Record<string, string | undefined>> | undefined,
): string | readonly string[] | undefined {
  if (!s.fallbackEnv) return undefined;
  const value = env?.[s.fallbackEnv] ?? "";
  if (s.fallbackEnv !== "KUBECONFIG") return value || undefined;
  const files = value.split(":").filter((p) => p !== "");
  return files.length > 0 ? files : undefined;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function issueProblems(
  issues: readonly z.core.$ZodIssue[],
  loaded: LoadedYaml | undefined,
  origins: Map<string, Origin>,
): Problem[] {
  return issues.flatMap((issue): Problem[] => {
    const keys = issue.code === "unrecognized_keys" ? issue.keys : [undefined];
    return keys.map((key) => {
      const full = key === undefined ? issue.path : [...issue.path, key];
      const path = formatPath(full);
      const message = key !== undefined
        ? `Unknown field "${key}"; unknown fields are refused`
        : plainIssueMessage(issue);
      const origin = origins.get(full.map(String).join("."));
      if (origin) return invalid(`${originLabel(origin)}: ${message}`, { details: { path } });
      if (!loaded) return invalid(`${path || "config"}: ${message}`, { details: { path } });
      const at = locate(loaded, issue.path, key);
      return invalid(message, {
        location: { file: loaded.file, ...at, ...(path ? { path } : {}) },
      });
    });
  });
}

function deepFreeze<T>(v: T): T {
  if (typeof v === "object" && v !== null) {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}

/**
 * Loads the effective configuration: file < `CAIRN_*` env < flags. Never throws for bad input;
 * every problem carries reason `ConfigInvalid` and, for file values, `file:line:column`.
 */
export function safeLoadConfig(input: LoadConfigInput): SafeLoadConfigResult {
  let loaded: LoadedYaml | undefined;
  let raw: Record<string, unknown> = {};
  if (input.file) {
    const r = readFile(input.file);
    if (Array.isArray(r)) return { ok: false, problems: r };
    if (r !== "empty") {
      loaded = r;
      if (!isRecord(r.value)) {
        return {
          ok: false,
          problems: [invalid("The config file must be a mapping", {
            location: { file: r.file, ...locate(r, []) },
          })],
        };
      }
      raw = structuredClone(r.value);
    }
  }
  const origins = new Map<string, Origin>();
  const overlayProblems = overlay(raw, input, origins);
  const parsed = ConfigSchema.safeParse(raw);
  const problems = [
    ...overlayProblems,
    ...(parsed.success ? [] : issueProblems(parsed.error.issues, loaded, origins)),
  ];
  if (!parsed.success || problems.length > 0) return { ok: false, problems };
  const c = parsed.data;
  const config: Config = {
    ...c,
    reportBranch: c.reportBranch ?? DEFAULT_REPORT_BRANCH,
    journalUrl: c.journalUrl ?? `file:${posix.join(c.stateDir, "journal.db")}`,
    evidenceCacheDir: c.evidenceCacheDir ?? posix.join(c.stateDir, "evidence"),
  };
  return { ok: true, config: deepFreeze(config) };
}

/** Like {@link safeLoadConfig} but throws a `CairnError` (`ConfigInvalid`) for the first problem. */
export function loadConfig(input: LoadConfigInput): Config {
  const r = safeLoadConfig(input);
  if (r.ok) return r.config;
  const first = r.problems[0]!;
  const more = r.problems.length > 1 ? ` (and ${r.problems.length - 1} more)` : "";
  throw new CairnError({ ...first, message: first.message + more });
}

/** The effective config for logging: URLs lose userinfo and secret query values. */
export function redactedConfig(config: Config): Record<string, unknown> {
  return {
    ...config,
    remote: redactUrl(config.remote),
    journalUrl: redactUrl(config.journalUrl),
  };
}
