/**
 * The Talos apid simulator: one gRPC endpoint over mutual TLS that serves every node of the
 * twin, routing by `node` metadata the way apid proxies (protocols.md A1.4). Roles come from the
 * client certificate's O= values and are enforced with the method → role table of A1.3.
 *
 * Runs under Node (from the twin bundle): Deno 2.9.6's node:http2 server aborts when a busy
 * client closes its connection (denoland/deno#36788), so this module must never serve from Deno
 * in tests or rehearsals.
 */
import * as grpc from "@grpc/grpc-js";
import * as loader from "@grpc/proto-loader";
import type { SimClock } from "../clock.ts";
import type { FaultSchedule } from "../faults.ts";
import { GRPC, type TalosCluster, type TalosNode, TalosSimError } from "./model.ts";
import { cosiReadAllowed } from "./machine_config.ts";
import { type MethodSpec, TALOS_METHODS, TalosStats } from "./methods.ts";
import { StaleReads } from "./stale_reads.ts";
import { REFUSALS, RESET_MESSAGE, routeToNode, takeTransportFault } from "./transport.ts";

export { TALOS_METHODS, TalosStats };

// deno-lint-ignore no-explicit-any
type Msg = any;
type AnyCall = grpc.ServerUnaryCall<Msg, Msg> | grpc.ServerWritableStream<Msg, Msg>;

export interface TalosSimOptions {
  readonly cluster: TalosCluster;
  readonly clock: SimClock;
  readonly faults: FaultSchedule;
  readonly tls: { readonly caPem: string; readonly certPem: string; readonly keyPem: string };
  /** Directory holding cairn's `proto/` subset. */
  readonly protoDir: string;
  readonly host?: string;
  readonly port?: number;
}

export interface TalosSimServer {
  readonly port: number;
  /** `host:port` clients dial. */
  readonly endpoint: string;
  readonly stats: TalosStats;
  /** Server streams still open (pulls and installs in progress, as the client sees them). */
  openStreams(): number;
  /** Sends GOAWAY on every open connection (server-side churn); new connections still work. */
  closeConnections(graceMs?: number): number;
  stop(): Promise<void>;
}

/** Loads cairn's proto subset (shared with the client adapter's options). */
export function loadTalosProtos(protoDir: string): grpc.GrpcObject {
  const def = loader.loadSync(
    [
      "machine/machine.proto",
      "machine/image.proto",
      "machine/lifecycle.proto",
      "cosi/resource.proto",
    ],
    {
      includeDirs: [protoDir],
      keepCase: true,
      longs: String,
      enums: String,
      defaults: true,
      oneofs: true,
    },
  );
  return grpc.loadPackageDefinition(def);
}

