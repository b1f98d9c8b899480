/**
 * Hostile SSHSIG blobs, built by re-encoding real ssh-keygen signatures: cairn must refuse each
 * with a stable reason, and ssh-keygen must refuse the same bytes too.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { generateKey, signBytes, sshKeygenVerify } from "../../../src/adapters/ssh/ssh_keygen.ts";
import {
  dearmorSshSignature,
  parseSshSignatureBlob,
  type SshSignatureBlob,
  verifySshSignature,
} from "../../../src/domain/trust/sshsig.ts";
import {
  concatBytes,
  encodeString,
  encodeUint32,
  SshReader,
} from "../../../src/domain/trust/ssh_wire.ts";

const MESSAGE = new TextEncoder().encode("kind: TalosUpgrade\n");

function armor(blob: Uint8Array): string {
  let bin = "";
  for (const b of blob) bin += String.fromCharCode(b);
  const b64 = btoa(bin).match(/.{1,70}/g)!.join("\n");
  return `-----BEGIN SSH SIGNATURE-----\n${b64}\n-----END SSH SIGNATURE-----\n`;
}

function encode(
  s: SshSignatureBlob,
  over: {
    preamble?: string;
    version?: number;
    publicKey?: Uint8Array;
    namespace?: string;
    hashAlgorithm?: string;
    signature?: Uint8Array;
  },
) {
  return concatBytes([
    new TextEncoder().encode(over.preamble ?? "SSHSIG"),
    encodeUint32(over.version ?? s.version),
    encodeString(over.publicKey ?? s.publicKey.blob),
    encodeString(over.namespace ?? s.namespace),
    encodeString(s.reserved),
    encodeString(over.hashAlgorithm ?? s.hashAlgorithm),
    encodeString(over.signature ?? s.signature),
  ]);
}

Deno.test("verifySshSignature() refuses trailing data, version 2, empty namespace, ssh-rsa SHA-1 and mislabelled parts like ssh-keygen", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cairn-sshsig-blob-" });
  try {
    const [edPub, rsaPub, ecPub] = await Promise.all([
      generateKey("ed25519", `${dir}/ed`),
      generateKey("rsa", `${dir}/rsa`),
      generateKey("ecdsa-p256", `${dir}/ec`),
    ]);
    const [edSig, rsaSig, ecSig] = await Promise.all([
      signBytes(MESSAGE, { key: `${dir}/ed` }),
      signBytes(MESSAGE, { key: `${dir}/rsa` }),
      signBytes(MESSAGE, { key: `${dir}/ec` }),
    ]);
    const ed = parseSshSignatureBlob(dearmorSshSignature(edSig));
    const rsa = parseSshSignatureBlob(dearmorSshSignature(rsaSig));
    const ec = parseSshSignatureBlob(dearmorSshSignature(ecSig));
    const inner = new SshReader(rsa.signature);
    assertEquals(inner.text(), "rsa-sha2-512");
    const sha1Named = concatBytes([encodeString("ssh-rsa"), encodeString(inner.string())]);
    // A valid ed25519 signature under another algorithm's name.
    const edInner = new SshReader(ed.signature);
    assertEquals(edInner.text(), "ssh-ed25519");
    const edRenamed = concatBytes([encodeString("rsa-sha2-256"), encodeString(edInner.string())]);
    // A P-256 key whose curve field names P-384.
    const ecCurveLies = concatBytes([
      encodeString("ecdsa-sha2-nistp256"),
      encodeString("nistp384"),
      encodeString(ec.publicKey.parts[1]!),
    ]);
    const cases: Array<[string, string, Uint8Array, string]> = [
      ["control", "ok", encode(ed, {}), edPub],
      ["ecdsa control", "ok", encode(ec, {}), ecPub],
      ["preamble not SSHSIG", "SignatureMalformed", encode(ed, { preamble: "SSHSIH" }), edPub],
      ["sha384 message hash", "UnsupportedKeyType", encode(ed, { hashAlgorithm: "sha384" }), edPub],
      [
        "ed25519 signature named otherwise",
        "SignatureInvalid",
        encode(ed, { signature: edRenamed }),
        edPub,
      ],
      [
        "ecdsa curve contradicts type",
        "SignatureMalformed",
        encode(ec, { publicKey: ecCurveLies }),
        ecPub,
      ],
      [
        "trailing data",
        "SignatureMalformed",
        concatBytes([encode(ed, {}), new Uint8Array([0])]),
        edPub,
      ],
      ["version 2", "SignatureMalformed", encode(ed, { version: 2 }), edPub],
      ["empty namespace", "SignatureMalformed", encode(ed, { namespace: "" }), edPub],
      [
        "ssh-rsa SHA-1 signature",
        "UnsupportedKeyType",
        encode(rsa, { signature: sha1Named }),
        rsaPub,
      ],
    ];
    await Deno.writeFile(`${dir}/msg`, MESSAGE);
    for (const [name, want, blob, pub] of cases) {
      const got = await verifySshSignature(armor(blob), MESSAGE, "cairn-plan");
      assertEquals(got.ok ? "ok" : got.reason, want, name);
      await Deno.writeTextFile(`${dir}/${name}.sig`, armor(blob));
      await Deno.writeTextFile(`${dir}/${name}.allowed`, `a@example.com ${pub}\n`);
      const ssh = await sshKeygenVerify(MESSAGE, {
        allowedSigners: `${dir}/${name}.allowed`,
        principal: "a@example.com",
        signatureFile: `${dir}/${name}.sig`,
        namespace: "cairn-plan",
      });
      assertEquals(
        ssh.code === 0,
        want === "ok",
        `${name}: ssh-keygen exit ${ssh.code} ${ssh.stderr}`,
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("dearmorSshSignature() accepts CRLF and any wrapping, and refuses a missing footer", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cairn-sshsig-armor-" });
  try {
    await generateKey("ed25519", `${dir}/k`);
    const armored = await signBytes(MESSAGE, { key: `${dir}/k` });
    const body = armored.split("\n").slice(1, -2).join("");
    const rewrapped = `-----BEGIN SSH SIGNATURE-----\r\n${
      body.match(/.{1,13}/g)!.join("\r\n")
    }\r\n-----END SSH SIGNATURE-----\r\n`;
    assertEquals((await verifySshSignature(rewrapped, MESSAGE, "cairn-plan")).ok, true);
    const cut = armored.replace("-----END SSH SIGNATURE-----", "");
    const r = await verifySshSignature(cut, MESSAGE, "cairn-plan");
    assertEquals(r.ok ? "ok" : r.reason, "SignatureMalformed");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
