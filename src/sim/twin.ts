/**
 * The twin: one virtual clock, one fault schedule, the Talos apid simulator and (when wired in)
 * the Kubernetes API simulator, built from a cluster description. It writes a talosconfig (and a
 * kubeconfig when the Kubernetes side runs) into a state directory and serves a small JSON
 * control endpoint on loopback so that tests and `cairn rehearse` in another process can move
 * virtual time, arm faults and read call counts.
 *
 * Meant to run under Node (see twin_main.ts and app/twin_process.ts), never as a Deno http2 server.
 *
 * Control endpoint (JSON over plain HTTP on 127.0.0.1; `TwinControl` in twin_control.ts wraps it):
 *   GET  /health                      {ok}
 *   GET  /state                       {nowMs, pendingTimers, nodes: [Talos node snapshot]}
 *   GET  /now                         {nowMs} (the clock alone, read after every port call)
 *   POST /advance {ms} | {toMs}       moves virtual time, firing due timers → {nowMs}
 *   POST /run-until-idle {limitMs?}   fires timers until none is left → {nowMs, pendingTimers}
 *   POST /faults  Fault               arms a fault (kind, point, target?, count?, params?)
 *   GET  /faults                      {remaining, fired}
 *   GET  /stats                       {talos: {totalCalls, totalMutating, denied, connections,
 *                                      calls, mutating, byNode}, kube: KubeSimStats | null,
 *                                      registry: {requests, manifests, blobs, notFound,
 *                                      refusedWrites}}
 *   POST /gitops/merge {commit, ociTags}  Flux delivers a merge (sim/kube/gitops.ts) → {ok}
 *   POST /stats/reset
 *   GET  /nodes/NAME                  Talos node snapshot
 *   POST /nodes/NAME {facts}          sets rebootSeconds, installSeconds, pullSeconds,
 *                                      kubeletVersion, runningVersion, services{id:{healthy,state}}
 *   POST /talos/wait-calls {method, atLeast}   resolves once the Talos sim got that many calls
 *   POST /talos/close-connections {graceMs?}   GOAWAY on every Talos connection
 *   POST /kube/disconnect-watches     cuts every open Kubernetes watch
 *   POST /shutdown                    stops the twin (the process then exits)
 *
 * Talos fault points: transport kinds (lose-response, delay-landing, unavailable,
 * deadline-exceeded; `params.mode: "reset"` makes the first two answer UNAVAILABLE at once
 * instead of leaving the client to its deadline) at `talos.Version`, `talos.ServiceList`,
 * `talos.EtcdMemberList`, `talos.EtcdStatus`, `talos.Read`, `talos.Reboot`, `talos.Upgrade`,
 * `talos.ApplyConfiguration`, `talos.ImageService.Pull`, `talos.LifecycleService.Upgrade`;
 * machine kinds at `talos.install` (install-invalid, install-fails {exitCode}, install-lock-held
 * {durationMs}), `talos.boot` (no-return-from-reboot, boots-old-version) and `talos.service`
 * (service-unhealthy {service, durationMs}); the machine kinds are also honoured when armed at
 * `talos.LifecycleService.Upgrade` / `talos.Reboot`. Identity kinds take effect when armed:
 * `talos.route` (address-reused {by}: the target's address answers from machine `by`) and
 * `talos.machine` (machine-reimaged: a replacement with the same name and address). COSI reads
 * take unavailable / deadline-exceeded at `talos.cosi.Get` ({type} limits them to one resource
 * type).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { keepIdleConnections } from "./idle_connections.ts";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { SimClock } from "./clock.ts";
import type { ClusterDescription } from "./cluster_description.ts";
import { type Fault, FAULT_KINDS, FaultSchedule } from "./faults.ts";
import { type CertPair, mintPki, type Pki } from "./pki.ts";
import { type KubeletReport, type NodeStatusSink, TalosCluster } from "./talos/model.ts";
import type { StaticPodReport } from "./talos/k8s_components.ts";
import type { Merge } from "./kube/gitops.ts";
import { startTalosSim, type TalosSimServer } from "./talos/server.ts";
import { renderTalosconfig } from "./talos/talosconfig_writer.ts";
import {
  buildInstallerContent,
  pinnedReferences,
  registryHolds,
} from "./registry/installer_images.ts";
import { type RegistrySim, startRegistrySim } from "./registry/server.ts";

/** What the twin needs from the Kubernetes simulator. */
export interface TwinKube extends NodeStatusSink {
  /** HTTPS URL of the API server. */
  readonly url: string;
  readonly kubeconfigPath: string;
  stats(): unknown;
  resetStats?(): void;
  disconnectWatches?(): void;
  /** Sets nodeInfo facts without touching readiness (start-up sync). */
  nodeInfo(name: string, info: KubeletReport): void;
  /** Flux delivers a merge on the watched branch (`sim/kube/gitops.ts`), on the twin's clock. */
  gitopsMerge?(m: Merge): void;
  stop(): Promise<void>;
}