/** Starts the simulator and resolves once it listens. */
export async function startTalosSim(opts: TalosSimOptions): Promise<TalosSimServer> {
  const pkg = loadTalosProtos(opts.protoDir);
  const machine = pkg["machine"] as grpc.GrpcObject;
  const svc = (name: string) => (machine[name] as grpc.ServiceClientConstructor).service;
  const server = new grpc.Server({ "grpc.max_receive_message_length": 32 * 1024 * 1024 });
  const h = new Handlers(opts);
  server.addService(svc("MachineService"), h.machineService());
  server.addService(svc("ImageService"), h.imageService());
  server.addService(svc("LifecycleService"), h.lifecycleService());
  const cosi = (pkg["cosi"] as grpc.GrpcObject)["resource"] as grpc.GrpcObject;
  server.addService((cosi["State"] as grpc.ServiceClientConstructor).service, h.cosiState());
  const creds = grpc.ServerCredentials.createSsl(
    Buffer.from(opts.tls.caPem),
    [{ cert_chain: Buffer.from(opts.tls.certPem), private_key: Buffer.from(opts.tls.keyPem) }],
    true,
  );
  const host = opts.host ?? "127.0.0.1";
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${host}:${opts.port ?? 0}`, creds, (err, p) => err ? reject(err) : resolve(p))
  );
  let sessionsClosed = 0;
  return {
    port,
    endpoint: `${host}:${port}`,
    stats: h.stats,
    openStreams: () => h.openStreams,
    closeConnections(graceMs = 2000) {
      server.drain(`${host}:${port}`, graceMs);
      return ++sessionsClosed;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.forceShutdown();
        resolve();
      }),
  };
}

interface StreamOut {
  write(msg: Msg): void;
  end(): void;
  fail(e: unknown): void;
}

/** A stream writer that drops writes once the client went away or the stream ended. */
function streamOut(call: grpc.ServerWritableStream<Msg, Msg>, onClose: () => void): StreamOut {
  let open = true;
  const close = () => {
    if (open) onClose();
    open = false;
  };
  call.on("cancelled", close);
  return {
    write: (m) => void (open && call.write(m)),
    end: () => {
      if (open) call.end();
      close();
    },
    fail: (e) => {
      if (open) call.emit("error", toStatus(e));
      close();
    },
  };
}

/** Passes the first item through, then cuts the stream with UNAVAILABLE; the rest is lost. */
function cutAfterFirst(out: StreamOut): StreamOut {
  let first = true;
  return {
    write: (m) => {
      if (!first) return;
      first = false;
      out.write(m);
      out.fail(new TalosSimError(GRPC.UNAVAILABLE, RESET_MESSAGE));
    },
    end() {},
    fail() {},
  };
}

/** Turns a thrown error into a gRPC status object. */
function toStatus(e: unknown): Partial<grpc.StatusObject> {
  if (e instanceof TalosSimError) return { code: e.code, details: e.message };
  return { code: GRPC.INTERNAL, details: e instanceof Error ? e.message : String(e) };
}

class Handlers {
  readonly stats = new TalosStats();
  /**
   * Server streams still open. A client waiting on one (a pull, an install) is blocked on work
   * that takes virtual time, so the twin moves time forward while any is open.
   */
  openStreams = 0;

  /** Every machine's earlier answers, for the reads a `stale-read` fault answers from them. */
  readonly #stale: StaleReads;

  constructor(private readonly o: TalosSimOptions) {
    this.#stale = new StaleReads(o.faults, o.clock);
  }

  /** Roles from the client certificate's Organization values. */
  #roles(call: AnyCall): string[] {
    const o = call.getAuthContext().sslPeerCertificate?.subject?.O as unknown;
    if (Array.isArray(o)) return o.map(String);
    return typeof o === "string" ? [o] : [];
  }

  /** Counts, authorizes and routes a call; returns the target nodes (many only for `nodes`). */
  #admit(
    full: string,
    call: AnyCall,
  ): { spec: MethodSpec; nodes: TalosNode[]; many: boolean } {
    const spec = TALOS_METHODS[full]!;
    const nodeMd = call.metadata.get("node").map(String);
    const nodesMd = call.metadata.get("nodes").flatMap((v: unknown) => String(v).split(","))
      .map((s: string) => s.trim()).filter((s: string) => s !== "");
    // Counted per machine reached (a target that routes nowhere is counted under itself).
    const reached = (t: string) => this.o.cluster.find(t)?.name ?? t;
    const label = nodeMd[0] !== undefined
      ? reached(nodeMd[0])
      : (nodesMd.length > 0 ? nodesMd.map(reached).join(",") : this.o.cluster.endpointNode().name);
    this.stats.record(full, label, spec.mutating, nodeMd[0] ?? (nodesMd.join(",") || "(endpoint)"));
    this.stats.peers.add(call.getPeer());
    if (!this.#roles(call).some((r) => spec.roles.includes(r))) {
      this.stats.denied++;
      throw new TalosSimError(GRPC.PERMISSION_DENIED, "not authorized");
    }
    if (nodeMd.length > 1) {
      throw new TalosSimError(GRPC.INVALID_ARGUMENT, "node metadata must have exactly one value");
    }
    if (nodesMd.length > 0 && nodeMd.length === 0) {
      if (!full.startsWith("/machine.MachineService/")) {
        throw new TalosSimError(GRPC.INVALID_ARGUMENT, "one-2-many proxying is not supported");
      }
      return { spec, nodes: nodesMd.map((n: string) => this.#find(n)), many: true };
    }
    const target = nodeMd[0];
    return {
      spec,
      nodes: [target ? this.#find(target) : this.o.cluster.endpointNode()],
      many: false,
    };
  }

  #find(target: string): TalosNode {
    return routeToNode(this.o.cluster, target);
  }

  #transportFault(spec: MethodSpec, node: TalosNode) {
    return takeTransportFault(this.o.faults, spec, node, this.o.clock);
  }

  unary(full: string, run: (node: TalosNode, req: Msg) => Msg): grpc.handleUnaryCall<Msg, Msg> {
    return (call, callback) => {
      try {
        const { nodes, many, spec } = this.#admit(full, call);
        if (many) {
          callback(null, {
            messages: nodes.map((n) => aggregateOne(n, () => run(n, call.request))),
          });
          return;
        }
        const node = nodes[0]!;
        const fault = this.#transportFault(spec, node);
        const reset = fault?.params?.["mode"] === "reset";
        if (fault?.kind === "delay-landing") {
          const land = () =>
            this.o.clock.schedule(Number(fault.params?.["delayMs"] ?? 0), () => {
              try {
                node.assertReachable();
                run(node, call.request);
              } catch { /* a landing that fails is simply lost, as on a real node */ }
            });
          // Default: the client gives up at its own deadline. `mode: reset`: at once.
          if (reset) {
            land();
            callback(toStatus(new TalosSimError(GRPC.UNAVAILABLE, RESET_MESSAGE)));
          } else call.on("cancelled", land);
          return;
        }
        node.assertReachable();
        const msg = run(node, call.request);
        if (fault?.kind === "lose-response") {
          if (reset) callback(toStatus(new TalosSimError(GRPC.UNAVAILABLE, RESET_MESSAGE)));
          return;
        }
        callback(null, { messages: [msg] });
      } catch (e) {
        callback(toStatus(e));
      }
    };
  }

  stream(
    full: string,
    run: (node: TalosNode, req: Msg, out: StreamOut) => void,
  ): grpc.handleServerStreamingCall<Msg, Msg> {
    return (call) => {
      this.openStreams++;
      const out = streamOut(call, () => this.openStreams--);
      try {
        const { nodes, spec } = this.#admit(full, call);
        const node = nodes[0]!;
        const fault = this.#transportFault(spec, node);
        if (fault?.kind === "delay-landing") {
          const land = () =>
            this.o.clock.schedule(Number(fault.params?.["delayMs"] ?? 0), () => {
              try {
                node.assertReachable();
                run(node, call.request, { write() {}, end() {}, fail() {} });
              } catch { /* lost landing */ }
            });
          if (fault.params?.["mode"] === "reset") {
            land();
            out.fail(new TalosSimError(GRPC.UNAVAILABLE, RESET_MESSAGE));
          } else call.on("cancelled", land);
          return;
        }
        node.assertReachable();
        const skip = this.#stale.skipper(spec.point, node.name);
        let index = 0;
        const sink: StreamOut = skip
          ? { ...out, write: (msg) => void (skip(index++) || out.write(msg)) }
          : out;
        // lose-response: the effect runs to completion; the client's stream is cut early.
        run(node, call.request, fault?.kind === "lose-response" ? cutAfterFirst(sink) : sink);
      } catch (e) {
        out.fail(e);
      }
    };
  }

  machineService(): grpc.UntypedServiceImplementation {
    const m = (name: string) => `/machine.MachineService/${name}`;
    const cluster = this.o.cluster;
    return {
      Version: this.unary(m("Version"), (n) => ({
        version: {
          tag: this.#stale.answer("talos.Version", n.name, "", n.runningVersion),
          sha: "cairnsim",
          built: "",
          go_version: "go1.25",
          os: "linux",
          arch: n.arch,
        },
        platform: { name: n.platform, mode: "metal" },
        features: { rbac: true },
      })),
      ServiceList: this.unary(m("ServiceList"), (n) => ({
        services: this.#stale.answer(
          "talos.ServiceList",
          n.name,
          "",
          n.services.map((s) => ({
            id: s.id,
            state: s.state,
            events: { events: [] },
            health: { unknown: false, healthy: s.healthy, last_message: s.lastMessage },
          })),
        ),
      })),
      EtcdMemberList: this.unary(m("EtcdMemberList"), (n) => {
        requireControlPlane(n, "EtcdMemberList");
        return {
          legacy_members: [],
          members: cluster.controlPlanes().map((cp) => ({
            id: cp.etcdMemberId,
            hostname: cp.name,
            peer_urls: [`https://${cp.address}:2380`],
            client_urls: [`https://${cp.address}:2379`],
            is_learner: false,
          })),
        };
      }),
      EtcdStatus: this.unary(m("EtcdStatus"), (n) => {
        requireControlPlane(n, "EtcdStatus");
        const index = String(Math.floor(this.o.clock.now() / 100) % 1_000_000_000);
        return {
          member_status: {
            protocol_version: "3.6.5",
            db_size: "52428800",
            db_size_in_use: "31457280",
            leader: cluster.etcdLeader()?.etcdMemberId ?? "0",
            raft_index: index,
            raft_term: "7",
            raft_applied_index: index,
            errors: [],
            is_learner: false,
            member_id: n.etcdMemberId,
            storage_version: "3.6.0",
          },
        };
      }),
      Reboot: this.unary(m("Reboot"), (n, req) => ({ actor_id: n.reboot(String(req.mode)) })),
      Upgrade: this.unary(m("Upgrade"), (n, req) => ({
        ack: "Upgrade request received",
        actor_id: n.legacyUpgrade(String(req.image ?? "")),
      })),
      ApplyConfiguration: this.unary(m("ApplyConfiguration"), (n, req) => {
        const out = n.applyConfiguration({
          data: Buffer.from(req.data ?? []).toString("utf8"),
          mode: req.mode,
          dryRun: Boolean(req.dry_run),
          tryTimeoutMs: req.try_mode_timeout ? Number(req.try_mode_timeout.seconds) * 1000 : 0,
        });
        return { warnings: out.warnings, mode: out.mode, mode_details: out.modeDetails };
      }),
      Read: this.stream(m("Read"), (n, req, out) => {
        if (req.path !== "/proc/sys/kernel/random/boot_id") {
          throw new TalosSimError(GRPC.NOT_FOUND, `open ${req.path}: no such file or directory`);
        }
        const bootId = this.#stale.answer("talos.Read", n.name, String(req.path), n.bootId);
        out.write({ bytes: Buffer.from(`${bootId}\n`) });
        out.end();
      }),
    };
  }

  /**
   * COSI `State.Get` for the resources the twin models (`TalosCluster.cosiGet`: the cluster's
   * `Infos.cluster.talos.dev`, the machine's `SystemInformations.hardware.talos.dev`), served by
   * the machine the `node` target reaches; anything else is NOT_FOUND. Takes `unavailable` and
   * `deadline-exceeded` armed at `talos.cosi.Get` (limited to one resource type by
   * `params.type`).
   */
  cosiState(): grpc.UntypedServiceImplementation {
    const full = "/cosi.resource.State/Get";
    const get: grpc.handleUnaryCall<Msg, Msg> = (call, callback) => {
      try {
        const { nodes, spec } = this.#admit(full, call);
        const node = nodes[0]!;
        // A read has no effect to lose: of the transport faults, only the refusals apply, and
        // only to the resource type in `params.type` when the fault names one.
        const f = this.o.faults.peekKind(REFUSALS, spec.point, node.name);
        const forType = f?.params?.["type"] === undefined ||
          f.params["type"] === call.request.type;
        if ((f?.kind === "unavailable" || f?.kind === "deadline-exceeded") && forType) {
          this.#transportFault(spec, node);
        }
        const { namespace, type, id } = call.request;
        if (!cosiReadAllowed(type, this.#roles(call))) {
          this.stats.denied++;
          throw new TalosSimError(GRPC.PERMISSION_DENIED, "not authorized");
        }
        node.assertReachable();
        const fresh = this.o.cluster.cosiGet(node, namespace, type, id);
        const r = this.#stale.answer(
          spec.point,
          node.name,
          `${namespace}/${type}/${id}`,
          fresh,
          type,
        );
        callback(null, {
          resource: {
            metadata: { namespace, type, id, version: r.version, owner: r.owner },
            spec: { proto_spec: Buffer.alloc(0), yaml_spec: r.yaml },
          },
        });
      } catch (e) {
        callback(toStatus(e));
      }
    };
    return { Get: get };
  }

  imageService(): grpc.UntypedServiceImplementation {
    const clock = this.o.clock;
    return {
      Pull: this.stream("/machine.ImageService/Pull", (n, req, out) => {
        const ref = String(req.image_ref ?? "");
        if (!ref) throw new TalosSimError(GRPC.INVALID_ARGUMENT, "image_ref is required");
        const ctrd = containerdOf(req);
        const { alreadyPresent, ms } = n.pull(ref, ctrd);
        const layer = (status: string) => ({
          pull_progress: {
            layer_id: "sha256:" + "0".repeat(64),
            progress: { status, offset: "0", total: "104857600" },
          },
        });
        out.write(layer(alreadyPresent ? "ALREADY_EXISTS" : "DOWNLOADING"));
        clock.schedule(ms, () => {
          n.finishPull(ref, ctrd);
          out.write(layer("EXTRACT_COMPLETE"));
          out.write({ name: ref });
          out.end();
        });
      }),
    };
  }

  lifecycleService(): grpc.UntypedServiceImplementation {
    return {
      Upgrade: this.stream("/machine.LifecycleService/Upgrade", (n, req, out) => {
        const is114 = n.is114;
        const emit = (line: string) => {
          // v1.14 sends one message per line; v1.13 sends raw chunks that split lines.
          if (is114) out.write({ progress: { message: `${line}\n` } });
          else {
            const cut = Math.ceil(line.length / 2);
            out.write({ progress: { message: line.slice(0, cut) } });
            out.write({ progress: { message: `${line.slice(cut)}\n` } });
          }
        };
        const { done } = n.startInstall(
          String(req.source?.image_name ?? ""),
          containerdOf(req),
          emit,
        );
        void done.then((code) => {
          out.write({ progress: { exit_code: code } });
          out.end();
        });
      }),
    };
  }
}

function containerdOf(req: Msg): { driver: string; namespace: string } {
  return {
    driver: String(req.containerd?.driver ?? "CONTAINERD"),
    namespace: String(req.containerd?.namespace ?? "NS_UNKNOWN"),
  };
}

function requireControlPlane(n: TalosNode, method: string): void {
  if (n.role !== "controlplane") {
    throw new TalosSimError(
      GRPC.UNIMPLEMENTED,
      `${method} is only available on control plane nodes`,
    );
  }
}

/** One node's part of a one-to-many (`nodes`) reply: its message, or its error in metadata. */
function aggregateOne(n: TalosNode, run: () => Msg): Msg {
  try {
    n.assertReachable();
    return { ...run(), metadata: { hostname: n.name } };
  } catch (e) {
    const s = toStatus(e);
    return {
      metadata: {
        hostname: n.name,
        error: s.details ?? "",
        status: { code: s.code ?? GRPC.INTERNAL, message: s.details ?? "" },
      },
    };
  }
}
