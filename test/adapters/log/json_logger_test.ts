import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { JsonLogger } from "../../../src/adapters/log/json_logger.ts";
import { redactText, redactUrl } from "../../../src/adapters/log/redact.ts";
import type { LogFields } from "../../../src/ports/logger.ts";
import { SimClock } from "../../../src/sim/clock.ts";

const T0 = Date.UTC(2026, 0, 2, 3, 4, 5);

function capture(level?: "debug" | "info" | "warn" | "error") {
  const lines: string[] = [];
  const clock = new SimClock(T0);
  const opts = level ? { level } : {};
  const log = new JsonLogger({ write: (l) => lines.push(l), clock, ...opts });
  return { lines, clock, log, text: () => lines.join("") };
}

// Throwaway key material made for this test only; it secures nothing.
const PEM_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj" +
  "MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu";
const PEM = `-----BEGIN PRIVATE KEY-----\n${PEM_BODY}\n-----END PRIVATE KEY-----\n`;
const OPENSSH =
  `-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n` +
  `-----END OPENSSH PRIVATE KEY-----`;
const TOKEN = "s3cr3tT0kenValue9f8e7d";
const PASSWORD = "hunter2-Pa55word";

Deno.test("JsonLogger writes one JSON line with time from the clock, level, msg and fields", async () => {
  const { lines, clock, log } = capture();
  await clock.advance(1500);
  log.info("plan found", { planName: "talos-v1.14.2", count: 3, node: "worker-1" });
  assertEquals(lines.length, 1);
  assert(lines[0]!.endsWith("\n"));
  assertEquals(JSON.parse(lines[0]!), {
    time: "2026-01-02T03:04:06.500Z",
    level: "info",
    msg: "plan found",
    planName: "talos-v1.14.2",
    node: "worker-1",
    count: 3,
  });
  // Vocabulary order, whatever the call-site order was.
  assert(lines[0]!.indexOf('"planName"') < lines[0]!.indexOf('"node"'));
});

Deno.test("JsonLogger filters below its level", () => {
  const { lines, log } = capture("warn");
  log.debug("a");
  log.info("b");
  log.warn("c");
  log.error("d");
  assertEquals(lines.map((l) => JSON.parse(l).msg), ["c", "d"]);
});

Deno.test("JsonLogger never writes a secret from a field or the message", async (t) => {
  const cases: Array<[string, string, LogFields | undefined]> = [
    ["PEM key in error field", PEM_BODY, { error: `load failed: ${PEM}` }],
    ["OpenSSH key in message", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ", undefined],
    ["bearer token in error", TOKEN, { error: `401 for Authorization: Bearer ${TOKEN}` }],
    ["userinfo in url field", PASSWORD, { url: `https://alice:${PASSWORD}@git.example.com/p.git` }],
    ["userinfo in message", PASSWORD, undefined],
    ["password= in error", PASSWORD, { error: `dial failed password=${PASSWORD} host=x` }],
    ["token query in url", TOKEN, { url: `libsql://db.example.com?authToken=${TOKEN}` }],
    ["github token", "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2", {
      error: "ghp_a1B2c3D4e5F6g7H8i9J0k1L2 rejected",
    }],
    ["base64 blob", "QUFB".repeat(60), { error: `payload ${"QUFB".repeat(60)}` }],
  ];
  for (const [name, secret, fields] of cases) {
    await t.step(name, () => {
      const { text, log } = capture();
      const msg = name === "OpenSSH key in message"
        ? `read key ${OPENSSH}`
        : name === "userinfo in message"
        ? `fetch https://bob:${PASSWORD}@example.com/repo failed`
        : "operation failed";
      log.error(msg, fields);
      assert(!text().includes(secret), `${name}: secret leaked in ${text()}`);
      assert(!text().includes("PRIVATE KEY-----"), `${name}: key marker leaked`);
      JSON.parse(text()); // still one valid JSON line
    });
  }
});

Deno.test("JsonLogger keeps the non-secret parts of a redacted URL and message", () => {
  const { lines, log } = capture();
  log.warn("fetch failed", { url: `https://alice:${PASSWORD}@git.example.com/plans.git` });
  const e = JSON.parse(lines[0]!);
  assertEquals(e.url, "https://***@git.example.com/plans.git");
});

Deno.test("JsonLogger drops and counts field keys outside the vocabulary", () => {
  const { lines, log } = capture();
  const smuggled = { node: "cp-1", password: PASSWORD, runId: "r1" } as unknown as LogFields;
  log.info("step done", smuggled);
  const e = JSON.parse(lines[0]!);
  assertEquals(Object.keys(e).sort(), ["level", "msg", "node", "time"]);
  assertEquals(log.droppedFields, 2);
  assert(!lines[0]!.includes(PASSWORD));
});

Deno.test("JsonLogger rejects unknown field keys at type level", () => {
  const { log } = capture();
  // @ts-expect-error: `password` is not in the vocabulary.
  log.info("x", { password: "p" });
  // @ts-expect-error: numbers only for `attempt`.
  log.info("x", { attempt: "1" });
});

Deno.test("JsonLogger child() adds fields, call-site fields win, and children share the counter", () => {
  const { lines, log } = capture();
  const child = log.child({ planName: "p", node: "cp-1" });
  child.info("phase done", { node: "cp-2", phase: "drain" });
  child.info("x", { bogus: 1 } as unknown as LogFields);
  const e = JSON.parse(lines[0]!);
  assertEquals([e.planName, e.node, e.phase], ["p", "cp-2", "drain"]);
  assertEquals(log.droppedFields, 1);
});

Deno.test("JsonLogger turns a wrong-typed value into redacted text, never an object", () => {
  const { lines, log } = capture();
  const bad = {
    error: new Error(`boom https://u:${PASSWORD}@h/x`),
    count: "7",
  } as unknown as LogFields;
  log.error("failed", bad);
  const e = JSON.parse(lines[0]!);
  assertEquals(e.error, "boom https://***@h/x");
  assertEquals(e.count, "7");
});

Deno.test("JsonLogger clips long values after redaction", () => {
  const { lines, log } = capture();
  log.info("x", { error: "a ".repeat(5000) });
  const e = JSON.parse(lines[0]!);
  assert(e.error.length < 2100);
  assert(e.error.endsWith("more chars]"));
});

Deno.test("redactText() masks a PEM block missing its END line to the end of the text", () => {
  const out = redactText(`key: -----BEGIN RSA PRIVATE KEY-----\n${PEM_BODY}`);
  assertEquals(out, "key: [REDACTED PRIVATE KEY]");
});

Deno.test("redactText() leaves ordinary operational text alone", () => {
  const s = "drain of worker-1 waits for pdb default/web (digest 27d61cca) at v1.14.2";
  assertEquals(redactText(s), s);
  const sha = "sha256:27d61ccaa31333b22b54e0bc1653c6b54a2a56f3354050aac6eeca584cf196b1";
  assertEquals(redactText(sha), sha);
});

Deno.test("redactUrl() masks userinfo and secret query values but keeps the rest", () => {
  assertEquals(
    redactUrl("https://u:p@h.example/a?x=1&token=abc"),
    "https://***@h.example/a?x=1&token=***",
  );
  assertEquals(redactUrl("git://127.0.0.1:9418/plans.git"), "git://127.0.0.1:9418/plans.git");
  assertEquals(redactUrl("not a url password=abc"), "not a url password=***");
});
