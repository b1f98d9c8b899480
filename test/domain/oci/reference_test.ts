import { deepStrictEqual as assertEquals, throws } from "node:assert/strict";
import { parseImageReference, parsePlatform } from "../../../src/domain/oci/reference.ts";
import { selectPlatform } from "../../../src/domain/oci/manifest.ts";
import { CairnError } from "../../../src/domain/errors.ts";

const SCHEMATIC = "30684e2ddd0b9d61be817efe9f71ba839dc0e7610d8bc111fe7f70c6b29db08b";
const DIGEST = "sha256:27d61ccaa31333b22b54e0bc1653c6b54a2a56f3354050aac6eeca584cf196b1";

Deno.test("parseImageReference() reads an Image Factory installer with tag and digest", () => {
  assertEquals(
    parseImageReference(`factory.talos.dev/metal-installer/${SCHEMATIC}:v1.14.2@${DIGEST}`),
    {
      registry: "factory.talos.dev",
      repository: `metal-installer/${SCHEMATIC}`,
      tag: "v1.14.2",
      digest: DIGEST,
    },
  );
  assertEquals(parseImageReference("127.0.0.1:5000/a/b:v1").registry, "127.0.0.1:5000");
  assertEquals(parseImageReference("localhost/a@" + DIGEST).tag, undefined);
});

Deno.test("parseImageReference() refuses references that would need a default", () => {
  for (
    const ref of [
      "installer:v1.14.2",
      "factory.talos.dev/installer",
      "ghcr.io/A/b:v1",
      `x.io/a@sha256:abc`,
    ]
  ) {
    throws(
      () => parseImageReference(ref),
      (e: unknown) => e instanceof CairnError && e.reason === "ImageReferenceInvalid",
    );
  }
});

Deno.test("selectPlatform() matches os, architecture and variant exactly", () => {
  const entries = [
    { digest: "sha256:a", mediaType: "", platform: parsePlatform("linux/amd64") },
    { digest: "sha256:b", mediaType: "", platform: parsePlatform("linux/arm64/v8") },
  ];
  assertEquals(selectPlatform(entries, parsePlatform("linux/amd64"))?.digest, "sha256:a");
  assertEquals(selectPlatform(entries, parsePlatform("linux/arm64/v8"))?.digest, "sha256:b");
  assertEquals(selectPlatform(entries, parsePlatform("linux/arm64")), undefined);
  assertEquals(selectPlatform(entries, parsePlatform("linux/amd64/v3")), undefined);
  throws(() => parsePlatform("amd64"), CairnError);
});
