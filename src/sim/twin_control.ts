/**
 * Client of the twin's control endpoint (see twin.ts), for tests and `cairn rehearse` running in
 * another process than the twin.
 */
import type { Fault } from "./faults.ts";
import type { RegistryStats } from "./registry/server.ts";

/** Facts the control endpoint lets a caller set on a node. */
export interface NodeFacts {
  readonly rebootSeconds?: number;
  readonly installSeconds?: number;
  readonly pullSeconds?: number;
  readonly kubeletVersion?: string;
  readonly runningVersion?: string;
  readonly services?: Readonly<
    Record<string, { healthy?: boolean; state?: string; lastMessage?: string }>
  >;
}

/** A node as the Talos model sees it (GET /nodes/NAME). */
export interface TalosNodeSnapshot {
  readonly name: string;
  readonly role: string;
  readonly stage: "running" | "rebooting" | "down" | "booting";
  readonly runningVersion: string;
  readonly runningSchematic: string;
  readonly bootId: string;
  readonly defaultSlot: "A" | "B";
  readonly bootedSlot: "A" | "B";
  readonly defaultEntry: { version: string; schematic: string } | null;
  readonly fallbackEntry: { version: string; schematic: string } | null;
  readonly installsSinceBoot: number;
  readonly installLocked: boolean;
  readonly images: readonly string[];
  readonly services: ReadonlyArray<
    { id: string; state: string; healthy: boolean; lastMessage: string }
  >;
  /** The active machine configuration document. */
  readonly config: string;
  /** The persistent document when it differs from the active one (a staged change), else null. */
  readonly stagedConfig: string | null;
  /** What the running services use: NTP servers, loaded kernel modules. */
  readonly runningTimeServers: readonly string[];
  readonly loadedModules: readonly string[];
  readonly history: readonly string[];
}

export interface TalosStatsSnapshot {
  readonly totalCalls: number;
  readonly totalMutating: number;
  readonly denied: number;
  /** Distinct client connections seen since the last reset. */
  readonly connections: number;
  readonly calls: Readonly<Record<string, number>>;
  readonly mutating: Readonly<Record<string, number>>;
  readonly byNode: Readonly<Record<string, Readonly<Record<string, number>>>>;
  /** Mutating calls by the `node` target as sent. */
  readonly mutatingByTarget: Readonly<Record<string, Readonly<Record<string, number>>>>;
  /** Every call by the `node` target as sent. */
  readonly targets: Readonly<Record<string, number>>;
}

export class TwinControl {
  constructor(readonly url: string) {}

  async #call<T>(method: "GET" | "POST", path: string, body?: unknown): Promise<T> {
    const res = await fetch(this.url + path, {
      method,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const json = await res.json();
    if (!res.ok) throw new Error(`twin control ${method} ${path}: ${res.status} ${json.error}`);
    return json as T;
  }

  /** Moves virtual time forward by `ms`, firing every timer due. */
  async advance(ms: number): Promise<number> {
    return (await this.#call<{ nowMs: number }>("POST", "/advance", { ms })).nowMs;
  }

  async runUntilIdle(limitMs?: number): Promise<number> {
    const body = limitMs === undefined ? {} : { limitMs };
    return (await this.#call<{ nowMs: number }>("POST", "/run-until-idle", body)).nowMs;
  }

  async now(): Promise<number> {
    return (await this.#call<{ nowMs: number }>("GET", "/now")).nowMs;
  }

  /** Flux delivers a merge on the watched branch: `commit`, and each OCIRepository's new tag. */
  async gitopsMerge(
    commit: string,
    ociTags: Readonly<Record<string, string>> = {},
  ): Promise<void> {
    await this.#call("POST", "/gitops/merge", { commit, ociTags });
  }

  arm(fault: Fault): Promise<unknown> {
    return this.#call("POST", "/faults", fault);
  }

  faults(): Promise<{ remaining: Fault[]; fired: unknown[] }> {
    return this.#call("GET", "/faults");
  }

  node(name: string): Promise<TalosNodeSnapshot> {
    return this.#call("GET", `/nodes/${encodeURIComponent(name)}`);
  }

  setNode(name: string, facts: NodeFacts): Promise<TalosNodeSnapshot> {
    return this.#call("POST", `/nodes/${encodeURIComponent(name)}`, facts);
  }

  stats(): Promise<{ talos: TalosStatsSnapshot; kube: unknown; registry: RegistryStats }> {
    return this.#call("GET", "/stats");
  }

  resetStats(): Promise<unknown> {
    return this.#call("POST", "/stats/reset", {});
  }

  /** Waits until the Talos simulator has received `atLeast` calls of `method` (e.g. `ImageService/Pull`). */
  waitForCalls(method: string, atLeast: number): Promise<unknown> {
    return this.#call("POST", "/talos/wait-calls", { method, atLeast });
  }

  /** GOAWAY on every open Talos connection. */
  closeTalosConnections(graceMs = 2000): Promise<unknown> {
    return this.#call("POST", "/talos/close-connections", { graceMs });
  }

  shutdown(): Promise<unknown> {
    return this.#call("POST", "/shutdown", {});
  }
}
