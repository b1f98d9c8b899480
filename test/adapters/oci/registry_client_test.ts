import { deepStrictEqual as assertEquals, ok as assert, rejects } from "node:assert/strict";
import { resolveImage } from "../../../src/adapters/oci/registry_client.ts";
import { CairnError } from "../../../src/domain/errors.ts";
import type { Reason } from "../../../src/domain/reasons.ts";
import { type Descriptor, pushImage, pushIndex, startRegistry } from "./registry_helpers.ts";

const AMD64 = { os: "linux", architecture: "amd64" };
const ARM64 = { os: "linux", architecture: "arm64", variant: "v8" };
const REPO = "siderolabs/installer";

function refusedWith(reason: Reason) {
  return (e: unknown) => {
    assert(e instanceof CairnError, String(e));
    assertEquals(e.reason, reason, e.message);
    return true;
  };
}

/** A token-issuing front for the registry that can also lie about Docker-Content-Digest. */
function authProxy(upstream: string, lie: { digest: boolean }) {
  const token = "test-token-0123";
  const seen: string[] = [];
  const server: Deno.HttpServer<Deno.NetAddr> = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    onListen: () => {},
  }, async (req): Promise<Response> => {
    const url = new URL(req.url);
    if (url.pathname === "/token") {
      seen.push(`token ${url.searchParams.get("service")} ${url.searchParams.get("scope")}`);
      return Response.json({ token });
    }
    if (req.headers.get("authorization") !== `Bearer ${token}`) {
      const realm: string = `http://127.0.0.1:${server.addr.port}/token`;
      return new Response(JSON.stringify({ errors: [{ code: "UNAUTHORIZED" }] }), {
        status: 401,
        headers: {
          "www-authenticate":
            `Bearer realm="${realm}",service="cairn-test",scope="repository:${REPO}:pull"`,
        },
      });
    }
    const res = await fetch(upstream + url.pathname, { headers: req.headers });
    const headers = new Headers(res.headers);
    if (lie.digest) headers.set("docker-content-digest", `sha256:${"0".repeat(64)}`);
    return new Response(await res.arrayBuffer(), { status: res.status, headers });
  });
  return { host: `127.0.0.1:${server.addr.port}`, seen, stop: () => server.shutdown() };
}

Deno.test("resolveImage() against a real docker-registry on loopback", async (t) => {
  const registry = await startRegistry();
  try {
    const { base, host } = registry;
    const amd = await pushImage(base, REPO, AMD64);
    const arm = await pushImage(base, REPO, ARM64);
    const index: Descriptor = await pushIndex(base, REPO, "v1.14.2", [
      { descriptor: amd, platform: AMD64 },
      { descriptor: arm, platform: ARM64 },
    ]);
    const single = await pushImage(base, REPO, AMD64, "amd64-only");
    const opts = { insecureHttp: true };

    await t.step("an index resolves to a different digest per platform", async () => {
      const a = await resolveImage(`${host}/${REPO}:v1.14.2`, AMD64, opts);
      const b = await resolveImage(`${host}/${REPO}:v1.14.2`, ARM64, opts);
      assertEquals([a.digest, a.indexDigest, a.platform], [
        amd.digest,
        index.digest,
        "linux/amd64",
      ]);
      assertEquals([b.digest, b.platform], [arm.digest, "linux/arm64/v8"]);
      assertEquals(a.pinned, `${host}/${REPO}@${amd.digest}`);
    });

    await t.step("a tag pinned with the index digest resolves through the digest", async () => {
      const r = await resolveImage(`${host}/${REPO}:v1.14.2@${index.digest}`, ARM64, opts);
      assertEquals(r.digest, arm.digest);
    });

    await t.step("a missing tag or repository is ImageNotFound, never another tag", async () => {
      await rejects(
        resolveImage(`${host}/${REPO}:v9.9.9`, AMD64, opts),
        refusedWith("ImageNotFound"),
      );
      await rejects(
        resolveImage(`${host}/siderolabs/nothing:v1.14.2`, AMD64, opts),
        refusedWith("ImageNotFound"),
      );
      await rejects(
        resolveImage(`${host}/${REPO}@sha256:${"1".repeat(64)}`, AMD64, opts),
        refusedWith("ImageNotFound"),
      );
    });

    await t.step("a platform absent from the index is ImagePlatformMissing", async () => {
      const ref = `${host}/${REPO}:v1.14.2`;
      await rejects(
        resolveImage(ref, { os: "linux", architecture: "s390x" }, opts),
        refusedWith("ImagePlatformMissing"),
      );
      await rejects(
        resolveImage(ref, { os: "linux", architecture: "arm64" }, opts),
        refusedWith("ImagePlatformMissing"),
      );
    });

    await t.step("a single-platform image is checked against its config", async () => {
      const r = await resolveImage(`${host}/${REPO}:amd64-only`, AMD64, opts);
      assertEquals([r.digest, r.indexDigest], [single.digest, undefined]);
      await rejects(
        resolveImage(`${host}/${REPO}:amd64-only`, ARM64, opts),
        refusedWith("ImagePlatformMissing"),
      );
    });

    await t.step("bearer token auth is followed through WWW-Authenticate", async () => {
      const proxy = authProxy(base, { digest: false });
      try {
        const r = await resolveImage(`${proxy.host}/${REPO}:v1.14.2`, AMD64, opts);
        assertEquals(r.digest, amd.digest);
        assertEquals(proxy.seen, [`token cairn-test repository:${REPO}:pull`]);
      } finally {
        await proxy.stop();
      }
    });

    await t.step(
      "a Docker-Content-Digest that does not match the body is DigestMismatch",
      async () => {
        const proxy = authProxy(base, { digest: true });
        try {
          await rejects(
            resolveImage(`${proxy.host}/${REPO}:v1.14.2`, AMD64, opts),
            refusedWith("DigestMismatch"),
          );
        } finally {
          await proxy.stop();
        }
      },
    );

    await t.step("an unreachable registry is RegistryUnreadable", async () => {
      const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
      const port = (l.addr as Deno.NetAddr).port;
      l.close();
      await rejects(
        resolveImage(`127.0.0.1:${port}/${REPO}:v1.14.2`, AMD64, opts),
        refusedWith("RegistryUnreadable"),
      );
    });
  } finally {
    await registry.stop();
  }
});

Deno.test("resolveImage() refuses plain HTTP to a non-loopback registry", async () => {
  await rejects(
    resolveImage("factory.talos.dev/installer/abc:v1.14.2", AMD64, { insecureHttp: true }),
    refusedWith("ConfigInvalid"),
  );
});
