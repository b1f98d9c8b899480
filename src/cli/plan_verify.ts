import {
  type Command,
  EXIT,
  OUTPUT_OPTION,
  printJson,
  style,
  UsageError,
  wantsJson,
} from "./command.ts";
import type { CommandIO, ParsedArgs } from "./command.ts";
import { CairnError } from "../domain/errors.ts";
import { readPlanVerifyInputs } from "../app/plan_verify_run.ts";
import { fastLoadPlainYamlBytes } from "../domain/plan/yaml_fast.ts";
import { parseAllowedSigners } from "../domain/trust/allowed_signers.ts";
import { evaluatePolicy, type PolicyVerdict } from "../domain/trust/policy.ts";

/** `cairn plan verify FILE --allowed-signers F`: checks FILE.sig against the approval policy. */
export const command: Command = {
  path: ["plan", "verify"],
  summary: "Verify a plan's signatures against allowed_signers and the approval policy",
  usage: "FILE --allowed-signers F [--approvals N] [--now RFC3339] [--output json]",
  help: `
Verifies every SSH signature in FILE.sig over the exact bytes of FILE (namespace cairn-plan),
natively (no ssh-keygen), and checks each signing key against allowed_signers in git's format.
The policy holds when every signature is good and trusted, the plan's metadata.author signed,
and at least N approvers other than the author signed (distinct people: signatures sharing a
key or principal count once; a wildcard line never proves authorship).

Options:
  --allowed-signers F   allowed_signers file (principals [options] keytype key); any malformed
                        line is an error; cert-authority is refused
  --approvals N         approvers required besides the author (default 1)
  --now RFC3339         verify as of this time (valid-after/valid-before) instead of the system
                        clock, as plan check and plan sign take it (--at: deprecated alias)
  --output json         print the verdict as JSON`,
  options: {
    "allowed-signers": { type: "string" },
    approvals: { type: "string", default: "1" },
    now: { type: "string" },
    at: { type: "string" },
    ...OUTPUT_OPTION,
  },
  positionals: { min: 1, max: 1 },
  async run(args, io) {
    const file = args.positionals[0]!;
    const signersFile = args.values["allowed-signers"];
    if (typeof signersFile !== "string") throw new UsageError("--allowed-signers F is required");
    const required = parseApprovals(args.values["approvals"]);
    const atMs = parseAt(nowFlag(args, io));
    // The plan and its .sig come from the repository: never through a link, capped.
    const { plan, signatures, signersText } = await readPlanVerifyInputs(file, signersFile);
    const signers = parseAllowedSigners(signersText, signersFile);
    const author = await readAuthor(plan, file);
    const verdict = await evaluatePolicy({
      plan,
      signatures,
      signers,
      author,
      requiredApprovals: required,
      atMs,
    });
    if (wantsJson(args)) printJson(io, { file, signatureFile: `${file}.sig`, ...verdict });
    else printVerdict(io, file, verdict);
    return verdict.ok ? EXIT.ok : EXIT.refused;
  },
};

function parseApprovals(v: unknown): number {
  const n = Number(v);
  if (typeof v !== "string" || !/^\d+$/.test(v) || !Number.isSafeInteger(n)) {
    throw new UsageError(`--approvals must be a non-negative integer, got ${String(v)}`);
  }
  return n;
}

/** `--now`, or the deprecated `--at` it replaced (one name per concept across plan commands). */
function nowFlag(args: ParsedArgs, io: CommandIO): unknown {
  if (args.values["at"] === undefined) return args.values["now"];
  io.stderr("cairn: --at is deprecated; use --now (same meaning)\n");
  return args.values["now"] ?? args.values["at"];
}

function parseAt(v: unknown): number {
  if (v === undefined) return Date.now();
  const rfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;
  const ms = typeof v === "string" && rfc3339.test(v) ? Date.parse(v) : NaN;
  if (Number.isNaN(ms)) throw new UsageError(`--now must be an RFC 3339 time, got ${String(v)}`);
  return ms;
}

/**
 * Reads only `metadata.author`; full plan validation is `cairn plan check`'s job. A plan in plain
 * block YAML is read without loading the general YAML parser (a cold start's largest import);
 * any other plan, and every YAML problem, goes through `loadYaml` as before.
 */
async function readAuthor(plan: Uint8Array, file: string): Promise<string> {
  const value = fastLoadPlainYamlBytes(plan) ?? await loadWithGeneralParser(plan, file);
  const meta = isRecord(value) ? value["metadata"] : undefined;
  const author = isRecord(meta) ? meta["author"] : undefined;
  if (typeof author !== "string" || author === "") {
    throw new CairnError({
      reason: "PlanSchemaInvalid",
      message: "metadata.author (the SSH principal of the plan's author) is missing",
      location: { file, line: 1, column: 1, path: "metadata.author" },
    });
  }
  return author;
}

async function loadWithGeneralParser(plan: Uint8Array, file: string): Promise<unknown> {
  const { loadYaml } = await import("../domain/plan/yaml_load.ts");
  const loaded = loadYaml(plan, { file });
  if (!loaded.ok) throw new CairnError(loaded.problems[0]!);
  return loaded.loaded.value;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function printVerdict(io: CommandIO, file: string, v: PolicyVerdict): void {
  const s = style(io);
  const rows = v.signatures.map((sig) => [
    String(sig.index),
    sig.principals.join(",") || "-",
    sig.keyType ?? "-",
    sig.fingerprint ?? "-",
    sig.ok ? s.green(`ok (${sig.role})`) : s.red(`${sig.reason}: ${sig.message}`),
  ]);
  const head = ["#", "SIGNER", "KEY", "FINGERPRINT", "VERDICT"];
  const widths = head.map((h, i) =>
    Math.max(h.length, ...rows.map((r) => stripAnsi(r[i]!).length))
  );
  const fmt = (r: string[]) =>
    r.map((c, i) => (i === r.length - 1 ? c : c + " ".repeat(widths[i]! - stripAnsi(c).length)))
      .join("  ");
  io.stdout(`${s.bold(file)}  (${file}.sig, namespace ${v.namespace})\n`);
  if (rows.length > 0) io.stdout([fmt(head), ...rows.map(fmt)].join("\n") + "\n");
  const approvers = v.approvers.length ? v.approvers.join(", ") : "none";
  io.stdout(`author ${v.author}: ${v.authorSigned ? "signed" : s.red("NOT signed")}\n`);
  io.stdout(`approvers (${v.approvers.length}/${v.requiredApprovals} required): ${approvers}\n`);
  const verdict = v.ok ? s.green("ok") : s.red(`refused (${v.reasons.join(", ")})`);
  io.stdout(`verdict: ${verdict} — ${v.summary}\n`);
}

function stripAnsi(t: string): string {
  // deno-lint-ignore no-control-regex
  return t.replace(/\x1b\[[0-9;]*m/g, "");
}
