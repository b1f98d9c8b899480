/**
 * Reads a talosconfig (protocols.md A1.1): the current or named context, its endpoints (port 50000
 * added when missing) and nodes, and the base64-of-PEM CA, client certificate and key. Talos
 * writes Ed25519 keys under the non-standard PEM label `ED25519 PRIVATE KEY`; the body is already
 * PKCS#8, so the label is rewritten to `PRIVATE KEY` for the TLS stack.
 */
import { yamlErrorSummary } from "../../domain/yaml_error_summary.ts";
import { readFile } from "node:fs/promises";
import { parse } from "yaml";
import { CairnError } from "../../domain/errors.ts";

export interface TalosContext {
  readonly name: string;
  /** `host:port` (IPv6 as `[addr]:port`). */
  readonly endpoints: readonly string[];
  readonly nodes: readonly string[];
  readonly caPem: string;
  readonly crtPem: string;
  /** Private key PEM with a label TLS stacks accept. */
  readonly keyPem: string;
  readonly cluster: string | undefined;
}

export const DEFAULT_APID_PORT = 50000;

/** Rewrites `ED25519 PRIVATE KEY` to `PRIVATE KEY`; other labels (RSA, EC, PKCS#8) pass through. */
export function normalizeKeyPem(pem: string): string {
  return pem.replace(/-----(BEGIN|END) ED25519 PRIVATE KEY-----/g, "-----$1 PRIVATE KEY-----");
}

/** Adds the default apid port to `host`, `ipv4` or `[ipv6]` endpoints without one. */
export function withDefaultPort(endpoint: string): string {
  if (/^\[.*\]:\d+$/.test(endpoint) || /^[^:]+:\d+$/.test(endpoint)) return endpoint;
  if (endpoint.includes(":") && !endpoint.startsWith("[")) {
    return `[${endpoint}]:${DEFAULT_APID_PORT}`;
  }
  return `${endpoint}:${DEFAULT_APID_PORT}`;
}

function invalid(file: string, message: string): CairnError {
  return new CairnError({
    reason: "TalosconfigInvalid",
    message,
    location: { file, line: 1, column: 1 },
  });
}

function pemField(ctx: Record<string, unknown>, key: string, file: string, name: string): string {
  const v = ctx[key];
  if (typeof v !== "string" || v === "") {
    throw invalid(file, `context ${name} has no ${key}`);
  }
  const pem = Buffer.from(v, "base64").toString("utf8");
  if (!pem.includes("-----BEGIN ")) {
    throw invalid(file, `context ${name}: ${key} is not base64 of a PEM block`);
  }
  return pem;
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
}

/** Parses talosconfig text; `contextName` defaults to the file's current `context`. */
export function parseTalosconfig(text: string, file: string, contextName?: string): TalosContext {
  let doc: unknown;
  try {
    // Warnings off: the parser prints a warning with the offending line to stderr.
    doc = parse(text, { logLevel: "error" });
  } catch (e) {
    throw invalid(file, `not valid YAML: ${yamlErrorSummary(e)}`);
  }
  if (typeof doc !== "object" || doc === null) throw invalid(file, "not a YAML mapping");
  const root = doc as Record<string, unknown>;
  const name = contextName ?? (typeof root["context"] === "string" ? root["context"] : "");
  const contexts = root["contexts"];
  const raw = typeof contexts === "object" && contexts !== null
    ? (contexts as Record<string, unknown>)[name]
    : undefined;
  if (typeof raw !== "object" || raw === null) {
    // Context names are not secrets: listing them fixes a typo in one go.
    const known = typeof contexts === "object" && contexts !== null
      ? Object.keys(contexts).join(", ")
      : "";
    throw invalid(file, `no context named '${name}' (contexts: ${known || "none"})`);
  }
  const ctx = raw as Record<string, unknown>;
  const endpoints = strings(ctx["endpoints"]);
  if (endpoints.length === 0 && typeof ctx["target"] === "string") endpoints.push(ctx["target"]);
  if (endpoints.length === 0) throw invalid(file, `context ${name} has no endpoints`);
  return {
    name,
    endpoints: endpoints.map(withDefaultPort),
    nodes: strings(ctx["nodes"]),
    caPem: pemField(ctx, "ca", file, name),
    crtPem: pemField(ctx, "crt", file, name),
    keyPem: normalizeKeyPem(pemField(ctx, "key", file, name)),
    cluster: typeof ctx["cluster"] === "string" ? ctx["cluster"] : undefined,
  };
}

/** Reads and parses a talosconfig file. */
export async function loadTalosconfig(path: string, contextName?: string): Promise<TalosContext> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (e) {
    throw invalid(path, `cannot read talosconfig: ${(e as Error).message}`);
  }
  return parseTalosconfig(text, path, contextName);
}
