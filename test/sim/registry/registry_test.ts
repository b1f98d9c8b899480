/**
 * The twin's registry: the installer images a cluster description declares, served over the
 * distribution API on loopback, resolved by cairn's real OCI client through a mirror mapping.
 * The shipped plan's installer reference must resolve against the home-ops twin exactly as
 * pinned (index digest checked against the bytes), per platform, and nothing else may.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { parse } from "yaml";
import { resolveImage } from "../../../src/adapters/oci/registry_client.ts";
import { CairnError } from "../../../src/domain/errors.ts";
import { ClusterDescriptionSchema } from "../../../src/sim/cluster_description.ts";
import {
  buildInstallerContent,
  pinnedReferences,
} from "../../../src/sim/registry/installer_images.ts";
import { startRegistrySim } from "../../../src/sim/registry/server.ts";

const ROOT = new URL("../../../", import.meta.url);

async function homeOpsImages(): Promise<string[]> {
  const text = await Deno.readTextFile(new URL("fixtures/clusters/home-ops.yaml", ROOT));
  return ClusterDescriptionSchema.parse(parse(text)).spec.installerImages;
}

async function planInstaller(): Promise<string> {
  const plan = parse(await Deno.readTextFile(new URL("plans/talos-v1.14.2.yaml", ROOT)));
  return plan.spec.hops[0].installer.image as string;
}

async function reason(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    return e instanceof CairnError ? e.reason : String(e);
  }
  return "resolved";
}

Deno.test("the shipped plan's installer reference is one the home-ops twin serves, byte for byte", async () => {
  const content = buildInstallerContent(await homeOpsImages());
  assert(pinnedReferences(content).includes(await planInstaller()));
  // The bytes, and so the digests, are a function of the reference alone.
  assertEquals(
    pinnedReferences(buildInstallerContent(await homeOpsImages())),
    pinnedReferences(content),
  );
});

Deno.test("cairn's OCI client resolves the plan's installer per platform against the twin's registry", async () => {
  const reg = await startRegistrySim(buildInstallerContent(await homeOpsImages()));
  try {
    const ref = await planInstaller();
    const opts = { mirrors: reg.mirrors };
    const amd = await resolveImage(ref, { os: "linux", architecture: "amd64" }, opts);
    const arm = await resolveImage(ref, { os: "linux", architecture: "arm64" }, opts);
    assertEquals(amd.indexDigest, ref.slice(ref.indexOf("@") + 1));
    assertEquals(arm.indexDigest, amd.indexDigest);
    assert(amd.digest !== arm.digest, "one manifest per platform");
    assertEquals(amd.registry, "factory.talos.dev", "the mirror does not rename the image");
    assert(amd.pinned.startsWith("factory.talos.dev/metal-installer/"));
    // By tag alone it resolves to the same manifest; by the platform digest, to itself.
    const byTag = ref.slice(0, ref.indexOf("@"));
    assertEquals(
      (await resolveImage(byTag, { os: "linux", architecture: "amd64" }, opts)).digest,
      amd.digest,
    );
    assertEquals(
      (await resolveImage(amd.pinned, { os: "linux", architecture: "amd64" }, opts)).digest,
      amd.digest,
    );
    // What the twin does not hold is absent, never substituted.
    assertEquals(
      await reason(
        resolveImage(
          byTag.replace(":v1.14.2", ":v1.14.3"),
          { os: "linux", architecture: "amd64" },
          opts,
        ),
      ),
      "ImageNotFound",
    );
    assertEquals(
      await reason(resolveImage(ref, { os: "linux", architecture: "riscv64" }, opts)),
      "ImagePlatformMissing",
    );
    const wrong = ref.replace(/@sha256:[0-9a-f]{64}$/, "@sha256:" + "0".repeat(64));
    assertEquals(
      await reason(resolveImage(wrong, { os: "linux", architecture: "amd64" }, opts)),
      "ImageNotFound",
    );
    assertEquals(reg.stats.refusedWrites, 0);
    const put = await fetch(`${reg.url}/v2/metal-installer/x/manifests/v1`, {
      method: "PUT",
      body: "{}",
    });
    await put.body?.cancel();
    assertEquals([put.status, reg.stats.refusedWrites], [405, 1]);
  } finally {
    await reg.stop();
  }
});

Deno.test("a mirror is https, or plain http only on loopback", async () => {
  const ref = await planInstaller();
  const amd = { os: "linux", architecture: "amd64" };
  for (
    const mirror of [
      "http://registry.example:5000",
      "ftp://127.0.0.1",
      "http://127.0.0.1:1/v2",
      "not a url",
    ]
  ) {
    assertEquals(
      await reason(resolveImage(ref, amd, { mirrors: { "factory.talos.dev": mirror } })),
      "ConfigInvalid",
      mirror,
    );
  }
});

Deno.test("Talos on the twin pulls only what its registry holds; a missing tag or digest is NOT_FOUND and nothing is stored", async () => {
  const { startInprocTwin } = await import("../../../src/sim/inproc/cluster.ts");
  const text = await Deno.readTextFile(new URL("fixtures/clusters/home-ops.yaml", ROOT));
  const twin = startInprocTwin({ description: ClusterDescriptionSchema.parse(parse(text)) });
  try {
    const ref = await planInstaller();
    const ctrd = { driver: "CRI", namespace: "NS_SYSTEM" } as const;
    const o = { timeoutMs: 5_000 };
    const missingTag = ref.replace(":v1.14.2@", ":v1.14.3@");
    const missingDigest = ref.replace(/@sha256:[0-9a-f]{64}$/, "@sha256:" + "1".repeat(64));
    const otherTag = ref.replace(":v1.14.2@", ":v1.13.9@"); // served tag, digest of another index
    for (const bad of [missingTag, missingDigest, otherTag]) {
      const r = await twin.talos.pull("10.5.0.6", bad, ctrd, o);
      assertEquals([r.outcome, r.outcome === "ok" ? 0 : r.grpcCode], ["rejected", 5], bad);
    }
    assertEquals(twin.cluster.nodes.get("worker-1")!.images.size, 0);
    // What it holds (and a host it does not stand in for, which is not judged) starts pulling.
    const w1 = twin.cluster.nodes.get("worker-1")!;
    assertEquals(w1.pull(ref, ctrd).ms > 0, true);
    assertEquals(w1.pull("ghcr.io/x/installer:v1.14.2", ctrd).ms > 0, true);
  } finally {
    twin.stop();
  }
});
