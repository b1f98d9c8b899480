/**
 * Conformance: cairn's native SSHSIG + allowed_signers verdict must equal `ssh-keygen -Y verify`
 * for every key type × case. Keys and signatures are made with the real ssh-keygen at test time.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import {
  generateKey,
  signBytes,
  sshKeygenVerify,
  type SshKeyKind,
} from "../../../src/adapters/ssh/ssh_keygen.ts";
import {
  findAllowedSigner,
  parseAllowedSigners,
} from "../../../src/domain/trust/allowed_signers.ts";
import {
  dearmorSshSignature,
  parseSshSignatureBlob,
  verifySshSignature,
} from "../../../src/domain/trust/sshsig.ts";

const NS = "cairn-plan";
const PRINCIPAL = "alice@example.com";
const VERIFY_TIME = "20260301120000Z";
const AT_MS = Date.UTC(2026, 2, 1, 12, 0, 0);

interface Variant {
  readonly name: string;
  readonly kind: SshKeyKind;
  readonly hash?: "sha256" | "sha512";
}

const VARIANTS: readonly Variant[] = [
  { name: "ed25519", kind: "ed25519" },
  { name: "ecdsa-p256", kind: "ecdsa-p256" },
  { name: "ecdsa-p384", kind: "ecdsa-p384" },
  { name: "ecdsa-p521", kind: "ecdsa-p521" },
  { name: "rsa/sha512", kind: "rsa" },
  { name: "rsa/sha256", kind: "rsa", hash: "sha256" },
];

/** One case: which signature, message and allowed_signers line to use, and the expected verdict. */
interface Case {
  readonly name: string;
  readonly sig: "good" | "otherNamespace";
  readonly tamper: boolean;
  readonly line: (own: string, stranger: string) => string;
  readonly expect:
    | "ok"
    | "SignatureInvalid"
    | "SignatureNamespaceMismatch"
    | "SignerNotTrusted"
    | "SignerOutsideValidity";
}

const CASES: readonly Case[] = [
  {
    name: "valid",
    sig: "good",
    tamper: false,
    line: (k) => `${PRINCIPAL} valid-after="20260101Z",valid-before="20270101Z" ${k}`,
    expect: "ok",
  },
  {
    name: "tampered byte",
    sig: "good",
    tamper: true,
    line: (k) => `${PRINCIPAL} ${k}`,
    expect: "SignatureInvalid",
  },
  {
    name: "wrong namespace",
    sig: "otherNamespace",
    tamper: false,
    line: (k) => `${PRINCIPAL} ${k}`,
    expect: "SignatureNamespaceMismatch",
  },
  {
    name: "unknown signer",
    sig: "good",
    tamper: false,
    line: (_k, s) => `${PRINCIPAL} ${s}`,
    expect: "SignerNotTrusted",
  },
  {
    name: "expired window",
    sig: "good",
    tamper: false,
    line: (k) => `${PRINCIPAL} valid-before="20260201Z" ${k}`,
    expect: "SignerOutsideValidity",
  },
  {
    name: "not yet valid",
    sig: "good",
    tamper: false,
    line: (k) => `${PRINCIPAL} valid-after="20260401000000Z" ${k}`,
    expect: "SignerOutsideValidity",
  },
  {
    name: "namespaces= excludes cairn-plan",
    sig: "good",
    tamper: false,
    line: (k) => `${PRINCIPAL} namespaces="git,file" ${k}`,
    expect: "SignerNotTrusted",
  },
  {
    name: "valid-before equal to verify time is still valid",
    sig: "good",
    tamper: false,
    line: (k) => `${PRINCIPAL} namespaces="cairn-*",valid-before="${VERIFY_TIME}" ${k}`,
    expect: "ok",
  },
  {
    name: "wildcard principal line",
    sig: "good",
    tamper: false,
    line: (k) => `"*@example.com,!mallory@example.com" ${k}`,
    expect: "ok",
  },
];

const MESSAGE = new TextEncoder().encode(
  "apiVersion: cairn.dev/v1\nkind: TalosUpgrade\nmetadata:\n  author: alice@example.com\n",
);

