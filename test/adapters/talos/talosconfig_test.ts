import { deepStrictEqual as assertEquals, ok as assert, throws } from "node:assert/strict";
import process from "node:process";
import {
  normalizeKeyPem,
  parseTalosconfig,
  withDefaultPort,
} from "../../../src/adapters/talos/talosconfig.ts";
import { CairnError } from "../../../src/domain/errors.ts";

const pem = (label: string) =>
  `-----BEGIN ${label}-----\nMC4CAQAwBQYDK2VwBCIEIA==\n-----END ${label}-----\n`;
const b64 = (s: string) => btoa(s);

function config(ctx: Record<string, unknown>, current = "prod"): string {
  return JSON.stringify({ context: current, contexts: { prod: ctx } });
}

const FULL = {
  endpoints: ["10.0.0.11", "cp.example.com:50001", "fd00::1"],
  nodes: ["10.0.0.21"],
  ca: b64(pem("CERTIFICATE")),
  crt: b64(pem("CERTIFICATE")),
  key: b64(pem("ED25519 PRIVATE KEY")),
};

Deno.test("parseTalosconfig() decodes base64 PEM, adds port 50000 and relabels the Ed25519 key", () => {
  const ctx = parseTalosconfig(config(FULL), "talosconfig");
  assertEquals(ctx.name, "prod");
  assertEquals(ctx.endpoints, ["10.0.0.11:50000", "cp.example.com:50001", "[fd00::1]:50000"]);
  assertEquals(ctx.nodes, ["10.0.0.21"]);
  assert(ctx.caPem.startsWith("-----BEGIN CERTIFICATE-----"));
  assertEquals(ctx.keyPem, pem("PRIVATE KEY"));
});

Deno.test("normalizeKeyPem() leaves RSA, EC and PKCS#8 labels alone", () => {
  for (const label of ["RSA PRIVATE KEY", "EC PRIVATE KEY", "PRIVATE KEY"]) {
    assertEquals(normalizeKeyPem(pem(label)), pem(label));
  }
  assertEquals(withDefaultPort("[fd00::1]:6443"), "[fd00::1]:6443");
});

Deno.test("parseTalosconfig() refuses a missing context, endpoints or key with TalosconfigInvalid", () => {
  const cases: Array<[string, RegExp]> = [
    [config(FULL, "staging"), /no context named 'staging' \(contexts: prod\)/],
    [config({ ...FULL, endpoints: [] }), /has no endpoints/],
    [config({ ...FULL, key: undefined }), /has no key/],
    [config({ ...FULL, ca: b64("not pem") }), /ca is not base64 of a PEM block/],
  ];
  for (const [text, message] of cases) {
    throws(() => parseTalosconfig(text, "tc.yaml"), (e: unknown) => {
      assert(e instanceof CairnError);
      assertEquals(e.reason, "TalosconfigInvalid");
      assertEquals(e.location?.file, "tc.yaml");
      return message.test(e.message);
    });
  }
});

Deno.test("a talosconfig value the YAML parser warns about (an `!`-leading string read as a tag) is not printed", () => {
  const printed: string[] = [];
  // deno-lint-ignore no-console -- captures what the YAML parser would print
  const warn = process.emitWarning, consoleWarn = console.warn;
  process.emitWarning = ((w: unknown) => void printed.push(String(w))) as typeof warn;
  // deno-lint-ignore no-console -- captures what the YAML parser would print
  console.warn = (...a: unknown[]) => void printed.push(a.map(String).join(" "));
  try {
    try {
      parseTalosconfig("context: home\ncontexts:\n  home:\n    key: !FAKEKEY-s3cr3t x\n", "tc");
    } catch (e) {
      assert(e instanceof CairnError && !e.message.includes("s3cr3t"), String(e));
    }
  } finally {
    process.emitWarning = warn;
    // deno-lint-ignore no-console -- captures what the YAML parser would print
    console.warn = consoleWarn;
  }
  assert(!printed.some((p) => p.includes("s3cr3t")), printed.join("\n"));
});
