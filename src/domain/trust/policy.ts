/**
 * The approval policy for a plan: every signature in `plans/<name>.yaml.sig` must verify over the
 * exact plan bytes in namespace `cairn-plan` and be accepted by allowed_signers at the verify
 * time; the plan's author must have signed; and at least N approvers other than the author must
 * have signed.
 *
 * Identity rules (documented in docs as well):
 * - A signature is named by the principal entries of the allowed_signers line that accepted its
 *   key, as written. A key listed under a wildcard (`*@example.com`) is named by the pattern.
 * - It is the author's signature only if that line lists the author literally (a wildcard that
 *   happens to match the author never proves authorship).
 * - Signatures that share a key or any principal entry are one person: they count once. All keys
 *   under the same wildcard pattern therefore count as a single approver.
 * - A group whose pattern list would also accept the author, without naming the author
 *   literally, is not counted as an approver: it might be the author approving their own plan.
 * - One bad signature (tampered, wrong namespace, untrusted, outside validity, malformed) refuses
 *   the plan even if the rest satisfy the policy: it means someone reviewed other bytes, or the
 *   signature file was edited, and a human must clean it up.
 */
import type { Reason } from "../reasons.ts";
import { type AllowedSigners, findAllowedSigner, matchPatternList } from "./allowed_signers.ts";
import { keyLabel } from "./ssh_key.ts";
import { splitArmoredSignatures, verifySshSignature } from "./sshsig.ts";

/** The SSHSIG namespace of plan signatures. */
export const PLAN_SIGNATURE_NAMESPACE = "cairn-plan";

/** Inputs of {@link evaluatePolicy}. */
export interface EvaluatePolicyOptions {
  /** The exact plan file bytes. */
  readonly plan: Uint8Array;
  /** Text of `plans/<name>.yaml.sig` (concatenated armored signatures); undefined if absent. */
  readonly signatures: string | undefined;
  readonly signers: AllowedSigners;
  /** `metadata.author` of the plan: an SSH principal. */
  readonly author: string;
  /** Approvers required besides the author (default 1). */
  readonly requiredApprovals?: number;
  /** Verification instant, epoch milliseconds. */
  readonly atMs: number;
  /** Defaults to `cairn-plan`. */
  readonly namespace?: string;
}

/** How a valid signature counts towards the policy. */
export type SignatureRole = "author" | "approver" | "maybe-author";

/** The verdict on one signature of the `.sig` file. */
export interface SignatureVerdict {
  /** 1-based position in the `.sig` file. */
  readonly index: number;
  /** Line of the `.sig` file where the signature starts. */
  readonly line: number;
  readonly ok: boolean;
  readonly reason?: Reason;
  readonly message: string;
  /** `ED25519`, `ECDSA-P256`, `RSA-2048`, … when the blob could be read. */
  readonly keyType?: string;
  readonly fingerprint?: string;
  /** Principal entries of the accepting allowed_signers line (empty when untrusted). */
  readonly principals: readonly string[];
  /** `file:line` of the accepting allowed_signers line. */
  readonly signer?: string;
  readonly role?: SignatureRole;
}

/** The overall verdict. */
export interface PolicyVerdict {
  readonly ok: boolean;
  /** Refusal reasons, unique, in the order found; empty when ok. */
  readonly reasons: readonly Reason[];
  readonly summary: string;
  readonly namespace: string;
  readonly author: string;
  readonly authorSigned: boolean;
  /** Distinct approvers other than the author, each named by its principal entries. */
  readonly approvers: readonly string[];
  readonly requiredApprovals: number;
  readonly atMs: number;
  readonly signatures: readonly SignatureVerdict[];
}

