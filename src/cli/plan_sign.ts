import { dirname, resolve } from "node:path";
import { type Command, EXIT, OUTPUT_OPTION, printJson, UsageError, wantsJson } from "./command.ts";
import { parseNow } from "./plan_check.ts";
import { checkPlanFile } from "../app/plan_check_run.ts";
import { CairnError, formatProblem } from "../domain/errors.ts";
import { sha256Hex } from "../domain/plan/digest.ts";
import { mergeSignature } from "../domain/trust/signature_file.ts";
import { PLAN_SIGNATURE_NAMESPACE } from "../domain/trust/policy.ts";
import { readPlanToSign, signPlanBytes } from "../app/plan_sign_run.ts";

/**
 * `cairn plan sign FILE --key K`: checks the plan exactly as `cairn plan check` does, then adds
 * an SSH signature over the checked bytes to FILE.sig, once per key.
 */
export const command: Command = {
  path: ["plan", "sign"],
  summary: "Check a plan, then sign it with an SSH key (one signature per key in FILE.sig)",
  usage: "FILE --key KEY [--hash sha512|sha256] [--now RFC3339] [--output json]",
  help: `
Runs every check of \`cairn plan check\` on FILE first: a plan that fails them (or a file that
is not a plan) is refused with the located problems, exit 1, and FILE.sig is left untouched.
Then signs the exact bytes that were checked with \`ssh-keygen -Y sign -n cairn-plan -f KEY\`
and adds the armored signature to FILE.sig, so the author and each approver add their
signature to one file. Each key appears once: signing again with a key whose signature still
verifies changes nothing (says so); a signature of that key that no longer verifies (the plan
changed) is replaced. Any edit to FILE afterwards invalidates every signature in FILE.sig.

Options:
  --key KEY        private key file (ed25519, ecdsa p256/p384/p521, or rsa)
  --hash ALG       SSHSIG hash: sha512 (ssh-keygen's default) or sha256
  --now T          check as of this RFC 3339 time instead of the system clock
  --output json    print {file, signatureFile, action, fingerprint} as JSON`,
  options: {
    key: { type: "string", short: "k" },
    hash: { type: "string" },
    now: { type: "string" },
    ...OUTPUT_OPTION,
  },
  positionals: { min: 1, max: 1 },
  async run(args, io) {
    const file = args.positionals[0]!;
    const key = args.values["key"];
    if (typeof key !== "string" || key === "") throw new UsageError("--key KEY is required");
    const hash = args.values["hash"];
    if (hash !== undefined && hash !== "sha256" && hash !== "sha512") {
      throw new UsageError(`--hash must be sha256 or sha512, got ${String(hash)}`);
    }
    const nowMs = parseNow(args.values["now"] as string | undefined) ?? Date.now();
    const path = resolve(io.cwd, file);
    // Read first, check second, sign these bytes: what is signed is what was checked.
    let bytes: Uint8Array;
    try {
      bytes = await readPlanToSign(path);
    } catch (e) {
      throw toProblem(e, file);
    }
    const checked = await checkPlanFile(file, { nowMs, cwd: io.cwd });
    if (!checked.ok) {
      for (const p of checked.problems) io.stderr(formatProblem(p) + "\n");
      io.stderr(`refused to sign ${file}: it fails plan check; FILE.sig unchanged\n`);
      return EXIT.refused;
    }
    if (checked.sha256 !== await sha256Hex(bytes)) {
      throw new CairnError({
        reason: "PlanChangedAfterApproval",
        message: `${file} changed while it was being checked; sign it again`,
      });
    }
    const signatureFile = `${file}.sig`;
    const sigPath = `${path}.sig`;
    let merge;
    try {
      const armored = await signPlanBytes(bytes, { key, ...(hash ? { hashAlgorithm: hash } : {}) });
      const existing = await readIfExists(sigPath);
      merge = await mergeSignature(existing, armored, bytes, PLAN_SIGNATURE_NAMESPACE);
      if (merge.action !== "unchanged") await writeAtomically(sigPath, merge.text);
    } catch (e) {
      throw toProblem(e, file);
    }
    const { action, fingerprint } = merge;
    if (wantsJson(args)) printJson(io, { file, signatureFile, action, fingerprint });
    else if (action === "unchanged") {
      io.stdout(`${file} is already signed by ${fingerprint}; ${signatureFile} unchanged\n`);
    } else if (action === "replaced") {
      io.stdout(
        `signed ${file} with ${fingerprint}; replaced ${merge.removed} signature(s) of the same ` +
          `key that no longer verified in ${signatureFile}\n`,
      );
    } else {io.stdout(
        `signed ${file} with ${fingerprint}; signature appended to ${signatureFile}\n`,
      );}
    return EXIT.ok;
  },
};

async function readIfExists(path: string): Promise<string> {
  try {
    return await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return "";
    throw e;
  }
}

/** Write beside, then rename: a crash never leaves a half-written FILE.sig. */
async function writeAtomically(path: string, text: string): Promise<void> {
  const tmp = await Deno.makeTempFile({ dir: dirname(path), prefix: ".cairn-sig-" });
  try {
    await Deno.writeTextFile(tmp, text);
    await Deno.rename(tmp, path);
  } catch (e) {
    await Deno.remove(tmp).catch(() => {});
    throw e;
  }
}

function toProblem(e: unknown, file: string): unknown {
  if (e instanceof Deno.errors.NotFound) {
    return new CairnError({ reason: "FileUnreadable", message: `cannot read ${file}` }, {
      cause: e,
    });
  }
  return e;
}
