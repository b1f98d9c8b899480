/**
 * The `Talos` port in process: every call goes straight to the twin's Talos model
 * (`../talos/model.ts`) on the shared SimClock and FaultSchedule, with no gRPC and no socket.
 * What the socket twin does in its apid handlers (admission by role, `node` routing, transport
 * faults, server streams that take virtual time) is done here in the same order, and every
 * answer is classified by the real adapter's own functions (`adapters/talos/errors.ts`), so the
 * executor sees the same outcome classes (ok / rejected / sent-no-response / transport-failure /
 * not-sent) and reasons as through `GrpcTalos`.
 *
 * Deadlines are virtual: a stream that is still open when its next model timer lies beyond the
 * call's `timeoutMs` ends with DEADLINE_EXCEEDED. Waiting for an answer that never comes costs no
 * virtual time (as on the socket twin, whose deadlines are real-time bounds).
 */
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
import { bootIdFrom, Code, mutationFailure, readError } from "../../adapters/talos/errors.ts";
import {
  completedInstallTag,
  COSI_GET,
  IMAGE_PULL,
  LIFECYCLE_UPGRADE,
  MACHINE_SERVICE as M,
  notSent,
  streamMutationOutcome,
} from "../../adapters/talos/mutation_outcome.ts";
import type { Fault, FaultSchedule } from "../faults.ts";
import { GRPC, type TalosCluster, type TalosNode, TalosSimError } from "../talos/model.ts";
import { cosiReadAllowed } from "../talos/machine_config.ts";
import { type MethodSpec, TALOS_METHODS, TalosStats } from "../talos/methods.ts";
import { StaleReads } from "../talos/stale_reads.ts";
import { REFUSALS, RESET_MESSAGE, routeToNode, takeTransportFault } from "../talos/transport.ts";
import type { VirtualTime } from "./time.ts";

export interface InprocTalosOptions {
  readonly cluster: TalosCluster;
  readonly time: VirtualTime;
  readonly faults: FaultSchedule;
  /** Roles of the caller (the client certificate's O= values); default admin. */
  readonly roles?: readonly string[];
  /** Attempts for a read that fails with UNAVAILABLE (GrpcTalos's default: 3). */
  readonly readAttempts?: number;
  /** Shared counters (the socket twin's `TalosStats`); default a fresh one. */
  readonly stats?: TalosStats;
  /**
   * Streams do not move time: whoever drives the clock does (the socket twin's manual-time mode,
   * for the Talos contract). A stream then ends by itself, on abort, or at its deadline taken as
   * real time, as a gRPC deadline over the socket twin is.
   */
  readonly manualTime?: boolean;
}

/** How one simulated call ended, before the client's classification. */
type Answer<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly code: number; readonly message: string };

/** The items a server stream delivered and how it ended. */
interface StreamEnd<I> {
  readonly items: I[];
  readonly code: number;
  readonly message: string;
}