function tamper(bytes: Uint8Array): Uint8Array {
  const out = bytes.slice();
  out[17] = out[17]! ^ 0x01;
  return out;
}

async function cairnVerdict(
  armored: string,
  message: Uint8Array,
  allowed: string,
): Promise<string> {
  const sig = await verifySshSignature(armored, message, NS);
  if (!sig.ok) return sig.reason;
  const signers = parseAllowedSigners(allowed, "allowed_signers");
  const found = findAllowedSigner(signers, {
    key: sig.publicKey,
    namespace: NS,
    atMs: AT_MS,
    principal: PRINCIPAL,
  });
  return found.ok ? "ok" : found.reason;
}

Deno.test("verifySshSignature() and allowed_signers agree with ssh-keygen -Y verify for every key type and case", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cairn-sshsig-" });
  try {
    const kinds = [...new Set(VARIANTS.map((v) => v.kind))];
    const pubs = new Map<string, string>();
    await Promise.all([
      ...kinds.map(async (k) => pubs.set(k, await generateKey(k, `${dir}/${k}`))),
      generateKey("ed25519", `${dir}/stranger`).then((p) => pubs.set("stranger", p)),
    ]);
    await Deno.writeFile(`${dir}/message`, MESSAGE);
    await Deno.writeFile(`${dir}/tampered`, tamper(MESSAGE));
    const sigs = new Map<string, string>();
    await Promise.all(
      VARIANTS.flatMap((v) =>
        (["good", "otherNamespace"] as const).map(async (which) => {
          const ns = which === "good" ? NS : "git";
          const armored = await signBytes(MESSAGE, {
            key: `${dir}/${v.kind}`,
            namespace: ns,
            ...(v.hash ? { hashAlgorithm: v.hash } : {}),
          });
          const file = `${dir}/${v.name.replace("/", "-")}.${which}.sig`;
          await Deno.writeTextFile(file, armored);
          sigs.set(`${v.name}:${which}`, file);
        })
      ),
    );
    const rows = await Promise.all(VARIANTS.flatMap((v) =>
      CASES.map(async (c, ci) => {
        const allowed = c.line(pubs.get(v.kind)!, pubs.get("stranger")!) + "\n";
        const allowedFile = `${dir}/${v.name.replace("/", "-")}.${ci}.allowed`;
        await Deno.writeTextFile(allowedFile, allowed);
        const sigFile = sigs.get(`${v.name}:${c.sig}`)!;
        const message = c.tamper ? tamper(MESSAGE) : MESSAGE;
        const ssh = await sshKeygenVerify(message, {
          allowedSigners: allowedFile,
          principal: PRINCIPAL,
          signatureFile: sigFile,
          namespace: NS,
          verifyTime: VERIFY_TIME,
        });
        const cairn = await cairnVerdict(await Deno.readTextFile(sigFile), message, allowed);
        return {
          variant: v.name,
          case: c.name,
          expect: c.expect,
          cairn,
          sshOk: ssh.code === 0,
          ssh,
        };
      })
    ));
    assertEquals(rows.length, VARIANTS.length * CASES.length);
    for (const r of rows) {
      const label = `${r.variant} / ${r.case}`;
      assertEquals(
        r.cairn === "ok",
        r.sshOk,
        `${label}: cairn=${r.cairn} ssh-keygen exit ${r.ssh.code} ${r.ssh.stderr}`,
      );
      assertEquals(r.cairn, r.expect, label);
      if (r.sshOk) {
        assert(r.ssh.stdout.startsWith(`Good "${NS}" signature for ${PRINCIPAL}`), label);
      }
    }
    // The hash algorithm in the blob follows -O hashalg (default sha512).
    const rsa256 = parseSshSignatureBlob(
      dearmorSshSignature(await Deno.readTextFile(sigs.get("rsa/sha256:good")!)),
    );
    const rsa512 = parseSshSignatureBlob(
      dearmorSshSignature(await Deno.readTextFile(sigs.get("rsa/sha512:good")!)),
    );
    assertEquals([rsa256.hashAlgorithm, rsa512.hashAlgorithm], ["sha256", "sha512"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