/** Evaluates the approval policy. Never throws for bad signatures; they become verdicts. */
export async function evaluatePolicy(opts: EvaluatePolicyOptions): Promise<PolicyVerdict> {
  const namespace = opts.namespace ?? PLAN_SIGNATURE_NAMESPACE;
  const required = opts.requiredApprovals ?? 1;
  if (!Number.isInteger(required) || required < 0) {
    throw new RangeError(`requiredApprovals must be a non-negative integer, got ${required}`);
  }
  const blocks = splitArmoredSignatures(opts.signatures ?? "");
  const base = { namespace, author: opts.author, requiredApprovals: required, atMs: opts.atMs };
  if (blocks.length === 0) {
    return {
      ...base,
      ok: false,
      reasons: ["SignatureMissing"],
      summary: "the plan has no signatures",
      authorSigned: false,
      approvers: [],
      signatures: [],
    };
  }
  const checked = await Promise.all(
    blocks.map((b, i) => checkOne({ ...opts, namespace }, b.text, { index: i + 1, line: b.line })),
  );
  const { verdicts, authorSigned, approvers } = assignRoles(checked, opts.author);
  const reasons = new Set<Reason>();
  for (const v of verdicts) if (v.reason) reasons.add(v.reason);
  if (!authorSigned) reasons.add("AuthorSignatureMissing");
  if (approvers.length < required) reasons.add("ApprovalsInsufficient");
  const ok = reasons.size === 0;
  return {
    ...base,
    ok,
    reasons: [...reasons],
    summary: summarise({ ok, authorSigned, approvers, required, verdicts }),
    authorSigned,
    approvers,
    signatures: verdicts,
  };
}

async function checkOne(
  opts: EvaluatePolicyOptions & { namespace: string },
  armored: string,
  pos: { index: number; line: number },
): Promise<SignatureVerdict> {
  const sig = await verifySshSignature(armored, opts.plan, opts.namespace);
  const keyInfo = sig.publicKey
    ? {
      keyType: keyLabel(sig.publicKey),
      ...(sig.fingerprint ? { fingerprint: sig.fingerprint } : {}),
    }
    : {};
  if (!sig.ok) {
    return {
      ...pos,
      ...keyInfo,
      ok: false,
      reason: sig.reason,
      message: sig.message,
      principals: [],
    };
  }
  const found = findAllowedSigner(opts.signers, {
    key: sig.publicKey,
    namespace: opts.namespace,
    atMs: opts.atMs,
  });
  if (!found.ok) {
    return {
      ...pos,
      ...keyInfo,
      ok: false,
      reason: found.reason,
      message: found.message,
      principals: [],
    };
  }
  return {
    ...pos,
    ...keyInfo,
    ok: true,
    message: "good signature",
    principals: found.entry.principals,
    signer: `${found.entry.file}:${found.entry.line}`,
  };
}

/** Groups valid signatures into people (shared key or principal entry) and assigns roles. */
function assignRoles(verdicts: SignatureVerdict[], author: string) {
  const valid = verdicts.filter((v) => v.ok);
  const parent = valid.map((_, i) => i);
  const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i]!)));
  const owner = new Map<string, number>();
  valid.forEach((v, i) => {
    for (const k of [`key:${v.fingerprint}`, ...v.principals.map((p) => `p:${p}`)]) {
      const j = owner.get(k);
      if (j === undefined) owner.set(k, i);
      else parent[find(i)] = find(j);
    }
  });
  const groups = new Map<number, SignatureVerdict[]>();
  valid.forEach((v, i) => groups.set(find(i), [...(groups.get(find(i)) ?? []), v]));
  const roleOf = new Map<SignatureVerdict, SignatureRole>();
  const approvers: string[] = [];
  let authorSigned = false;
  for (const members of groups.values()) {
    const role = groupRole(members, author);
    if (role === "author") authorSigned = true;
    if (role === "approver") {
      approvers.push([...new Set(members.flatMap((m) => m.principals))].sort().join(","));
    }
    for (const m of members) roleOf.set(m, role);
  }
  const out = verdicts.map((v) => {
    const role = roleOf.get(v);
    return role ? { ...v, role } : v;
  });
  return { verdicts: out, authorSigned, approvers: approvers.sort() };
}

function groupRole(members: readonly SignatureVerdict[], author: string): SignatureRole {
  const accepts = (m: SignatureVerdict) => matchPatternList(author, m.principals);
  if (members.some((m) => m.principals.includes(author) && accepts(m))) return "author";
  if (members.some(accepts)) return "maybe-author";
  return "approver";
}

function summarise(
  v: {
    ok: boolean;
    authorSigned: boolean;
    approvers: readonly string[];
    required: number;
    verdicts: readonly SignatureVerdict[];
  },
): string {
  const bad = v.verdicts.filter((s) => !s.ok).length;
  const parts = [
    v.authorSigned ? "author signed" : "author has not signed",
    `${v.approvers.length} of ${v.required} required approver(s)`,
  ];
  if (bad > 0) parts.push(`${bad} bad signature(s)`);
  return `${v.ok ? "policy satisfied" : "policy refused"}: ${parts.join(", ")}`;
}
