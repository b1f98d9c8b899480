/**
 * The Talos port over `@grpc/grpc-js` with mutual TLS from a talosconfig context, using cairn's
 * own `proto/` subset (loaded at run time with `@grpc/proto-loader`; both libraries are imported
 * lazily by `createGrpcTalos`). One call per node with `node` metadata; every call carries a gRPC
 * deadline and honours an abort signal.
 *
 * Connection churn: grpc-js reconnects by itself after the server closes a connection (GOAWAY).
 * A READ that fails with UNAVAILABLE is retried (on a fresh connection when the old one is not
 * ready) while its deadline allows. A MUTATION is sent exactly once; a failure is returned as an
 * outcome class, never retried here. `maxCallsPerChannel` bounds how many calls share one HTTP/2
 * connection, which keeps each connection far below the stream counts at which Deno 2.9.6's
 * node:http2 misbehaves on GOAWAY (denoland/deno#36788).
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type * as GrpcJs from "@grpc/grpc-js";
import type {
  ApplyConfigurationRequest,
  ApplyConfigurationResult,
  ContainerdInstance,
  CosiResource,
  CosiResourceRef,
  EtcdMember,
  EtcdMemberStatus,
  InstallResult,
  LegacyUpgradeResult,
  PullResult,
  RebootMode,
  RebootResult,
  Talos,
  TalosCallOptions,
  TalosMutation,
  TalosService,
  TalosVersion,
} from "../../ports/talos.ts";
import { bootIdFrom, Code, mutationFailure, readError } from "./errors.ts";
import {
  completedInstallTag,
  COSI_GET,
  IMAGE_PULL,
  LIFECYCLE_UPGRADE,
  MACHINE_SERVICE as M,
  notSent,
  streamMutationOutcome,
} from "./mutation_outcome.ts";
import type { TalosContext } from "./talosconfig.ts";

// deno-lint-ignore no-explicit-any
type Msg = any;
type Grpc = typeof GrpcJs;

export interface GrpcTalosOptions {
  readonly context: TalosContext;
  /** Directory of cairn's `proto/` (default: the repository's). */
  readonly protoDir?: string;
  /**
   * Name the server certificate is checked against when an endpoint is an IP address (Deno
   * refuses IP servernames). Default `localhost`.
   */
  readonly tlsServerName?: string;
  /** Attempts for a read that fails with UNAVAILABLE, within its deadline (default 3). */
  readonly readAttempts?: number;
  /** Open a fresh connection after this many calls (default 100; 0 = never). */
  readonly maxCallsPerChannel?: number;
}

const PROTO_FILES = [
  "machine/machine.proto",
  "machine/image.proto",
  "machine/lifecycle.proto",
  "cosi/resource.proto",
];
const DEFAULT_PROTO_DIR = fileURLToPath(new URL("../../../proto/", import.meta.url));

interface MethodDef {
  readonly path: string;
  readonly requestSerialize: (v: Msg) => Buffer;
  readonly responseDeserialize: (b: Buffer) => Msg;
}

type CallResult = { ok: true; value: Msg } | { ok: false; code: number; message: string };

interface StreamResult {
  readonly items: Msg[];
  readonly code: number;
  readonly message: string;
}

/** Loads grpc-js and the protos, and returns a client for one talosconfig context. */
export async function createGrpcTalos(opts: GrpcTalosOptions): Promise<GrpcTalos> {
  const grpc = await import("@grpc/grpc-js");
  const loader = await import("@grpc/proto-loader");
  const def = loader.loadSync(
    PROTO_FILES.map((f) => join(opts.protoDir ?? DEFAULT_PROTO_DIR, f)).map((p) => p),
    {
      includeDirs: [opts.protoDir ?? DEFAULT_PROTO_DIR],
      keepCase: true,
      longs: String,
      enums: String,
      defaults: true,
      oneofs: true,
    },
  );
  const methods = new Map<string, MethodDef>();
  for (const [name, value] of Object.entries(def)) {
    if (!/^(machine|cosi\.resource)\./.test(name) || !isServiceDef(value)) continue;
    for (const m of Object.values(value)) methods.set(m.path, m);
  }
  return new GrpcTalos(grpc, methods, opts);
}

function isServiceDef(v: unknown): v is Record<string, MethodDef> {
  return typeof v === "object" && v !== null &&
    Object.values(v).every((m) => typeof (m as MethodDef).path === "string");
}

function isIp(host: string): boolean {
  return /^\d+\.\d+\.\d+\.\d+$/.test(host) || host.includes(":");
}

function hostOf(endpoint: string): string {
  const v6 = /^\[(.*)\]:\d+$/.exec(endpoint);
  return v6 ? v6[1]! : endpoint.replace(/:\d+$/, "");
}

