/**
 * Expected environment failures that are not cairn bugs, turned into a one-line problem instead
 * of an internal stack trace: a port someone else holds, a file that is missing or unreadable.
 */
import { CairnError, type Problem } from "../domain/errors.ts";

/** The problem for a known environment failure, or undefined for anything else (a bug). */
export function describeFailure(e: unknown): Problem | undefined {
  if (!(e instanceof Error)) return undefined;
  const code = (e as { code?: unknown }).code;
  if (e instanceof Deno.errors.AddrInUse || code === "EADDRINUSE") {
    const port = (e as { port?: unknown }).port ?? portIn(e.message);
    return {
      reason: "PortInUse",
      message: port !== undefined
        ? `port ${String(port)} is already in use; stop what holds it or choose another port`
        : `the listen address is already in use (${e.message})`,
    };
  }
  if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.PermissionDenied) {
    return { reason: "FileUnreadable", message: e.message };
  }
  return undefined;
}

function portIn(message: string): string | undefined {
  return /:(\d{1,5})\b/.exec(message)?.[1];
}

/** A listen failure on `host:port` as the user should read it; anything else unchanged. */
export function listenFailure(e: unknown, at: { host: string; port: number }): unknown {
  const known = describeFailure(e);
  if (known?.reason !== "PortInUse") return e;
  return new CairnError({
    reason: "PortInUse",
    message: `${at.host}:${at.port} is already in use; stop what holds it or set another ` +
      "listen port (listen.port, CAIRN_LISTEN_PORT, --listen-port)",
  }, { cause: e });
}