/** Starts the Kubernetes side; supplied by twin_main.ts once the simulator is wired in. */
export type KubeStarter = (args: {
  clock: SimClock;
  faults: FaultSchedule;
  description: ClusterDescription;
  stateDir: string;
  pkiCacheDir: string | undefined;
}) => Promise<TwinKube>;

export interface TwinOptions {
  readonly description: ClusterDescription;
  readonly stateDir: string;
  /** Directory of cairn's `proto/`. */
  readonly protoDir: string;
  readonly seed?: number;
  readonly talosPort?: number;
  readonly controlPort?: number;
  readonly startKube?: KubeStarter;
  /** Directory caching the minted PKI across twins (tests); default: mint into stateDir. */
  readonly pkiCacheDir?: string;
  /**
   * Move virtual time while a client waits on a server stream (default true). Tests that drive
   * time themselves (e.g. an install lock held after a disconnect) turn it off.
   */
  readonly autoAdvance?: boolean;
  /**
   * Run virtual time with the real clock (a practice cluster): the clock starts at the real now
   * and moves `speed` virtual ms per real ms whether or not any client is connected, so evicted
   * pods terminate and timestamps read right to kubectl. Replaces the stream auto-advance (which
   * would jump the clock ahead of the real one). Default: off (time moves only when driven).
   */
  readonly wallClock?: { readonly speed: number };
}

export interface Twin {
  readonly clock: SimClock;
  readonly faults: FaultSchedule;
  readonly cluster: TalosCluster;
  readonly talos: TalosSimServer;
  readonly kube: TwinKube | undefined;
  readonly registry: RegistrySim;
  readonly controlUrl: string;
  readonly talosconfigPath: string;
  readonly kubeconfigPath: string | undefined;
  /** The facts a client process needs (written to `<stateDir>/twin.json`). */
  readonly info: TwinInfo;
  stop(): Promise<void>;
}

/** Written to `<stateDir>/twin.json` and printed by the twin process when it is ready. */
export interface TwinInfo {
  readonly cluster: string;
  readonly talosEndpoint: string;
  readonly talosconfigPath: string;
  readonly kubeconfigPath: string | null;
  readonly kubeUrl: string | null;
  readonly controlUrl: string;
  readonly nodes: readonly string[];
  /**
   * The OCI registry serving the description's installer images (plain HTTP on loopback):
   * resolve `factory.talos.dev/...` references by sending them to `mirrors[host]` instead.
   */
  readonly registry: TwinRegistryInfo;
}

/** Where the twin's registry is and which registry hosts it stands in for. */
export interface TwinRegistryInfo {
  readonly url: string;
  /** Registry host (as written in image references) → base URL to use instead. */
  readonly mirrors: Readonly<Record<string, string>>;
  /** `host/repository:tag@sha256:…` of every image served. */
  readonly images: readonly string[];
}

/** Mints the Talos-like PKI: Ed25519 CA, a server cert for loopback, admin/operator/reader clients. */
export function mintTalosPki(dir: string): Pki {
  return mintPki({
    dir,
    caName: "talos",
    algorithm: "ed25519",
    serverSans: ["localhost", "127.0.0.1"],
    clients: { admin: ["os:admin"], operator: ["os:operator"], reader: ["os:reader"] },
  });
}

function readPair(dir: string, name: string): CertPair {
  const certPath = join(dir, `${name}.crt`), keyPath = join(dir, `${name}.key`);
  return {
    certPath,
    keyPath,
    certPem: readFileSync(certPath, "utf8"),
    keyPem: readFileSync(keyPath, "utf8"),
  };
}

/**
 * Reuses the PKI minted earlier into `dir` (throwaway test keys; minting costs ~20 openssl
 * runs), or mints it there. Concurrent twins may race: each mints into a private directory and
 * the first rename wins.
 */
