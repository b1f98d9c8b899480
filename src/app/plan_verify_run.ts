/**
 * The reads `cairn plan verify` makes through the bound-file reader: the plan and its `.sig` come
 * from the repository (never through a link, capped: a `.sig` committed as a link to /dev/zero
 * must not exhaust memory), the allowed signers from the operator's path (capped). The policy
 * verdict is the domain's; the command renders it.
 */
import {
  MAX_BOUND_FILE_BYTES,
  readCappedFile,
  readNamedFile,
} from "../adapters/repo/bound_file_reader.ts";

/** What a verification reads; `signatures` is undefined when the plan has no `.sig` yet. */
export interface PlanVerifyInputs {
  readonly plan: Uint8Array;
  readonly signatures: string | undefined;
  readonly signersText: string;
}

/** Reads the plan at `file`, `<file>.sig` and the allowed signers at `signersFile`. */
export async function readPlanVerifyInputs(
  file: string,
  signersFile: string,
): Promise<PlanVerifyInputs> {
  const plan = await readNamedFile(file, { what: "plan", maxBytes: MAX_BOUND_FILE_BYTES });
  const sigBytes = await readNamedFile(`${file}.sig`, {
    what: "signatures",
    maxBytes: MAX_BOUND_FILE_BYTES,
    optional: true,
  });
  const signatures = sigBytes === undefined ? undefined : new TextDecoder().decode(sigBytes);
  const signersText = new TextDecoder().decode(
    await readCappedFile(signersFile, MAX_BOUND_FILE_BYTES),
  );
  return { plan, signatures, signersText };
}