/** A server stream's sink: writes after the end (or after the client left) are dropped. */
class Stream<I> {
  readonly items: I[] = [];
  code: number | undefined;
  message = "";
  #closed: (() => void) | undefined;
  /** Resolves when the stream ends or fails. */
  readonly closed = new Promise<void>((resolve) => (this.#closed = resolve));
  constructor(private readonly onItem?: (item: I) => void) {}
  get open(): boolean {
    return this.code === undefined;
  }
  write(item: I): void {
    if (!this.open) return;
    this.items.push(item);
    this.onItem?.(item);
  }
  end(): void {
    if (!this.open) return;
    this.code = Code.OK;
    this.#closed!();
  }
  fail(code: number, message: string): void {
    if (!this.open) return;
    this.code = code;
    this.message = message;
    this.#closed!();
  }
}

/** A stream that skips the messages `skip` names (stream-skips-events), its end unchanged. */
class Skipping<I> extends Stream<I> {
  #index = 0;
  constructor(private readonly client: Stream<I>, private readonly skip: (i: number) => boolean) {
    super();
  }
  override get open(): boolean {
    return this.client.open;
  }
  override write(item: I): void {
    if (!this.skip(this.#index++)) this.client.write(item);
  }
  override end(): void {
    this.client.end();
  }
  override fail(code: number, message: string): void {
    this.client.fail(code, message);
  }
}

/** A stream that passes the first item, then is cut (lose-response on a stream). */
class CutAfterFirst<I> extends Stream<I> {
  constructor(private readonly client: Stream<I>) {
    super();
  }
  override write(item: I): void {
    if (!this.client.open) return;
    this.client.write(item);
    this.client.fail(Code.UNAVAILABLE, RESET_MESSAGE);
  }
  override end(): void {}
  override fail(): void {}
}

type PullItem = { readonly layer?: string; readonly name?: string };
type InstallItem = { readonly message?: string; readonly exitCode?: number };

export class InprocTalos implements Talos {
  readonly stats: TalosStats;
  readonly #o: InprocTalosOptions;
  /** Every machine's earlier answers, for the reads a `stale-read` fault answers from them. */
  readonly #stale: StaleReads;

  constructor(o: InprocTalosOptions) {
    this.#o = o;
    this.stats = o.stats ?? new TalosStats();
    this.#stale = new StaleReads(o.faults, o.time.sim);
  }

  // ---- admission (what the apid handlers do before running a call) ------------------------

  /** Counts, authorizes and routes one call; takes a transport fault armed for it. */
  #admit(
    path: string,
    target: string,
    transportFaults = true,
  ): { node: TalosNode; fault: Fault | undefined } {
    const spec: MethodSpec = TALOS_METHODS[path]!;
    // Counted per machine reached, as the socket twin does.
    this.stats.record(path, this.#o.cluster.find(target)?.name ?? target, spec.mutating, target);
    const roles = this.#o.roles ?? ["os:admin"];
    if (!roles.some((r) => spec.roles.includes(r))) {
      this.stats.denied++;
      throw new TalosSimError(GRPC.PERMISSION_DENIED, "not authorized");
    }
    const node = routeToNode(this.#o.cluster, target);
    const fault = transportFaults
      ? takeTransportFault(this.#o.faults, spec, node, this.#o.time.sim)
      : undefined;
    return { node, fault };
  }

  /** Lets a delayed request land `delayMs` after the client gave up (lost if the node is away). */
  #land(fault: Fault, node: TalosNode, run: () => void): void {
    this.#o.time.sim.schedule(Number(fault.params?.["delayMs"] ?? 0), () => {
      try {
        node.assertReachable();
        run();
      } catch { /* a landing that fails is simply lost, as on a real node */ }
    });
  }

  /** A unary call as the server runs it and the client sees it. */
  #unary<T>(path: string, target: string, run: (n: TalosNode) => T): Answer<T> {
    try {
      const { node, fault } = this.#admit(path, target);
      const reset = fault?.params?.["mode"] === "reset";
      if (fault?.kind === "delay-landing") {
        this.#land(fault, node, () => void run(node));
        return reset ? unavailable() : noAnswer();
      }
      node.assertReachable();
      const value = run(node);
      if (fault?.kind === "lose-response") return reset ? unavailable() : noAnswer();
      return { ok: true, value };
    } catch (e) {
      return failure(e);
    }
  }

  /**
   * A server stream: the handler starts it, then time moves timer by timer while it stays open
   * (the socket twin's auto-advance), until it ends, its deadline passes or nothing is pending.
   */
  async #stream<I>(
    path: string,
    target: string,
    opts: TalosCallOptions,
    run: (n: TalosNode, out: Stream<I>) => void,
    onItem?: (item: I) => void,
  ): Promise<StreamEnd<I>> {
    const client = new Stream<I>(onItem);
    const time = this.#o.time;
    const deadline = time.sim.now() + opts.timeoutMs;
    try {
      const { node, fault } = this.#admit(path, target);
      if (fault?.kind === "delay-landing") {
        this.#land(fault, node, () => run(node, new Stream<I>()));
        // The client hears nothing until it gives up (or, `mode: reset`, is cut at once).
        const f = fault.params?.["mode"] === "reset" ? unavailable() : noAnswer();
        client.fail(f.code, f.message);
      } else {
        node.assertReachable();
        const skip = this.#stale.skipper(TALOS_METHODS[path]!.point, node.name);
        const out = skip ? new Skipping(client, skip) : client;
        // lose-response: the effect runs to completion; the client's stream is cut early.
        run(node, fault?.kind === "lose-response" ? new CutAfterFirst(out) : out);
      }
    } catch (e) {
      const f = failure(e) as { code: number; message: string };
      client.fail(f.code, f.message);
    }
    const end = this.#o.manualTime
      ? await waitPassively(client, opts)
      : await time.runWhile(() => client.open, deadline, opts.signal);
    if (end === "aborted") client.fail(Code.CANCELLED, "context canceled");
    else if (end !== "done") client.fail(Code.DEADLINE_EXCEEDED, "context deadline exceeded");
    return { items: client.items, code: client.code!, message: client.message };
  }

  /** A read: retried on UNAVAILABLE like GrpcTalos (fresh admission each time); throws CairnError. */
  async #read<T>(
    path: string,
    node: string,
    opts: TalosCallOptions,
    call: () => Answer<T> | Promise<Answer<T>>,
  ): Promise<T> {
    const attempts = opts.attempts ?? this.#o.readAttempts ?? 3;
    for (let attempt = 1;; attempt++) {
      if (opts.signal?.aborted) throw readError(Code.CANCELLED, "aborted", node, path);
      const r = await call();
      if (r.ok) return r.value;
      if (r.code !== Code.UNAVAILABLE || attempt >= attempts) {
        throw readError(r.code, r.message, node, path);
      }
    }
  }

