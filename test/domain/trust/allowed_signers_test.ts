import { deepStrictEqual as assertEquals, ok as assert, throws } from "node:assert/strict";
import { generateKey } from "../../../src/adapters/ssh/ssh_keygen.ts";
import { CairnError } from "../../../src/domain/errors.ts";
import {
  findAllowedSigner,
  matchPatternList,
  parseAllowedSigners,
  parseSshTime,
} from "../../../src/domain/trust/allowed_signers.ts";
import { parsePublicKeyBlob } from "../../../src/domain/trust/ssh_key.ts";
import { decodeBase64 } from "../../../src/domain/trust/ssh_wire.ts";

const dir = await Deno.makeTempDir({ prefix: "cairn-allowed-" });
const [ED, EC] = await Promise.all([
  generateKey("ed25519", `${dir}/ed`),
  generateKey("ecdsa-p256", `${dir}/ec`),
]);
await Deno.remove(dir, { recursive: true });

/** Parses and returns the CairnError thrown, failing if none is. */
function parseError(text: string): CairnError {
  try {
    parseAllowedSigners(text, "allowed_signers");
  } catch (e) {
    if (e instanceof CairnError) return e;
    throw e;
  }
  throw new Error("expected parseAllowedSigners() to throw");
}

function where(e: CairnError): string {
  return `${e.reason} ${e.location?.file}:${e.location?.line}:${e.location?.column}`;
}

Deno.test("parseAllowedSigners() reads principals, options and keys, skipping comments and blanks", () => {
  const text = [
    "# reviewers",
    "",
    `   alice@example.com ${ED} alice laptop`,
    `"bob@example.com,carol@example.com" NAMESPACES="cairn-plan",valid-after="20260101Z",valid-before="202701011230Z" ${EC}\r`,
  ].join("\n");
  const s = parseAllowedSigners(text, "allowed_signers");
  assertEquals(s.entries.length, 2);
  const [a, b] = s.entries;
  assertEquals([a!.line, a!.principals, a!.key.type], [3, ["alice@example.com"], "ssh-ed25519"]);
  assertEquals(b!.principals, ["bob@example.com", "carol@example.com"]);
  assertEquals(b!.namespaces, "cairn-plan");
  assertEquals(b!.validAfter, Date.UTC(2026, 0, 1) / 1000);
  assertEquals(b!.validBefore, Date.UTC(2027, 0, 1, 12, 30) / 1000);
});

Deno.test("parseAllowedSigners() refuses a malformed line with its line and column, never skipping it", () => {
  const good = `alice@example.com ${ED}`;
  const cases: Array<[string, string]> = [
    [
      `${good}\nbob@example.com namespaces=cairn-plan ${EC}`,
      "AllowedSignersInvalid allowed_signers:2:27",
    ],
    [
      `${good}\n\nbob@example.com frobnicate="x" ${EC}`,
      "AllowedSignersInvalid allowed_signers:3:17",
    ],
    [`bob@example.com ssh-ed25519 AAAA!!notbase64`, "AllowedSignersInvalid allowed_signers:1:29"],
    [`bob@example.com`, "AllowedSignersInvalid allowed_signers:1:16"],
    [`bob@example.com ssh-ed25519`, "AllowedSignersInvalid allowed_signers:1:28"],
    [
      `bob@example.com ${EC.replace("ecdsa-sha2-nistp256", "ssh-ed25519")}`,
      "AllowedSignersInvalid allowed_signers:1:29",
    ],
    [
      `bob@example.com valid-after="20260101Z",valid-after="20260102Z" ${EC}`,
      "AllowedSignersInvalid allowed_signers:1:41",
    ],
    [
      `bob@example.com valid-after="20260201Z",valid-before="20260101Z" ${EC}`,
      "AllowedSignersInvalid allowed_signers:1:17",
    ],
    [
      `bob@example.com valid-before="20261341Z" ${EC}`,
      "AllowedSignersInvalid allowed_signers:1:17",
    ],
    [
      `bob@example.com namespaces="cairn-plan", ${EC}`,
      "AllowedSignersInvalid allowed_signers:1:41",
    ],
    [`bob@example.com namespaces="cairn-plan ${EC}`, "AllowedSignersInvalid allowed_signers:1:17"],
    [`bob@example.com,,carol@example.com ${EC}`, "AllowedSignersInvalid allowed_signers:1:1"],
    [`bob@example.com rsa-sha3-9000 AAAA`, "AllowedSignersInvalid allowed_signers:1:17"],
  ];
  for (const [text, want] of cases) assertEquals(where(parseError(text)), want, text);
});

Deno.test("parseAllowedSigners() refuses cert-authority clearly", () => {
  const e = parseError(`# CA\n*@example.com namespaces="cairn-plan",cert-authority ${ED}`);
  assertEquals(where(e), "CertificateAuthorityUnsupported allowed_signers:2:39");
  assert(e.message.includes("cert-authority"));
});

Deno.test("parseSshTime() accepts ssh-keygen's three lengths and refuses impossible dates", () => {
  assertEquals(parseSshTime("20260301"), Date.UTC(2026, 2, 1) / 1000);
  assertEquals(parseSshTime("202603011205Z"), Date.UTC(2026, 2, 1, 12, 5) / 1000);
  assertEquals(parseSshTime("20260301120559z"), Date.UTC(2026, 2, 1, 12, 5, 59) / 1000);
  for (const bad of ["2026031", "20260230", "2026030112", "20260301250000Z", "2026-03-01", ""]) {
    assertEquals(parseSshTime(bad), undefined, bad);
  }
});

Deno.test("matchPatternList() follows ssh_config patterns with negation", () => {
  assert(matchPatternList("alice@example.com", "*@example.com"));
  assert(matchPatternList("bob@example.com", ["b?b@example.com"]));
  assert(!matchPatternList("mallory@example.com", "*@example.com,!mallory@*"));
  assert(!matchPatternList("alice@example.org", "*@example.com"));
  assert(!matchPatternList("Alice@example.com", "alice@example.com"));
  assert(matchPatternList("cairn-plan", "git,cairn-*"));
});

Deno.test("findAllowedSigner() takes the first line that passes, and reports validity over absence", () => {
  const key = parsePublicKeyBlob(decodeBase64(ED.split(" ")[1]!));
  const s = parseAllowedSigners(
    [
      `alice@example.com valid-before="20260101Z" ${ED}`,
      `alice@example.com namespaces="git" ${ED}`,
      `bob@example.com ${ED}`,
    ].join("\n"),
    "as",
  );
  const at = Date.UTC(2026, 5, 1);
  const r1 = findAllowedSigner(s, { key, namespace: "cairn-plan", atMs: at });
  assertEquals(r1.ok && r1.entry.line, 3);
  const r2 = findAllowedSigner(s, {
    key,
    namespace: "cairn-plan",
    atMs: at,
    principal: "alice@example.com",
  });
  assertEquals(r2.ok ? "ok" : r2.reason, "SignerOutsideValidity");
  const r3 = findAllowedSigner(s, {
    key,
    namespace: "cairn-plan",
    atMs: at,
    principal: "carol@example.com",
  });
  assertEquals(r3.ok ? "ok" : r3.reason, "SignerNotTrusted");
});

Deno.test("parseAllowedSigners() keeps throwing CairnError, not a generic error, for a bad key blob", () => {
  throws(() => parseAllowedSigners("x ssh-ed25519 AAAAC3NzaC1lZDI1NTE5", "f"), CairnError);
});
