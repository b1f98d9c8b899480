import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { scanForSecrets } from "../../../src/domain/evidence/secret_scan.ts";

Deno.test("scanForSecrets() recognises key blocks, provider tokens and credential fields", () => {
  const cases: Array<[string, string]> = [
    ["-----BEGIN OPENSSH PRIVATE KEY-----\nabc", "private-key-block"],
    ["-----BEGIN EC PRIVATE KEY-----", "private-key-block"],
    [`x ghp_${"A1b2".repeat(9)} y`, "github-token"],
    ["AKIAIOSFODNN7EXAMPLE", "aws-access-key-id"],
    ["    client-key-data: LS0tLS1CRUdJTi", "kubeconfig-client-key"],
    [`token: ${"eyJhbGciOiJIUzI1NiJ9".repeat(2)}`, "token-field"],
  ];
  for (const [text, kind] of cases) assertEquals(scanForSecrets(text)[0]?.kind, kind, text);
});

Deno.test("scanForSecrets() leaves ordinary evidence text alone", () => {
  const text = "sha256 26f6262e00db2bbfa22eac39350cdb4da92e6cb6ebb0f6e629759466abc05037 matches; " +
    "token: none; -----BEGIN PUBLIC KEY-----; in upgradeViaLifecycleService: pullImage@10";
  assertEquals(scanForSecrets(text), []);
});

Deno.test("scanForSecrets() findings carry kind and offset, never the secret", () => {
  const f = scanForSecrets(`ok AKIAIOSFODNN7EXAMPLE`);
  assertEquals(f, [{ kind: "aws-access-key-id", offset: 3 }]);
});
