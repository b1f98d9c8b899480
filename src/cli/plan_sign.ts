import { type Command, EXIT, OUTPUT_OPTION, printJson, UsageError, wantsJson } from "./command.ts";
import { CairnError } from "../domain/errors.ts";
import { signPlanFile, SshKeygenError } from "../adapters/ssh/ssh_keygen.ts";

/** `cairn plan sign FILE --key K`: appends an SSH signature over the plan's bytes to FILE.sig. */
export const command: Command = {
  path: ["plan", "sign"],
  summary: "Sign a plan file with an SSH key (appends to FILE.sig)",
  usage: "FILE --key KEY [--hash sha512|sha256] [--output json]",
  help: `
Signs the exact bytes of FILE with \`ssh-keygen -Y sign -n cairn-plan -f KEY\` and appends the
armored signature to FILE.sig, so the author and each approver add their signature to one file.
Any edit to FILE afterwards invalidates every signature in FILE.sig.

Options:
  --key KEY        private key file (ed25519, ecdsa p256/p384/p521, or rsa)
  --hash ALG       SSHSIG hash: sha512 (ssh-keygen's default) or sha256
  --output json    print {file, signatureFile} as JSON`,
  options: {
    key: { type: "string", short: "k" },
    hash: { type: "string" },
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
    let signatureFile: string;
    try {
      signatureFile = await signPlanFile(file, { key, ...(hash ? { hashAlgorithm: hash } : {}) });
    } catch (e) {
      throw toProblem(e, file);
    }
    if (wantsJson(args)) printJson(io, { file, signatureFile, key });
    else io.stdout(`signed ${file} with ${key}; signature appended to ${signatureFile}\n`);
    return EXIT.ok;
  },
};

function toProblem(e: unknown, file: string): unknown {
  if (e instanceof Deno.errors.NotFound) {
    return new CairnError({ reason: "FileUnreadable", message: `cannot read ${file}` }, {
      cause: e,
    });
  }
  if (e instanceof SshKeygenError) {
    return new CairnError({ reason: "SigningFailed", message: e.message }, { cause: e });
  }
  return e;
}
