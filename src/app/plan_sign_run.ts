/**
 * What `cairn plan sign` wires: the capped plan read (never through a link) and `ssh-keygen -Y
 * sign` over the checked bytes. The command checks, merges the signature into FILE.sig and
 * renders; a signing failure reaches it as SigningFailed.
 */
import { signBytes, type SignOptions, SshKeygenError } from "../adapters/ssh/ssh_keygen.ts";
import { MAX_BOUND_FILE_BYTES, readNamedFile } from "../adapters/repo/bound_file_reader.ts";
import { CairnError } from "../domain/errors.ts";

/** The plan's bytes at `path`, capped like every bound file. */
export async function readPlanToSign(path: string): Promise<Uint8Array> {
  return await readNamedFile(path, { what: "plan", maxBytes: MAX_BOUND_FILE_BYTES });
}

/** The armored SSH signature of `bytes` by `opts.key`; ssh-keygen's failure is SigningFailed. */
export async function signPlanBytes(
  bytes: Uint8Array,
  opts: Pick<SignOptions, "key" | "hashAlgorithm">,
): Promise<string> {
  try {
    return await signBytes(bytes, opts);
  } catch (e) {
    if (e instanceof SshKeygenError) {
      throw new CairnError({ reason: "SigningFailed", message: e.message }, { cause: e });
    }
    throw e;
  }
}
