/**
 * One twin machine's configuration as Talos keeps it: the **persistent** document (what the next
 * boot runs, `MachineConfigs.config.talos.dev` id `persistent`), the **active** one (applied to the
 * running OS, id `v1alpha1`), and what the running services actually use — the state a status
 * resource shows (`TimeServerStatuses.net.talos.dev`, `KernelModuleStatuses.runtime.talos.dev` from
 * v1.14). The three differ on purpose: STAGED moves only the persistent document; NO_REBOOT moves
 * both documents, and a service picks a setting up only if that setting activates immediately;
 * everything else waits for the next boot (docs/config-apply.md#the-activation-table).
 *
 * The fault `config-activation-deferred` (point `talos.config`) makes the next apply's settings
 * wait for a boot even where they would normally activate at once: the case where a stored, even
 * "active", configuration is not what the service runs.
 */
import { parse, stringify } from "yaml";

type Doc = Record<string, unknown>;

/**
 * COSI resource types Talos marks `Sensitive`: only `os:admin` may read them
 * (`internal/app/resources/access.go` `AccessPolicy`; the machine configuration holds keys and
 * tokens). Every other type the twin serves is non-sensitive.
 */
const SENSITIVE_TYPES: ReadonlySet<string> = new Set(["MachineConfigs.config.talos.dev"]);

/** Whether a caller with `roles` may read a COSI resource of `type`. */
export function cosiReadAllowed(type: string, roles: readonly string[]): boolean {
  return !SENSITIVE_TYPES.has(type) || roles.includes("os:admin");
}

/**
 * The texts `initialMachineConfig` made, by role and version: every node of every simulated world
 * boots one of a handful, and writing the YAML again per node was a share of a seed's CPU (issue
 * 16). A text is a string, so handing the same one out again is the same answer; bounded, the
 * oldest goes first.
 */
const initialTexts = new Map<string, string>();
const INITIAL_MAX = 64;

/** The configuration a description node boots with (a fixed, small v1alpha1 document). */
export function initialMachineConfig(
  o: { readonly role: string; readonly talosVersion: string },
): string {
  const key = `${o.role}\u0000${o.talosVersion}`;
  let text = initialTexts.get(key);
  if (text === undefined) {
    text = writeInitialMachineConfig(o);
    initialTexts.set(key, text);
    if (initialTexts.size > INITIAL_MAX) initialTexts.delete(initialTexts.keys().next().value!);
  }
  return text;
}

function writeInitialMachineConfig(
  o: { readonly role: string; readonly talosVersion: string },
): string {
  const doc: Doc = {
    version: "v1alpha1",
    machine: {
      type: o.role,
      install: { disk: "/dev/sda", image: `ghcr.io/siderolabs/installer:${o.talosVersion}` },
      time: { servers: ["time.cloudflare.com"] },
      kernel: { modules: [{ name: "br_netfilter" }] },
    },
    cluster: o.role === "controlplane"
      ? { etcd: { extraArgs: { "election-timeout": "5000" } } }
      : { network: { dnsDomain: "cluster.local" } },
  };
  return stringify(doc);
}

function parseDoc(text: string): Doc {
  try {
    const v = parse(text);
    return typeof v === "object" && v !== null && !Array.isArray(v) ? v as Doc : {};
  } catch {
    return {};
  }
}

/** What the running services take from a document: its time servers and kernel modules. */
interface RunningFacts {
  readonly timeServers: readonly string[];
  readonly modules: readonly string[];
}

/**
 * The facts of a document, by its text: every machine boots (and every apply activates) one of a
 * handful of texts, and parsing each again was a share of a simulated seed's CPU (issue 16).
 * Frozen, and copied where a machine keeps them; bounded, the oldest text goes first.
 */
const runningFacts = new Map<string, RunningFacts>();
const FACTS_MAX = 64;

