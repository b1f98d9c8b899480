/**
 * The apid method table (protocols.md A1.3: which roles may call what, whether a call changes
 * the machine, and the fault point it fires at) and the call counters. Shared by the gRPC
 * server (`server.ts`) and the in-process Talos port (`../inproc/talos.ts`), so both admit and
 * count calls by the same rules; no transport here.
 */
export interface MethodSpec {
  readonly roles: readonly string[];
  readonly mutating: boolean;
  /** Fault point name, e.g. `talos.Reboot`. */
  readonly point: string;
}

const ADMIN = ["os:admin"];
const OPERATOR = ["os:admin", "os:operator"];
const READER = ["os:admin", "os:operator", "os:reader"];
const ETCD_READ = [...READER, "os:etcd:backup"];

/** Method → allowed roles (protocols.md A1.3) and whether the call changes the machine. */
export const TALOS_METHODS: Readonly<Record<string, MethodSpec>> = {
  "/machine.MachineService/Version": { roles: READER, mutating: false, point: "talos.Version" },
  "/machine.MachineService/ServiceList": {
    roles: READER,
    mutating: false,
    point: "talos.ServiceList",
  },
  "/machine.MachineService/EtcdMemberList": {
    roles: ETCD_READ,
    mutating: false,
    point: "talos.EtcdMemberList",
  },
  "/machine.MachineService/EtcdStatus": {
    roles: ETCD_READ,
    mutating: false,
    point: "talos.EtcdStatus",
  },
  "/machine.MachineService/Read": { roles: ADMIN, mutating: false, point: "talos.Read" },
  "/machine.MachineService/Reboot": { roles: OPERATOR, mutating: true, point: "talos.Reboot" },
  "/machine.MachineService/Upgrade": { roles: ADMIN, mutating: true, point: "talos.Upgrade" },
  "/machine.MachineService/ApplyConfiguration": {
    roles: ADMIN,
    mutating: true,
    point: "talos.ApplyConfiguration",
  },
  "/machine.ImageService/Pull": {
    roles: OPERATOR,
    mutating: true,
    point: "talos.ImageService.Pull",
  },
  "/machine.LifecycleService/Upgrade": {
    roles: ADMIN,
    mutating: true,
    point: "talos.LifecycleService.Upgrade",
  },
  "/cosi.resource.State/Get": { roles: READER, mutating: false, point: "talos.cosi.Get" },
};

/** Call counters, read through the twin's control endpoint. */
export class TalosStats {
  calls: Record<string, number> = {};
  mutating: Record<string, number> = {};
  byNode: Record<string, Record<string, number>> = {};
  /** Mutating calls by the `node` target as sent (an address, a hostname, or `(endpoint)`). */
  mutatingByTarget: Record<string, Record<string, number>> = {};
  /** Every call by the `node` target as sent. */
  targets: Record<string, number> = {};
  denied = 0;
  totalCalls = 0;
  totalMutating = 0;
  /** Distinct client connections seen (peer address:port). */
  readonly peers = new Set<string>();

  #waiters = new Set<{ method: string; atLeast: number; resolve: () => void }>();

  /** Resolves once `method` (short form, e.g. `ImageService/Pull`) was called `atLeast` times. */
  waitForCalls(method: string, atLeast: number): Promise<void> {
    if ((this.calls[method] ?? 0) >= atLeast) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.add({ method, atLeast, resolve }));
  }

  /** `node`: the machine reached; `target`: the `node` metadata as the client sent it. */
  record(method: string, node: string, mutating: boolean, target = node): void {
    const short = method.replace(/^\/machine\./, "");
    this.totalCalls++;
    this.calls[short] = (this.calls[short] ?? 0) + 1;
    this.targets[target] = (this.targets[target] ?? 0) + 1;
    const perNode = (this.byNode[node] ??= {});
    perNode[short] = (perNode[short] ?? 0) + 1;
    if (mutating) {
      this.totalMutating++;
      this.mutating[short] = (this.mutating[short] ?? 0) + 1;
      const perTarget = (this.mutatingByTarget[target] ??= {});
      perTarget[short] = (perTarget[short] ?? 0) + 1;
    }
    // Waiters wake after the handler that recorded this call has run (it runs synchronously).
    for (const w of [...this.#waiters]) {
      if ((this.calls[w.method] ?? 0) >= w.atLeast) {
        this.#waiters.delete(w);
        queueMicrotask(w.resolve);
      }
    }
  }

  reset(): void {
    this.calls = {};
    this.mutating = {};
    this.byNode = {};
    this.mutatingByTarget = {};
    this.targets = {};
    this.denied = 0;
    this.totalCalls = 0;
    this.totalMutating = 0;
    this.peers.clear();
  }

  toJSON(): Record<string, unknown> {
    return {
      totalCalls: this.totalCalls,
      totalMutating: this.totalMutating,
      denied: this.denied,
      connections: this.peers.size,
      calls: this.calls,
      mutating: this.mutating,
      byNode: this.byNode,
      mutatingByTarget: this.mutatingByTarget,
      targets: this.targets,
    };
  }
}