export function cachedPki(
  dir: string,
  clients: readonly string[],
  mint: (dir: string) => Pki,
): Pki {
  if (!existsSync(join(dir, "complete"))) {
    const tmp = `${dir}.tmp-${process.pid}-${Date.now()}`;
    mint(tmp);
    writeFileSync(join(tmp, "complete"), "");
    try {
      renameSync(tmp, dir);
    } catch {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  const pairs = Object.fromEntries(clients.map((c) => [c, readPair(dir, `client-${c}`)]));
  return { ca: readPair(dir, "ca"), server: readPair(dir, "server"), clients: pairs };
}

/** Builds and starts the twin. */
export async function startTwin(opts: TwinOptions): Promise<Twin> {
  const desc = opts.description;
  mkdirSync(opts.stateDir, { recursive: true });
  // On wall-clock time the twin starts at the real now, so no timestamp it writes lies in the
  // future of the clients reading it (kubectl prints such an AGE as <invalid>).
  const clock = new SimClock(opts.wallClock ? Date.now() : Date.parse(desc.spec.startTime));
  const faults = new FaultSchedule();
  const sink = new ForwardingSink();
  const installers = buildInstallerContent(desc.spec.installerImages);
  const cluster = new TalosCluster(desc, {
    clock,
    faults,
    sink,
    seed: opts.seed ?? 1,
    registryHas: (ref) => registryHolds(installers, ref),
  });
  const pki = opts.pkiCacheDir
    ? cachedPki(join(opts.pkiCacheDir, "talos"), ["admin", "operator", "reader"], mintTalosPki)
    : mintTalosPki(join(opts.stateDir, "talos-pki"));
  const talos = await startTalosSim({
    cluster,
    clock,
    faults,
    protoDir: opts.protoDir,
    tls: { caPem: pki.ca.certPem, certPem: pki.server.certPem, keyPem: pki.server.keyPem },
    ...(opts.talosPort === undefined ? {} : { port: opts.talosPort }),
  });
  const kube = opts.startKube
    ? await opts.startKube({
      clock,
      faults,
      description: desc,
      stateDir: opts.stateDir,
      pkiCacheDir: opts.pkiCacheDir,
    })
    : undefined;
  sink.target = kube;
  const registry = await startRegistrySim(installers);
  // The kubelet reports what the machine booted: start both sides from the same facts.
  for (const n of cluster.nodes.values()) {
    kube?.nodeInfo(n.name, n.kubeletReport());
  }
  cluster.reportStaticPods();
  const talosconfigPath = join(opts.stateDir, "talosconfig");
  writeTalosconfigFor(talosconfigPath, desc.metadata.name, talos.endpoint, cluster, pki);
  const parts = { clock, faults, cluster, talos, kube, registry };
  const { server, url } = await startControl(
    parts,
    opts.controlPort ?? 0,
    () => stop(),
    opts.wallClock ? { wallClock: opts.wallClock.speed } : { streams: opts.autoAdvance ?? true },
  );
  const info: TwinInfo = {
    cluster: desc.metadata.name,
    talosEndpoint: talos.endpoint,
    talosconfigPath,
    kubeconfigPath: kube?.kubeconfigPath ?? null,
    kubeUrl: kube?.url ?? null,
    controlUrl: url,
    nodes: [...cluster.nodes.keys()],
    registry: {
      url: registry.url,
      mirrors: registry.mirrors,
      images: pinnedReferences(installers),
    },
  };
  writeFileSync(join(opts.stateDir, "twin.json"), JSON.stringify(info, null, 2) + "\n");
  let stopped: Promise<void> | undefined;
  const stop = () =>
    stopped ??= (async () => {
      server.closeAllConnections();
      server.close();
      await talos.stop();
      await kube?.stop();
      await registry.stop();
    })();
  return {
    ...parts,
    controlUrl: url,
    talosconfigPath,
    kubeconfigPath: kube?.kubeconfigPath,
    info,
    stop,
  };
}

/** Passes node up/down news to the Kubernetes side once it exists. */
class ForwardingSink implements NodeStatusSink {
  target: NodeStatusSink | undefined;
  nodeDown(name: string): void {
    this.target?.nodeDown(name);
  }
  nodeUp(name: string, info: KubeletReport): void {
    this.target?.nodeUp(name, info);
  }
  staticPods(name: string, pods: readonly StaticPodReport[]): void {
    this.target?.staticPods?.(name, pods);
  }
}

function writeTalosconfigFor(
  path: string,
  name: string,
  endpoint: string,
  cluster: TalosCluster,
  pki: Pki,
): void {
  // As in a real talosconfig, the default targets are the machines' addresses.
  const nodes = [...cluster.nodes.values()].map((n) => n.address);
  const ctx = (suffix: string, client: string) => ({
    name: `${name}${suffix}`,
    endpoints: [endpoint],
    nodes,
    caPem: pki.ca.certPem,
    crtPem: pki.clients[client]!.certPem,
    keyPem: pki.clients[client]!.keyPem,
  });
  writeFileSync(
    path,
    renderTalosconfig([ctx("", "admin"), ctx("-operator", "operator"), ctx("-reader", "reader")]),
    { mode: 0o600 },
  );
}

interface ControlParts {
  readonly clock: SimClock;
  readonly faults: FaultSchedule;
  readonly cluster: TalosCluster;
  readonly talos: TalosSimServer;
  readonly kube: TwinKube | undefined;
  readonly registry: RegistrySim;
}

class HttpError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString("utf8").trim();
  if (!text) return {};
  try {
    const v = JSON.parse(text);
    if (typeof v !== "object" || v === null || Array.isArray(v)) throw new Error("not an object");
    return v as Record<string, unknown>;
  } catch (e) {
    throw new HttpError(400, `body is not a JSON object: ${(e as Error).message}`);
  }
}

function startControl(
  parts: ControlParts,
  port: number,
  shutdown: () => Promise<void>,
  time: { readonly streams: boolean } | { readonly wallClock: number },
): Promise<{ server: Server; url: string }> {
  // Time moves in one place at a time: overlapping advance requests run in arrival order.
  let timeChain: Promise<unknown> = Promise.resolve();
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const p = timeChain.then(fn);
    timeChain = p.catch(() => undefined);
    return p;
  };
  // A client blocked on a server stream (pull, install) waits on work that takes virtual time;
  // nobody else will move the clock for it, so the twin does, one timer at a time, in order.
  let advancing = false;
  const autoAdvance = "wallClock" in time
    ? followWallClock(parts.clock, time.wallClock, serial)
    : setInterval(() => {
      const next = parts.clock.nextTimerAt();
      if (!time.streams || advancing || parts.talos.openStreams() === 0) return;
      if (next === undefined) return;
      advancing = true;
      void serial(() => parts.clock.advanceTo(next)).finally(() => (advancing = false));
    }, 2);
  const server = keepIdleConnections(createServer((req, res) => {
    void handleControl(parts, req, serial, shutdown).then(
      (body) => reply(res, 200, body),
      (e) => reply(res, e instanceof HttpError ? e.status : 500, { error: String(e.message ?? e) }),
    );
  }));
  server.on("close", () => clearInterval(autoAdvance));
  return new Promise((resolve) =>
    server.listen(port, "127.0.0.1", () => {
      const addr = server.address();
      const p = typeof addr === "object" && addr ? addr.port : port;
      resolve({ server, url: `http://127.0.0.1:${p}` });
    })
  );
}