function factsOf(text: string): RunningFacts {
  let f = runningFacts.get(text);
  if (!f) {
    const d = parseDoc(text);
    f = Object.freeze({
      timeServers: Object.freeze(timeServersOf(d)),
      modules: Object.freeze(modulesOf(d)),
    });
    runningFacts.set(text, f);
    if (runningFacts.size > FACTS_MAX) runningFacts.delete(runningFacts.keys().next().value!);
  }
  return f;
}

function timeServersOf(d: Doc): string[] {
  const servers = ((d["machine"] as Doc | undefined)?.["time"] as Doc | undefined)?.["servers"];
  return Array.isArray(servers) ? servers.map(String) : [];
}

function modulesOf(d: Doc): string[] {
  const mods = ((d["machine"] as Doc | undefined)?.["kernel"] as Doc | undefined)?.["modules"];
  if (!Array.isArray(mods)) return [];
  return mods.map((m) => String((m as Doc)?.["name"] ?? "")).filter((n) => n !== "");
}

/** A machine's stored, active and running configuration. */
export class MachineConfigState {
  persistent: string;
  active: string;
  /** Bumped on every change of the document, as a COSI resource version would be. */
  persistentVersion = 1;
  activeVersion = 1;
  /** The NTP servers the time sync service runs with. */
  runningTimeServers: string[];
  /** Kernel modules loaded now. */
  readonly loadedModules: Set<string>;

  constructor(initial: string) {
    this.persistent = initial;
    this.active = initial;
    const f = factsOf(initial);
    this.runningTimeServers = [...f.timeServers];
    this.loadedModules = new Set(f.modules);
  }

  /** STAGED: the next boot runs it; nothing running changes. */
  stage(data: string): void {
    this.persistent = data;
    this.persistentVersion++;
  }

  /**
   * NO_REBOOT (and TRY's temporary document): the active document changes; the running services
   * pick up what activates immediately — time servers, newly listed modules (loaded now) — unless
   * `deferred`, in which case they keep what they run until the next boot. Removed modules stay
   * loaded, etcd keeps its arguments: those need a boot.
   */
  activate(data: string, o: { readonly persist: boolean; readonly deferred: boolean }): void {
    if (o.persist) this.stage(data);
    this.active = data;
    this.activeVersion++;
    if (o.deferred) return;
    const f = factsOf(data);
    this.runningTimeServers = [...f.timeServers];
    for (const m of f.modules) this.loadedModules.add(m);
  }

  /** A boot runs the persistent document: it becomes active and every service starts from it. */
  boot(): void {
    if (this.active !== this.persistent) this.activeVersion++;
    this.active = this.persistent;
    const f = factsOf(this.active);
    this.runningTimeServers = [...f.timeServers];
    this.loadedModules.clear();
    for (const m of f.modules) this.loadedModules.add(m);
  }

  /**
   * The COSI resources this state serves, as `{version, owner, yaml}`; undefined when it does not
   * model the resource (the caller answers NOT_FOUND). `is114` gates the v1.14-only status type.
   */
  cosi(
    namespace: string,
    type: string,
    id: string,
    is114: boolean,
  ): { version: string; owner: string; yaml: string } | undefined {
    if (namespace === "config" && type === "MachineConfigs.config.talos.dev") {
      if (id === "v1alpha1") {
        return { version: String(this.activeVersion), owner: "", yaml: this.active };
      }
      if (id === "persistent") {
        return { version: String(this.persistentVersion), owner: "", yaml: this.persistent };
      }
      return undefined;
    }
    if (
      namespace === "network" && type === "TimeServerStatuses.net.talos.dev" && id === "timeservers"
    ) {
      return {
        version: "1",
        owner: "network.TimeServerSpecController",
        yaml: stringify({ timeServers: this.runningTimeServers, useNTS: false }),
      };
    }
    if (
      is114 && namespace === "runtime" && type === "KernelModuleStatuses.runtime.talos.dev" &&
      this.loadedModules.has(id)
    ) {
      return {
        version: "1",
        owner: "runtime.KernelModuleStatusController",
        yaml: stringify({ type: "dynamic", size: 16384, referenceCount: 0, state: "live" }),
      };
    }
    return undefined;
  }
}