  // ---- reads --------------------------------------------------------------------------------

  version(node: string, opts: TalosCallOptions): Promise<TalosVersion> {
    return this.#read(
      M + "Version",
      node,
      opts,
      () =>
        this.#unary(M + "Version", node, (n) =>
          this.#stale.answer("talos.Version", n.name, "", {
            tag: n.runningVersion,
            sha: "cairnsim",
            arch: n.arch,
            platform: n.platform,
          })),
    );
  }

  serviceList(node: string, opts: TalosCallOptions): Promise<readonly TalosService[]> {
    return this.#read(
      M + "ServiceList",
      node,
      opts,
      () =>
        this.#unary(M + "ServiceList", node, (n) =>
          this.#stale.answer(
            "talos.ServiceList",
            n.name,
            "",
            n.services.map((s) => ({
              id: s.id,
              state: s.state,
              healthy: s.healthy,
              healthUnknown: false,
              lastMessage: s.lastMessage,
            })),
          )),
    );
  }

  etcdMembers(node: string, opts: TalosCallOptions): Promise<readonly EtcdMember[]> {
    const path = M + "EtcdMemberList";
    return this.#read(path, node, opts, () =>
      this.#unary(path, node, (n) => {
        requireControlPlane(n, "EtcdMemberList");
        return this.#o.cluster.controlPlanes().map((cp) => ({
          id: cp.etcdMemberId,
          hostname: cp.name,
          peerUrls: [`https://${cp.address}:2380`],
          clientUrls: [`https://${cp.address}:2379`],
          isLearner: false,
        }));
      }));
  }

  etcdStatus(node: string, opts: TalosCallOptions): Promise<EtcdMemberStatus> {
    const path = M + "EtcdStatus";
    return this.#read(path, node, opts, () =>
      this.#unary(path, node, (n) => {
        requireControlPlane(n, "EtcdStatus");
        const index = String(Math.floor(this.#o.time.sim.now() / 100) % 1_000_000_000);
        return {
          memberId: n.etcdMemberId,
          leader: this.#o.cluster.etcdLeader()?.etcdMemberId ?? "0",
          raftIndex: index,
          raftTerm: "7",
          isLearner: false,
          errors: [],
          protocolVersion: "3.6.5",
          dbSize: "52428800",
        };
      }));
  }

  bootId(node: string, opts: TalosCallOptions): Promise<string> {
    const path = M + "Read";
    return this.#read(path, node, opts, async () => {
      const s = await this.#stream<string>(path, node, opts, (n, out) => {
        out.write(`${this.#stale.answer("talos.Read", n.name, BOOT_ID, n.bootId)}\n`);
        out.end();
      });
      return s.code === Code.OK
        ? { ok: true, value: bootIdFrom(s.items.join(""), node, path) }
        : { ok: false, code: s.code, message: s.message };
    });
  }

  /**
   * COSI `State.Get` for what the twin models (`TalosCluster.cosiGet`: cluster info, the
   * machine's SMBIOS system information); anything else is NOT_FOUND. Like the socket twin's
   * handler, it takes only the refusing transport faults (`unavailable`, `deadline-exceeded`).
   */
  resource(node: string, ref: CosiResourceRef, opts: TalosCallOptions): Promise<CosiResource> {
    return this.#read(COSI_GET, node, opts, () => {
      try {
        const spec = TALOS_METHODS[COSI_GET]!;
        const f = this.#o.faults.peekKind(
          REFUSALS,
          spec.point,
          this.#o.cluster.find(node)?.name,
        );
        const forType = f?.params?.["type"] === undefined || f.params["type"] === ref.type;
        const refusal = (f?.kind === "unavailable" || f?.kind === "deadline-exceeded") && forType;
        const { node: n } = this.#admit(COSI_GET, node, refusal);
        const { namespace, type, id } = ref;
        if (!cosiReadAllowed(type, this.#o.roles ?? ["os:admin"])) {
          this.stats.denied++;
          throw new TalosSimError(GRPC.PERMISSION_DENIED, "not authorized");
        }
        n.assertReachable();
        const fresh = this.#o.cluster.cosiGet(n, namespace, type, id);
        const r = this.#stale.answer(COSI_POINT, n.name, `${namespace}/${type}/${id}`, fresh, type);
        return { ok: true, value: { namespace, type, id, version: r.version, yamlSpec: r.yaml } };
      } catch (e) {
        return failure(e);
      }
    });
  }

  // ---- mutations (sent once, never retried; classified like GrpcTalos) -----------------------

  async pull(
    node: string,
    imageRef: string,
    containerd: ContainerdInstance,
    opts: TalosCallOptions,
  ): Promise<TalosMutation<PullResult>> {
    if (opts.signal?.aborted) return notSent(node, IMAGE_PULL);
    const sim = this.#o.time.sim;
    const s = await this.#stream<PullItem>(IMAGE_PULL, node, opts, (n, out) => {
      if (!imageRef) throw new TalosSimError(GRPC.INVALID_ARGUMENT, "image_ref is required");
      const { alreadyPresent, ms } = n.pull(imageRef, containerd);
      out.write({ layer: alreadyPresent ? "ALREADY_EXISTS" : "DOWNLOADING" });
      sim.schedule(ms, () => {
        n.finishPull(imageRef, containerd);
        out.write({ layer: "EXTRACT_COMPLETE" });
        out.write({ name: imageRef });
        out.end();
      });
    });
    const last = s.items.find((i) => i.name !== undefined);
    return streamMutationOutcome(s, last ? { name: last.name! } : undefined, node, IMAGE_PULL);
  }

  async upgrade(
    node: string,
    imageRef: string,
    containerd: ContainerdInstance,
    opts: TalosCallOptions & { readonly onProgress?: (line: string) => void },
  ): Promise<TalosMutation<InstallResult>> {
    if (opts.signal?.aborted) return notSent(node, LIFECYCLE_UPGRADE);
    // Lines as the client re-splits them (the model emits whole lines; no chunk framing here).
    const lines: string[] = [];
    const s = await this.#stream<InstallItem>(
      LIFECYCLE_UPGRADE,
      node,
      opts,
      (n, out) => {
        const { done } = n.startInstall(
          imageRef,
          containerd,
          (line) => out.write({ message: line }),
        );
        void done.then((exitCode) => {
          out.write({ exitCode });
          out.end();
        });
      },
      (item) => {
        if (item.message === undefined) return;
        lines.push(item.message);
        opts.onProgress?.(item.message);
      },
    );
    const exit = s.items.find((i) => i.exitCode !== undefined)?.exitCode;
    const completedTag = completedInstallTag(lines);
    return streamMutationOutcome(
      s,
      exit === undefined ? undefined : { exitCode: exit, lines, completedTag },
      node,
      LIFECYCLE_UPGRADE,
    );
  }

  legacyUpgrade(
    node: string,
    imageRef: string,
    opts: TalosCallOptions,
  ): Promise<TalosMutation<LegacyUpgradeResult>> {
    return Promise.resolve(this.#mutateUnary(M + "Upgrade", node, opts, (n) => ({
      ack: "Upgrade request received",
      actorId: n.legacyUpgrade(imageRef),
    })));
  }

  reboot(
    node: string,
    mode: RebootMode,
    opts: TalosCallOptions,
  ): Promise<TalosMutation<RebootResult>> {
    return Promise.resolve(
      this.#mutateUnary(M + "Reboot", node, opts, (n) => ({ actorId: n.reboot(mode) })),
    );
  }

  applyConfiguration(
    node: string,
    req: ApplyConfigurationRequest,
    opts: TalosCallOptions,
  ): Promise<TalosMutation<ApplyConfigurationResult>> {
    return Promise.resolve(this.#mutateUnary(M + "ApplyConfiguration", node, opts, (n) => {
      const out = n.applyConfiguration({
        data: new TextDecoder().decode(req.data),
        mode: req.mode,
        dryRun: req.dryRun,
        // The wire carries whole seconds (`try_mode_timeout.seconds`); the server reads only those.
        tryTimeoutMs: req.tryModeTimeoutMs !== undefined
          ? Math.floor(req.tryModeTimeoutMs / 1000) * 1000
          : 0,
      });
      return { mode: out.mode, modeDetails: out.modeDetails, warnings: out.warnings };
    }));
  }

  #mutateUnary<T>(
    path: string,
    node: string,
    opts: TalosCallOptions,
    run: (n: TalosNode) => T,
  ): TalosMutation<T> {
    if (opts.signal?.aborted) return notSent(node, path);
    const r = this.#unary(path, node, run);
    if (!r.ok) return mutationFailure(r.code, r.message, node, path, false);
    return { outcome: "ok", value: r.value };
  }

  close(): void {}
}