interface Conn {
  readonly client: GrpcJs.Client;
  calls: number;
  inFlight: number;
  retired: boolean;
}

export class GrpcTalos implements Talos {
  #conn: Conn | undefined;
  #endpointIndex = 0;
  readonly #creds: GrpcJs.ChannelCredentials;
  /** Connections opened so far (for churn tests and diagnostics). */
  connectionsOpened = 0;

  constructor(
    private readonly grpc: Grpc,
    private readonly methods: ReadonlyMap<string, MethodDef>,
    private readonly opts: GrpcTalosOptions,
  ) {
    const c = opts.context;
    this.#creds = grpc.credentials.createSsl(
      Buffer.from(c.caPem),
      Buffer.from(c.keyPem),
      Buffer.from(c.crtPem),
    );
  }

  /** The connection for the next call; counts the call in flight until `#done`. */
  #acquire(): Conn {
    const max = this.opts.maxCallsPerChannel ?? 100;
    if (this.#conn && max > 0 && this.#conn.calls >= max) this.#retire();
    const conn = this.#conn ?? this.#open();
    conn.calls++;
    conn.inFlight++;
    return conn;
  }

  #done(conn: Conn): void {
    conn.inFlight--;
    if (conn.retired && conn.inFlight === 0) conn.client.close();
  }

  #open(): Conn {
    const endpoints = this.opts.context.endpoints;
    const endpoint = endpoints[this.#endpointIndex % endpoints.length]!;
    const options: GrpcJs.ClientOptions = {
      "grpc.max_receive_message_length": 32 * 1024 * 1024,
      // Fresh connection per client: churn must not be hidden by a shared subchannel pool.
      "grpc.use_local_subchannel_pool": 1,
    };
    if (isIp(hostOf(endpoint))) {
      options["grpc.ssl_target_name_override"] = this.opts.tlsServerName ?? "localhost";
    }
    this.#conn = {
      client: new this.grpc.Client(endpoint, this.#creds, options),
      calls: 0,
      inFlight: 0,
      retired: false,
    };
    this.connectionsOpened++;
    return this.#conn;
  }

  /**
   * Stops giving out the current connection. It is closed once its calls have finished: closing
   * a grpc-js client fails calls that have not started yet.
   */
  #retire(): void {
    const conn = this.#conn;
    if (!conn) return;
    this.#conn = undefined;
    conn.retired = true;
    if (conn.inFlight === 0) conn.client.close();
  }

  /** After UNAVAILABLE: move on to a fresh connection (next endpoint) unless this one is fine. */
  #recover(): void {
    const state = this.#conn?.client.getChannel().getConnectivityState(false);
    if (state === this.grpc.connectivityState.READY) return;
    this.#retire();
    this.#endpointIndex++;
  }

  #method(path: string): MethodDef {
    const m = this.methods.get(path);
    if (!m) throw new TypeError(`method ${path} is not in cairn's proto subset`);
    return m;
  }

  #metadata(node: string): GrpcJs.Metadata {
    const md = new this.grpc.Metadata();
    md.set("node", node);
    return md;
  }

  #unary(path: string, node: string, req: Msg, deadline: number, signal?: AbortSignal) {
    const m = this.#method(path);
    const conn = this.#acquire();
    return new Promise<CallResult>((resolve) => {
      const call = conn.client.makeUnaryRequest(
        m.path,
        m.requestSerialize,
        m.responseDeserialize,
        req,
        this.#metadata(node),
        { deadline },
        (err, value) => {
          signal?.removeEventListener("abort", onAbort);
          this.#done(conn);
          if (err) resolve({ ok: false, code: err.code, message: err.details || err.message });
          else resolve({ ok: true, value });
        },
      );
      const onAbort = () => call.cancel();
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  #stream(
    path: string,
    node: string,
    req: Msg,
    deadline: number,
    signal: AbortSignal | undefined,
    onItem?: (item: Msg) => void,
  ): Promise<StreamResult> {
    const m = this.#method(path);
    const conn = this.#acquire();
    return new Promise<StreamResult>((resolve) => {
      const items: Msg[] = [];
      const call = conn.client.makeServerStreamRequest(
        m.path,
        m.requestSerialize,
        m.responseDeserialize,
        req,
        this.#metadata(node),
        { deadline },
      );
      const onAbort = () => call.cancel();
      signal?.addEventListener("abort", onAbort, { once: true });
      call.on("data", (item: Msg) => {
        items.push(item);
        onItem?.(item);
      });
      call.on("error", () => {/* the status event carries the code */});
      call.on("status", (s: GrpcJs.StatusObject) => {
        signal?.removeEventListener("abort", onAbort);
        this.#done(conn);
        resolve({ items, code: s.code, message: s.details });
      });
    });
  }

  /** A read: retried on UNAVAILABLE while the deadline allows; failures throw CairnError. */
  async #read<T>(
    path: string,
    node: string,
    req: Msg,
    opts: TalosCallOptions,
    pick: (value: Msg) => T,
    stream = false,
  ): Promise<T> {
    const deadline = Date.now() + opts.timeoutMs;
    const attempts = opts.attempts ?? this.opts.readAttempts ?? 3;
    for (let attempt = 1;; attempt++) {
      if (opts.signal?.aborted) throw readError(Code.CANCELLED, "aborted", node, path);
      let r: CallResult;
      if (stream) {
        const s = await this.#stream(path, node, req, deadline, opts.signal);
        r = s.code === Code.OK ? { ok: true, value: s.items } : { ok: false, ...s };
      } else r = await this.#unary(path, node, req, deadline, opts.signal);
      if (r.ok) return pick(r.value);
      const unavailable = r.code === Code.UNAVAILABLE;
      // A connection that is not ready is replaced whether this read is sent again or not: the
      // next call (a caller's next poll, when it asked for one attempt) goes out on a fresh one.
      if (unavailable) this.#recover();
      if (!unavailable || attempt >= attempts || Date.now() >= deadline) {
        throw readError(r.code, r.message, node, path);
      }
    }
  }

  #first(value: Msg, node: string, path: string): Msg {
    const msg = value?.messages?.[0];
    if (!msg) throw readError(Code.INTERNAL, "empty response", node, path);
    return msg;
  }

  resource(node: string, ref: CosiResourceRef, opts: TalosCallOptions): Promise<CosiResource> {
    const req = { namespace: ref.namespace, type: ref.type, id: ref.id, options: {} };
    return this.#read(COSI_GET, node, req, opts, (v) => {
      const r = v?.resource;
      if (!r?.metadata) throw readError(Code.INTERNAL, "empty resource", node, COSI_GET);
      return {
        namespace: r.metadata.namespace,
        type: r.metadata.type,
        id: r.metadata.id,
        version: r.metadata.version,
        yamlSpec: r.spec?.yaml_spec ?? "",
      };
    });
  }

  version(node: string, opts: TalosCallOptions): Promise<TalosVersion> {
    const path = M + "Version";
    return this.#read(path, node, {}, opts, (v) => {
      const m = this.#first(v, node, path);
      return {
        tag: m.version?.tag ?? "",
        sha: m.version?.sha ?? "",
        arch: m.version?.arch ?? "",
        platform: m.platform?.name ?? "",
      };
    });
  }

  serviceList(node: string, opts: TalosCallOptions): Promise<readonly TalosService[]> {
    const path = M + "ServiceList";
    return this.#read(
      path,
      node,
      {},
      opts,
      (v) =>
        (this.#first(v, node, path).services ?? []).map((s: Msg) => ({
          id: s.id,
          state: s.state,
          healthy: Boolean(s.health?.healthy),
          healthUnknown: Boolean(s.health?.unknown),
          lastMessage: s.health?.last_message ?? "",
        })),
    );
  }

  etcdMembers(node: string, opts: TalosCallOptions): Promise<readonly EtcdMember[]> {
    const path = M + "EtcdMemberList";
    return this.#read(
      path,
      node,
      { query_local: false },
      opts,
      (v) =>
        (this.#first(v, node, path).members ?? []).map((e: Msg) => ({
          id: String(e.id),
          hostname: e.hostname,
          peerUrls: e.peer_urls ?? [],
          clientUrls: e.client_urls ?? [],
          isLearner: Boolean(e.is_learner),
        })),
    );
  }

  etcdStatus(node: string, opts: TalosCallOptions): Promise<EtcdMemberStatus> {
    const path = M + "EtcdStatus";
    return this.#read(path, node, {}, opts, (v) => {
      const s = this.#first(v, node, path).member_status ?? {};
      return {
        memberId: String(s.member_id ?? "0"),
        leader: String(s.leader ?? "0"),
        raftIndex: String(s.raft_index ?? "0"),
        raftTerm: String(s.raft_term ?? "0"),
        isLearner: Boolean(s.is_learner),
        errors: s.errors ?? [],
        protocolVersion: s.protocol_version ?? "",
        dbSize: String(s.db_size ?? "0"),
      };
    });
  }

  bootId(node: string, opts: TalosCallOptions): Promise<string> {
    const req = { path: "/proc/sys/kernel/random/boot_id" };
    return this.#read(
      M + "Read",
      node,
      req,
      opts,
      (items: Msg[]) =>
        bootIdFrom(
          Buffer.concat(items.map((d) => Buffer.from(d.bytes ?? []))).toString("utf8"),
          node,
          M + "Read",
        ),
      true,
    );
  }

  /** Runs a mutation stream once and classifies how it ended. */
  async #mutateStream<T>(
    path: string,
    node: string,
    req: Msg,
    opts: TalosCallOptions,
    onItem: ((item: Msg) => void) | undefined,
    finish: (items: Msg[]) => T | undefined,
  ): Promise<TalosMutation<T>> {
    if (opts.signal?.aborted) return notSent(node, path);
    const s = await this.#stream(path, node, req, Date.now() + opts.timeoutMs, opts.signal, onItem);
    return streamMutationOutcome(s, finish(s.items), node, path);
  }

  async #mutateUnary<T>(
    path: string,
    node: string,
    req: Msg,
    opts: TalosCallOptions,
    pick: (m: Msg) => T,
  ): Promise<TalosMutation<T>> {
    if (opts.signal?.aborted) return notSent(node, path);
    const r = await this.#unary(path, node, req, Date.now() + opts.timeoutMs, opts.signal);
    if (!r.ok) return mutationFailure(r.code, r.message, node, path, false);
    const m = r.value?.messages?.[0];
    if (!m) {
      return {
        ...mutationFailure(Code.UNKNOWN, "empty response", node, path, true),
        reason: "TalosStreamIncomplete",
      };
    }
    return { outcome: "ok", value: pick(m) };
  }

  pull(
    node: string,
    imageRef: string,
    containerd: ContainerdInstance,
    opts: TalosCallOptions,
  ): Promise<TalosMutation<PullResult>> {
    const req = { containerd, image_ref: imageRef };
    return this.#mutateStream(IMAGE_PULL, node, req, opts, undefined, (items) => {
      const last = items.find((i) => i.response === "name");
      return last ? { name: String(last.name) } : undefined;
    });
  }

  upgrade(
    node: string,
    imageRef: string,
    containerd: ContainerdInstance,
    opts: TalosCallOptions & { readonly onProgress?: (line: string) => void },
  ): Promise<TalosMutation<InstallResult>> {
    const splitter = new LineSplitter(opts.onProgress);
    let exitCode: number | undefined;
    const onItem = (item: Msg) => {
      const p = item.progress;
      if (p?.response === "message") splitter.push(String(p.message));
      else if (p?.response === "exit_code") exitCode = Number(p.exit_code);
    };
    const req = { containerd, source: { image_name: imageRef } };
    return this.#mutateStream(LIFECYCLE_UPGRADE, node, req, opts, onItem, () => {
      const lines = splitter.finish();
      if (exitCode === undefined) return undefined;
      return { exitCode, lines, completedTag: completedInstallTag(lines) };
    });
  }

  legacyUpgrade(
    node: string,
    imageRef: string,
    opts: TalosCallOptions,
  ): Promise<TalosMutation<LegacyUpgradeResult>> {
    const req = { image: imageRef, preserve: false, stage: false, force: false };
    return this.#mutateUnary(M + "Upgrade", node, req, opts, (m) => ({
      ack: String(m.ack ?? ""),
      actorId: String(m.actor_id ?? ""),
    }));
  }

  reboot(
    node: string,
    mode: RebootMode,
    opts: TalosCallOptions,
  ): Promise<TalosMutation<RebootResult>> {
    return this.#mutateUnary(M + "Reboot", node, { mode }, opts, (m) => ({
      actorId: String(m.actor_id ?? ""),
    }));
  }

  applyConfiguration(
    node: string,
    req: ApplyConfigurationRequest,
    opts: TalosCallOptions,
  ): Promise<TalosMutation<ApplyConfigurationResult>> {
    const body: Msg = { data: Buffer.from(req.data), mode: req.mode, dry_run: req.dryRun };
    if (req.tryModeTimeoutMs !== undefined) {
      const ms = req.tryModeTimeoutMs;
      body.try_mode_timeout = { seconds: String(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1e6 };
    }
    return this.#mutateUnary(M + "ApplyConfiguration", node, body, opts, (m) => ({
      mode: m.mode,
      modeDetails: String(m.mode_details ?? ""),
      warnings: m.warnings ?? [],
    }));
  }

  /** Closes the connection once its calls have finished; later calls open a new one. */
  close(): void {
    this.#retire();
  }
}

/** Re-splits installer output into lines (v1.13 sends chunks that split lines, v1.14 lines). */
class LineSplitter {
  #buf = "";
  readonly #lines: string[] = [];
  constructor(private readonly onLine?: (line: string) => void) {}

  push(text: string): void {
    this.#buf += text;
    let i: number;
    while ((i = this.#buf.indexOf("\n")) >= 0) {
      this.#emit(this.#buf.slice(0, i));
      this.#buf = this.#buf.slice(i + 1);
    }
  }

  finish(): string[] {
    if (this.#buf !== "") this.#emit(this.#buf);
    this.#buf = "";
    return this.#lines;
  }

  #emit(line: string): void {
    this.#lines.push(line);
    this.onLine?.(line);
  }
}
