import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { parseWwwAuthenticate } from "../../../src/domain/oci/www_authenticate.ts";

Deno.test("parseWwwAuthenticate() reads a registry bearer challenge", () => {
  assertEquals(
    parseWwwAuthenticate(
      'Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull,push"',
    ),
    {
      scheme: "bearer",
      params: {
        realm: "https://auth.example/token",
        service: "registry.example",
        scope: "repository:a/b:pull,push",
      },
    },
  );
});

Deno.test("parseWwwAuthenticate() handles escapes, bare tokens, spacing and key case", () => {
  assertEquals(parseWwwAuthenticate('Bearer  Realm = "a\\"b" , error=insufficient_scope'), {
    scheme: "bearer",
    params: { realm: 'a"b', error: "insufficient_scope" },
  });
  assertEquals(parseWwwAuthenticate('Basic realm="r"')?.scheme, "basic");
  assertEquals(parseWwwAuthenticate(""), undefined);
});
