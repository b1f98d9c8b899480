/**
 * The `ssh-keygen` CLI: signs plans (`-Y sign`), generates throwaway keys for tests and the demo,
 * and runs `-Y verify` so tests can hold cairn's native verifier to OpenSSH's verdict.
 * Private keys are only ever passed by path; their content never reaches cairn's output.
 */

/** Key types `generateKey` can create. */
export type SshKeyKind = "ed25519" | "ecdsa-p256" | "ecdsa-p384" | "ecdsa-p521" | "rsa";

const KEYGEN_ARGS: Readonly<Record<SshKeyKind, readonly string[]>> = {
  "ed25519": ["-t", "ed25519"],
  "ecdsa-p256": ["-t", "ecdsa", "-b", "256"],
  "ecdsa-p384": ["-t", "ecdsa", "-b", "384"],
  "ecdsa-p521": ["-t", "ecdsa", "-b", "521"],
  "rsa": ["-t", "rsa", "-b", "2048"],
};

/** The plan signature namespace (mirrors `PLAN_SIGNATURE_NAMESPACE` in the trust domain). */
const DEFAULT_NAMESPACE = "cairn-plan";

/** ssh-keygen exited non-zero. */
export class SshKeygenError extends Error {
  constructor(readonly exitCode: number, readonly stderr: string, what: string) {
    super(`ssh-keygen ${what} failed (exit ${exitCode}): ${stderr.trim()}`);
    this.name = "SshKeygenError";
  }
}

interface RunResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

async function run(args: readonly string[], stdin?: Uint8Array): Promise<RunResult> {
  const program = Deno.env.get("CAIRN_SSH_KEYGEN") ?? "ssh-keygen";
  const child = new Deno.Command(program, {
    args: [...args],
    stdin: stdin ? "piped" : "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (stdin) {
    const w = child.stdin.getWriter();
    try {
      await w.write(stdin);
      await w.close();
    } catch (e) {
      // ssh-keygen may exit before reading its input (e.g. `-Y verify` on a malformed signature);
      // its exit code and stderr below say why, so a closed pipe is not the error to report.
      if (!(e instanceof Deno.errors.BrokenPipe)) throw e;
    }
  }
  const out = await child.output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** Creates an unencrypted key pair at `path` / `path.pub`; returns the public key line. */
export async function generateKey(
  kind: SshKeyKind,
  path: string,
  comment = "cairn-test",
): Promise<string> {
  const r = await run([...KEYGEN_ARGS[kind], "-q", "-N", "", "-C", comment, "-f", path]);
  if (r.code !== 0) throw new SshKeygenError(r.code, r.stderr, "key generation");
  return (await Deno.readTextFile(`${path}.pub`)).trim();
}

/** Options for {@link signBytes}. */
export interface SignOptions {
  readonly key: string;
  readonly namespace?: string;
  /** SSHSIG hash; ssh-keygen's default is sha512. */
  readonly hashAlgorithm?: "sha256" | "sha512";
}

/** Signs `message` with `ssh-keygen -Y sign` and returns the armored signature. */
export async function signBytes(message: Uint8Array, opts: SignOptions): Promise<string> {
  const args = ["-Y", "sign", "-n", opts.namespace ?? DEFAULT_NAMESPACE, "-f", opts.key];
  if (opts.hashAlgorithm) args.push("-O", `hashalg=${opts.hashAlgorithm}`);
  const r = await run(args, message);
  if (r.code !== 0) throw new SshKeygenError(r.code, r.stderr, "-Y sign");
  return r.stdout;
}

/** Options for {@link sshKeygenVerify}. */
export interface VerifyOptions {
  readonly allowedSigners: string;
  readonly principal: string;
  readonly signatureFile: string;
  readonly namespace?: string;
  /** Passed as `-O verify-time=` (e.g. `20260101120000Z`). */
  readonly verifyTime?: string;
}

/** Runs `ssh-keygen -Y verify` on `message`; returns its exit code and output. */
export async function sshKeygenVerify(
  message: Uint8Array,
  opts: VerifyOptions,
): Promise<RunResult> {
  const args = ["-Y", "verify", "-f", opts.allowedSigners, "-I", opts.principal];
  args.push("-n", opts.namespace ?? DEFAULT_NAMESPACE, "-s", opts.signatureFile);
  if (opts.verifyTime) args.push("-O", `verify-time=${opts.verifyTime}`);
  return await run(args, message);
}