/** Waits for a stream that someone else's clock moves; the deadline is real time here. */
async function waitPassively(
  client: { readonly closed: Promise<void> },
  opts: TalosCallOptions,
): Promise<"done" | "deadline" | "aborted"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  try {
    return await Promise.race([
      client.closed.then(() => "done" as const),
      new Promise<"deadline">((r) => (timer = setTimeout(() => r("deadline"), opts.timeoutMs))),
      new Promise<"aborted">((r) => {
        onAbort = () => r("aborted");
        if (opts.signal?.aborted) onAbort();
        else opts.signal?.addEventListener("abort", onAbort, { once: true });
      }),
    ]);
  } finally {
    clearTimeout(timer);
    if (onAbort) opts.signal?.removeEventListener("abort", onAbort);
  }
}

/** The one file the port's boot-id read opens. */
const BOOT_ID = "/proc/sys/kernel/random/boot_id";
const COSI_POINT = TALOS_METHODS[COSI_GET]!.point;

function failure(e: unknown): { ok: false; code: number; message: string } {
  if (e instanceof TalosSimError) return { ok: false, code: e.code, message: e.message };
  return { ok: false, code: Code.INTERNAL, message: e instanceof Error ? e.message : String(e) };
}

/** The client waited out its deadline: no answer came (lost response, late landing). */
function noAnswer(): { ok: false; code: number; message: string } {
  return { ok: false, code: Code.DEADLINE_EXCEEDED, message: "Deadline exceeded" };
}

function unavailable(): { ok: false; code: number; message: string } {
  return { ok: false, code: Code.UNAVAILABLE, message: RESET_MESSAGE };
}

function requireControlPlane(n: TalosNode, method: string): void {
  if (n.role !== "controlplane") {
    throw new TalosSimError(
      GRPC.UNIMPLEMENTED,
      `${method} is only available on control plane nodes`,
    );
  }
}
