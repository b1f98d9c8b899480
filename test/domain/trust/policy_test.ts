import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { generateKey, signBytes } from "../../../src/adapters/ssh/ssh_keygen.ts";
import { parseAllowedSigners } from "../../../src/domain/trust/allowed_signers.ts";
import { evaluatePolicy, type PolicyVerdict } from "../../../src/domain/trust/policy.ts";

const AUTHOR = "alice@example.com";
const AT_MS = Date.UTC(2026, 2, 1, 12);
const PLAN = new TextEncoder().encode(
  "apiVersion: cairn.dev/v1\nkind: TalosUpgrade\nmetadata:\n  name: talos-v1.14.2\n  author: alice@example.com\n",
);

const NAMES = ["alice", "bob", "bob2", "carol", "dave", "erin", "stranger"] as const;
type Name = (typeof NAMES)[number];

const dir = await Deno.makeTempDir({ prefix: "cairn-policy-" });
const pub = {} as Record<Name, string>;
const sig = {} as Record<Name, string>;
await Promise.all(NAMES.map(async (n) => {
  pub[n] = await generateKey("ed25519", `${dir}/${n}`);
  sig[n] = await signBytes(PLAN, { key: `${dir}/${n}` });
}));
const otherNs = await signBytes(PLAN, { key: `${dir}/bob`, namespace: "git" });
await Deno.remove(dir, { recursive: true });

const SIGNERS = parseAllowedSigners(
  [
    `alice@example.com namespaces="cairn-plan" ${pub.alice}`,
    `bob@example.com ${pub.bob}`,
    `bob@example.com ${pub.bob2}`,
    `carol@example.com ${pub.carol}`,
    `*@ops.example.org ${pub.dave}`,
    `*@example.com ${pub.erin}`,
  ].join("\n"),
  "allowed_signers",
);

function evaluate(
  sigs: string | undefined,
  extra: { author?: string; approvals?: number; plan?: Uint8Array } = {},
) {
  return evaluatePolicy({
    plan: extra.plan ?? PLAN,
    signatures: sigs,
    signers: SIGNERS,
    author: extra.author ?? AUTHOR,
    atMs: AT_MS,
    ...(extra.approvals !== undefined ? { requiredApprovals: extra.approvals } : {}),
  });
}

function brief(v: PolicyVerdict) {
  return { ok: v.ok, reasons: v.reasons, authorSigned: v.authorSigned, approvers: v.approvers };
}

Deno.test("evaluatePolicy() accepts the author plus one distinct approver", async () => {
  const v = await evaluate(sig.alice + sig.bob);
  assertEquals(brief(v), {
    ok: true,
    reasons: [],
    authorSigned: true,
    approvers: ["bob@example.com"],
  });
  assertEquals(v.signatures.map((s) => [s.index, s.ok, s.role, s.keyType, s.signer]), [
    [1, true, "author", "ED25519", "allowed_signers:1"],
    [2, true, "approver", "ED25519", "allowed_signers:2"],
  ]);
  assert(v.signatures[0]!.fingerprint!.startsWith("SHA256:"));
  assertEquals(v.signatures[1]!.line, sig.alice.trimEnd().split("\n").length + 1);
});

Deno.test("evaluatePolicy() refuses an approver signature alone with AuthorSignatureMissing", async () => {
  const v = await evaluate(sig.bob);
  assertEquals(brief(v), {
    ok: false,
    reasons: ["AuthorSignatureMissing"],
    authorSigned: false,
    approvers: ["bob@example.com"],
  });
});

Deno.test("evaluatePolicy() refuses the author alone with ApprovalsInsufficient, and accepts it at N=0", async () => {
  assertEquals((await evaluate(sig.alice)).reasons, ["ApprovalsInsufficient"]);
  assertEquals((await evaluate(sig.alice, { approvals: 0 })).ok, true);
});

Deno.test("evaluatePolicy() counts the same approver once, even with two signatures or two keys", async () => {
  const twice = await evaluate(sig.alice + sig.bob + sig.bob, { approvals: 2 });
  assertEquals(brief(twice), {
    ok: false,
    reasons: ["ApprovalsInsufficient"],
    authorSigned: true,
    approvers: ["bob@example.com"],
  });
  const twoKeys = await evaluate(sig.alice + sig.bob + sig.bob2, { approvals: 2 });
  assertEquals(twoKeys.approvers, ["bob@example.com"]);
  assertEquals(twoKeys.ok, false);
  const two = await evaluate(sig.alice + sig.bob + sig.carol, { approvals: 2 });
  assertEquals(brief(two), {
    ok: true,
    reasons: [],
    authorSigned: true,
    approvers: ["bob@example.com", "carol@example.com"],
  });
});

Deno.test("evaluatePolicy() never lets the author approve their own plan", async () => {
  const v = await evaluate(sig.alice + sig.alice);
  assertEquals(brief(v), {
    ok: false,
    reasons: ["ApprovalsInsufficient"],
    authorSigned: true,
    approvers: [],
  });
});

Deno.test("evaluatePolicy() names wildcard signers by their pattern and never counts them as the author", async () => {
  const ops = await evaluate(sig.alice + sig.dave);
  assertEquals(brief(ops), {
    ok: true,
    reasons: [],
    authorSigned: true,
    approvers: ["*@ops.example.org"],
  });
  // erin's pattern also matches the author: it might be alice's second key, so it is not an approver.
  const maybe = await evaluate(sig.alice + sig.erin);
  assertEquals(maybe.reasons, ["ApprovalsInsufficient"]);
  assertEquals(maybe.signatures[1]!.role, "maybe-author");
  // A wildcard line cannot prove authorship even when it matches the author.
  const claim = await evaluate(sig.erin + sig.bob, { author: "erin@example.com" });
  assertEquals(claim.reasons, ["AuthorSignatureMissing"]);
});

Deno.test("evaluatePolicy() refuses when any signature is bad, naming each reason", async () => {
  assertEquals((await evaluate(undefined)).reasons, ["SignatureMissing"]);
  assertEquals((await evaluate("\n\n")).reasons, ["SignatureMissing"]);
  const tampered = PLAN.slice();
  tampered[30] = tampered[30]! ^ 0x20;
  const t = await evaluate(sig.alice + sig.bob, { plan: tampered });
  assertEquals(t.reasons, ["SignatureInvalid", "AuthorSignatureMissing", "ApprovalsInsufficient"]);
  const mixed = await evaluate(sig.alice + sig.bob + sig.stranger + otherNs + "garbage\n");
  assertEquals(mixed.reasons, [
    "SignerNotTrusted",
    "SignatureNamespaceMismatch",
    "SignatureMalformed",
  ]);
  assertEquals(mixed.authorSigned, true);
  assertEquals(mixed.signatures.map((s) => s.ok), [true, true, false, false, false]);
});
