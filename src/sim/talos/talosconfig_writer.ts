/**
 * Writes a talosconfig the way `talosctl gen config` does: contexts with endpoints and nodes, and
 * base64 of the PEM CA, client certificate and key. Ed25519 keys get the non-standard
 * `ED25519 PRIVATE KEY` PEM label real Talos uses, so clients must cope with it.
 */
import { stringify } from "yaml";

export interface TalosconfigContext {
  readonly name: string;
  readonly endpoints: readonly string[];
  readonly nodes: readonly string[];
  readonly caPem: string;
  readonly crtPem: string;
  readonly keyPem: string;
}

const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");

/** Relabels a PKCS#8 Ed25519 key with the label Talos writes. */
export function talosKeyLabel(keyPem: string): string {
  if (!keyPem.includes("-----BEGIN PRIVATE KEY-----")) return keyPem;
  return keyPem.replace("BEGIN PRIVATE KEY", "BEGIN ED25519 PRIVATE KEY").replace(
    "END PRIVATE KEY",
    "END ED25519 PRIVATE KEY",
  );
}

/** Renders the YAML text; the first context is the current one. */
export function renderTalosconfig(contexts: readonly TalosconfigContext[]): string {
  const out: Record<string, unknown> = {};
  for (const c of contexts) {
    out[c.name] = {
      endpoints: [...c.endpoints],
      nodes: [...c.nodes],
      ca: b64(c.caPem),
      crt: b64(c.crtPem),
      key: b64(talosKeyLabel(c.keyPem)),
    };
  }
  return stringify({ context: contexts[0]?.name ?? "", contexts: out });
}