/**
 * Moves the virtual clock along with the real one, `speed` virtual ms per real ms, firing due
 * timers on the way (through `serial`, so a control-endpoint advance never interleaves). The
 * control endpoint may still push time further ahead; the clock then waits for the real one.
 */
function followWallClock(
  clock: SimClock,
  speed: number,
  serial: <T>(fn: () => Promise<T>) => Promise<T>,
): ReturnType<typeof setInterval> {
  const realStart = Date.now(), virtualStart = clock.now();
  let moving = false;
  return setInterval(() => {
    if (moving) return;
    moving = true;
    const target = virtualStart + (Date.now() - realStart) * speed;
    void serial(() => clock.advanceTo(target)).finally(() => (moving = false));
  }, 50);
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

async function handleControl(
  p: ControlParts,
  req: IncomingMessage,
  serial: <T>(fn: () => Promise<T>) => Promise<T>,
  shutdown: () => Promise<void>,
): Promise<unknown> {
  const url = new URL(req.url ?? "/", "http://control");
  const route = `${req.method} ${url.pathname}`;
  const body = req.method === "POST" ? await readJson(req) : {};
  const nodeMatch = /^\/nodes\/([^/]+)$/.exec(url.pathname);
  if (nodeMatch) return nodeRoute(p, req.method ?? "GET", decodeURIComponent(nodeMatch[1]!), body);
  switch (route) {
    case "GET /health":
      return { ok: true };
    case "GET /state":
      return { nowMs: p.clock.now(), pendingTimers: p.clock.pending, nodes: snapshots(p) };
    case "GET /now":
      return { nowMs: p.clock.now() };
    case "POST /advance":
      return serial(async () => {
        if (typeof body["toMs"] === "number") await p.clock.advanceTo(body["toMs"]);
        else await p.clock.advance(num(body, "ms"));
        return { nowMs: p.clock.now() };
      });
    case "POST /run-until-idle":
      return serial(async () => {
        const limit = typeof body["limitMs"] === "number" ? body["limitMs"] : undefined;
        await p.clock.runUntilIdle(limit);
        return { nowMs: p.clock.now(), pendingTimers: p.clock.pending };
      });
    case "POST /faults":
      p.faults.arm(parseFault(body));
      return { armed: p.faults.remaining().length };
    case "GET /faults":
      return { remaining: p.faults.remaining(), fired: p.faults.fired };
    case "GET /stats":
      return {
        talos: p.talos.stats.toJSON(),
        kube: p.kube?.stats() ?? null,
        registry: { ...p.registry.stats },
      };
    case "POST /stats/reset":
      p.talos.stats.reset();
      p.kube?.resetStats?.();
      Object.assign(p.registry.stats, {
        requests: 0,
        manifests: 0,
        blobs: 0,
        notFound: 0,
        refusedWrites: 0,
      });
      return { ok: true };
    case "POST /talos/close-connections":
      return {
        closed: p.talos.closeConnections(
          typeof body["graceMs"] === "number" ? body["graceMs"] : 2000,
        ),
      };
    case "POST /talos/wait-calls": {
      const method = String(body["method"] ?? "");
      await p.talos.stats.waitForCalls(method, num(body, "atLeast"));
      return { calls: p.talos.stats.calls[method] ?? 0 };
    }
    case "POST /gitops/merge": {
      // Flux delivers a merge: the revision, then the moved charts, releases and renders.
      const commit = body["commit"], tags = body["ociTags"] ?? {};
      if (typeof commit !== "string" || !/^[0-9a-f]{40}$/.test(commit)) {
        throw new HttpError(400, "commit must be a 40-hex commit id");
      }
      if (
        typeof tags !== "object" || tags === null ||
        Object.entries(tags).some(([k, v]) =>
          !/^[a-z0-9-]+\/[a-z0-9.-]+$/.test(k) || typeof v !== "string"
        )
      ) {
        throw new HttpError(400, "ociTags must map namespace/name to a tag");
      }
      if (!p.kube?.gitopsMerge) throw new HttpError(404, "this twin has no GitOps model");
      p.kube.gitopsMerge({ commit, ociTags: tags as Record<string, string> });
      return { ok: true };
    }
    case "POST /kube/disconnect-watches":
      p.kube?.disconnectWatches?.();
      return { ok: p.kube !== undefined };
    case "POST /shutdown":
      setImmediate(() => void shutdown());
      return { ok: true };
  }
  throw new HttpError(404, `no route ${route}`);
}

function num(body: Record<string, unknown>, key: string): number {
  const v = body[key];
  if (typeof v !== "number" || !Number.isFinite(v) || v < 0) {
    throw new HttpError(400, `${key} must be a non-negative number`);
  }
  return v;
}

function snapshots(p: ControlParts): Record<string, unknown>[] {
  return [...p.cluster.nodes.values()].map((n) => n.snapshot());
}

function parseFault(body: Record<string, unknown>): Fault {
  const kind = body["kind"];
  if (typeof kind !== "string" || !(FAULT_KINDS as readonly string[]).includes(kind)) {
    throw new HttpError(400, `kind must be one of ${FAULT_KINDS.join(", ")}`);
  }
  if (typeof body["point"] !== "string") throw new HttpError(400, "point must be a string");
  return body as unknown as Fault;
}

/** GET or POST (set facts) one node. */
function nodeRoute(
  p: ControlParts,
  method: string,
  name: string,
  body: Record<string, unknown>,
): unknown {
  const node = p.cluster.nodes.get(name);
  if (!node) throw new HttpError(404, `no node ${name}`);
  if (method === "POST") {
    for (const key of ["rebootSeconds", "installSeconds", "pullSeconds"] as const) {
      if (typeof body[key] === "number") node[key] = body[key];
    }
    if (typeof body["kubeletVersion"] === "string") node.kubeletVersion = body["kubeletVersion"];
    if (typeof body["runningVersion"] === "string") node.runningVersion = body["runningVersion"];
    const services = body["services"];
    if (services && typeof services === "object") {
      for (const [id, v] of Object.entries(services as Record<string, Record<string, unknown>>)) {
        const svc = node.services.find((s) => s.id === id);
        if (!svc) throw new HttpError(400, `no service ${id} on ${name}`);
        if (typeof v["healthy"] === "boolean") svc.healthy = v["healthy"];
        if (typeof v["state"] === "string") svc.state = v["state"];
        if (typeof v["lastMessage"] === "string") svc.lastMessage = v["lastMessage"];
      }
    }
  }
  return node.snapshot();
}
