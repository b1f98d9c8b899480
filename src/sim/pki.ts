/**
 * Test PKI for the twin, minted with the `openssl` CLI (present on every machine we run on;
 * Node/Deno cannot create X.509 certificates natively). Works under Deno and under Node, since it
 * uses only node: modules. Keys are throwaway: they live in a directory the caller owns.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** PEM material for one certificate. */
export interface CertPair {
  readonly certPem: string;
  readonly keyPem: string;
  readonly certPath: string;
  readonly keyPath: string;
}

/** A CA with the certificates it issued. */
export interface Pki {
  readonly ca: CertPair;
  readonly server: CertPair;
  readonly clients: Readonly<Record<string, CertPair>>;
}

/** Key algorithm: Talos defaults to Ed25519; Kubernetes clusters commonly use ECDSA P-256. */
export type KeyAlgorithm = "ed25519" | "p256";

export interface MintOptions {
  readonly dir: string;
  readonly caName: string;
  readonly algorithm: KeyAlgorithm;
  /** DNS names and IPs of the server certificate. */
  readonly serverSans?: readonly string[];
  /** Client certificates to issue: name → subject organisations (roles / groups). */
  readonly clients?: Readonly<Record<string, readonly string[]>>;
  readonly days?: number;
}

function openssl(args: string[], input?: string): void {
  execFileSync("openssl", args, { stdio: ["pipe", "ignore", "pipe"], input: input ?? "" });
}

function newKey(path: string, algorithm: KeyAlgorithm): void {
  if (algorithm === "ed25519") openssl(["genpkey", "-algorithm", "ed25519", "-out", path]);
  else {
    openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", path]);
  }
}

function pair(certPath: string, keyPath: string): CertPair {
  return {
    certPath,
    keyPath,
    certPem: readFileSync(certPath, "utf8"),
    keyPem: readFileSync(keyPath, "utf8"),
  };
}

function sanList(sans: readonly string[]): string {
  return sans.map((s) => (/^[\d.]+$/.test(s) || s.includes(":") ? `IP:${s}` : `DNS:${s}`)).join(
    ",",
  );
}

/** Mints a CA, one server certificate and the requested client certificates into `dir`. */
export function mintPki(opts: MintOptions): Pki {
  const { dir, algorithm } = opts;
  const days = String(opts.days ?? 3650);
  mkdirSync(dir, { recursive: true });
  const caKey = join(dir, "ca.key"), caCrt = join(dir, "ca.crt");
  newKey(caKey, algorithm);
  openssl([
    "req",
    "-x509",
    "-new",
    "-key",
    caKey,
    "-out",
    caCrt,
    "-days",
    days,
    "-subj",
    `/CN=${opts.caName}`,
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign,digitalSignature",
  ]);
  const issue = (name: string, subject: string, ext: string): CertPair => {
    const key = join(dir, `${name}.key`), csr = join(dir, `${name}.csr`);
    const crt = join(dir, `${name}.crt`), extFile = join(dir, `${name}.ext`);
    newKey(key, algorithm);
    openssl(["req", "-new", "-key", key, "-out", csr, "-subj", subject]);
    writeFileSync(extFile, ext);
    openssl([
      "x509",
      "-req",
      "-in",
      csr,
      "-CA",
      caCrt,
      "-CAkey",
      caKey,
      "-CAcreateserial",
      "-out",
      crt,
      "-days",
      days,
      "-extfile",
      extFile,
    ]);
    return pair(crt, key);
  };
  const sans = opts.serverSans ?? ["localhost", "127.0.0.1"];
  const server = issue(
    "server",
    `/CN=${sans[0] ?? "localhost"}`,
    `basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n` +
      `extendedKeyUsage=serverAuth\nsubjectAltName=${sanList(sans)}\n`,
  );
  const clients: Record<string, CertPair> = {};
  for (const [name, orgs] of Object.entries(opts.clients ?? {})) {
    const subject = orgs.map((o) => `/O=${o}`).join("") + `/CN=${name}`;
    // Talos requires client certificates whose extended key usage is exactly clientAuth.
    clients[name] = issue(
      `client-${name}`,
      subject,
      `basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n`,
    );
  }
  return { ca: pair(caCrt, caKey), server, clients };
}
