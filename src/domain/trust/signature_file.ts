/**
 * Adding one signature to a plan's `.sig` file without ever duplicating a signer. A `.sig` file
 * holds one armored SSHSIG block per signer; the approval policy counts principals, so a second
 * block from the same key adds nothing but noise and makes a reviewer wonder which one counts.
 * Pure: the caller reads and writes the file.
 */
import { keyFingerprint, keysEqual, type SshPublicKey } from "./ssh_key.ts";
import {
  dearmorSshSignature,
  parseSshSignatureBlob,
  splitArmoredSignatures,
  verifySshSignature,
} from "./sshsig.ts";

/** What {@link mergeSignature} did to the signature file. */
export type SignatureMerge =
  /** The key already has a signature that verifies over these bytes: nothing to write. */
  | { readonly action: "unchanged"; readonly fingerprint: string }
  /** A new signer: the block is appended. */
  | { readonly action: "appended"; readonly fingerprint: string; readonly text: string }
  /**
   * The key had only signatures that no longer verify (the plan changed since): they are
   * replaced by the new one, so the signer still appears once.
   */
  | {
    readonly action: "replaced";
    readonly fingerprint: string;
    readonly text: string;
    readonly removed: number;
  };

function blockKey(text: string): SshPublicKey | undefined {
  try {
    return parseSshSignatureBlob(dearmorSshSignature(text)).publicKey;
  } catch {
    return undefined; // a malformed block is kept as it is; `plan verify` reports it
  }
}

/**
 * Merges the armored signature `armored` (just made over `message` in `namespace`) into the
 * existing `.sig` text. Blocks of other keys, and malformed blocks, are kept unchanged.
 */
export async function mergeSignature(
  existing: string,
  armored: string,
  message: Uint8Array,
  namespace: string,
): Promise<SignatureMerge> {
  const signer = blockKey(armored);
  if (!signer) throw new Error("the new signature is not a well-formed SSHSIG block");
  const fingerprint = await keyFingerprint(signer);
  const kept: string[] = [];
  let removed = 0;
  for (const block of splitArmoredSignatures(existing)) {
    const key = blockKey(block.text);
    if (key && keysEqual(key, signer)) {
      const v = await verifySshSignature(block.text, message, namespace);
      if (v.ok) return { action: "unchanged", fingerprint };
      removed++;
      continue;
    }
    kept.push(block.text);
  }
  const fresh = armored.endsWith("\n") ? armored : `${armored}\n`;
  if (removed === 0) {
    const sep = existing === "" || existing.endsWith("\n") ? "" : "\n";
    return { action: "appended", fingerprint, text: existing + sep + fresh };
  }
  return { action: "replaced", fingerprint, text: [...kept, fresh].join(""), removed };
}
