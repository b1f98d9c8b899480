/**
 * The operations endpoint: `/metrics`, `/healthz`, `/readyz` and `POST /hooks/git`, over
 * `Deno.serve`, on loopback unless configured otherwise. The hook only nudges the reconciler to
 * fetch sooner; it carries no authority (plans are still verified from Git), so a forged hook
 * costs a fetch at most. When a secret is configured it is still checked, in constant time.
 */
import { CairnError } from "../../domain/errors.ts";

/** Anything that renders Prometheus text (the metrics registry). */
export interface MetricsSource {
  render(): string;
}

/** Readiness as the reconciler sees it. */
export interface Readiness {
  readonly ready: boolean;
  readonly why?: string;
  /** With several replicas: `leader` or `standby` (a standby is ready: it serves previews). */
  readonly role?: string;
  /** The Lease holder as this replica last saw it. */
  readonly leader?: string;
}

/** A received Git hook (the body is not trusted and not interpreted here). */
export interface GitHook {
  readonly body: Uint8Array;
  /** `X-GitHub-Event` / `X-Gitea-Event` / `X-Gitlab-Event` when present. */
  readonly event: string | null;
}

/** Options of {@link startOpsServer}. */
export interface OpsServerOptions {
  /** Default `127.0.0.1`: the endpoints are unauthenticated apart from the hook. */
  readonly host?: string;
  /** `0` picks a free port. */
  readonly port: number;
  readonly metrics: MetricsSource;
  readonly readiness: () => Readiness;
  /** Without it, `/hooks/git` answers 404. With it, `hookSecret` is required. */
  readonly onGitHook?: (hook: GitHook) => void;
  /**
   * Shared secret: GitHub-style `X-Hub-Signature-256: sha256=<hex HMAC of the raw body>` or
   * `X-Cairn-Token: <secret>`. Required (non-empty) whenever `onGitHook` is given: a request
   * without it is answered 401 and never reaches the handler.
   */
  readonly hookSecret?: string;
  /** Largest accepted hook body (default 1 MiB). */
  readonly maxHookBytes?: number;
}

/** A running ops server. */
export interface OpsServer {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/** Content type of `/metrics`. */
const METRICS_TYPE = "text/plain; version=0.0.4; charset=utf-8";
const DEFAULT_MAX_HOOK_BYTES = 1024 * 1024;

function json(status: number, value: unknown): Response {
  return new Response(JSON.stringify(value) + "\n", {
    status,
    headers: { "content-type": "application/json" },
  });
}

const TOO_LARGE = Symbol("too large");

/** Reads at most `limit` bytes; stops reading (and cancels the stream) beyond it. */
async function readLimited(req: Request, limit: number): Promise<Uint8Array | typeof TOO_LARGE> {
  const declared = Number(req.headers.get("content-length") ?? "0");
  if (declared > limit) return TOO_LARGE;
  if (!req.body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = req.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > limit) {
      await reader.cancel().catch(() => {});
      return TOO_LARGE;
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/** Compares two byte strings in time that depends only on their lengths' maximum. */
function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  let diff = a.length ^ b.length;
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) diff |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return diff === 0;
}

async function hmacHex(secret: string, body: Uint8Array): Promise<string> {
  const enc = new TextEncoder();
  const key = await crypto.subtle.importKey(
    "raw",
    enc.encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, body.slice()));
  return Array.from(mac, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** True when the hook carries the shared secret or a valid HMAC of the body. */
export async function hookAuthorised(
  headers: Headers,
  body: Uint8Array,
  secret: string,
): Promise<boolean> {
  const enc = new TextEncoder();
  const token = headers.get("x-cairn-token");
  if (token !== null && constantTimeEqual(enc.encode(token), enc.encode(secret))) return true;
  const sig = headers.get("x-hub-signature-256");
  if (sig === null) return false;
  const want = `sha256=${await hmacHex(secret, body)}`;
  return constantTimeEqual(enc.encode(sig.toLowerCase()), enc.encode(want));
}

async function handleHook(req: Request, opts: OpsServerOptions): Promise<Response> {
  const body = await readLimited(req, opts.maxHookBytes ?? DEFAULT_MAX_HOOK_BYTES);
  if (body === TOO_LARGE) return json(413, { error: "hook body too large" });
  if (!opts.hookSecret || !(await hookAuthorised(req.headers, body, opts.hookSecret))) {
    return json(401, { error: "hook token or signature missing or wrong" });
  }
  const event = req.headers.get("x-github-event") ?? req.headers.get("x-gitea-event") ??
    req.headers.get("x-gitlab-event");
  try {
    opts.onGitHook!({ body, event });
  } catch {
    return json(500, { error: "hook handler failed" });
  }
  return json(202, { accepted: true });
}

function readiness(opts: OpsServerOptions): Response {
  let r: Readiness;
  try {
    r = opts.readiness();
  } catch {
    r = { ready: false, why: "readiness check failed" };
  }
  const part = {
    ...(r.role !== undefined ? { role: r.role } : {}),
    ...(r.leader !== undefined ? { leader: r.leader } : {}),
  };
  return r.ready
    ? json(200, { ready: true, ...part })
    : json(503, { ready: false, why: r.why ?? "not ready", ...part });
}

const ROUTES: Record<string, string> = {
  "/metrics": "GET",
  "/healthz": "GET",
  "/readyz": "GET",
  "/hooks/git": "POST",
};

/** Routes one request. Exported for tests that do not need a socket. */
export async function handleOpsRequest(req: Request, opts: OpsServerOptions): Promise<Response> {
  const path = new URL(req.url).pathname;
  const method = ROUTES[path];
  if (!method || (path === "/hooks/git" && !opts.onGitHook)) {
    return json(404, { error: "not found" });
  }
  if (req.method !== method && !(method === "GET" && req.method === "HEAD")) {
    return new Response(null, { status: 405, headers: { allow: method } });
  }
  switch (path) {
    case "/metrics":
      return new Response(opts.metrics.render(), { headers: { "content-type": METRICS_TYPE } });
    case "/healthz":
      return json(200, { ok: true });
    case "/readyz":
      return readiness(opts);
    default:
      return await handleHook(req, opts);
  }
}

/** Starts the ops server; resolves once it is listening. */
export function startOpsServer(opts: OpsServerOptions): Promise<OpsServer> {
  if (opts.onGitHook && !opts.hookSecret) {
    // An unauthenticated hook would let anyone on the network drive the loop's fetches.
    return Promise.reject(
      new CairnError({
        reason: "ConfigInvalid",
        message: "the git hook needs a non-empty secret (hookSecretPath); refusing to start",
      }),
    );
  }
  const hostname = opts.host ?? "127.0.0.1";
  return new Promise((resolve) => {
    const server = Deno.serve({
      hostname,
      port: opts.port,
      // A failing route answers 500 without printing the error (it could quote a secret).
      onError: () => json(500, { error: "internal error" }),
      onListen: (addr) => {
        const host = addr.hostname.includes(":") ? `[${addr.hostname}]` : addr.hostname;
        resolve({
          url: `http://${host}:${addr.port}`,
          port: addr.port,
          close: () => server.shutdown(),
        });
      },
    }, (req) => handleOpsRequest(req, opts));
  });
}
