import { deepStrictEqual as assertEquals, ok as assert, rejects } from "node:assert/strict";
import { parseBundledVersions } from "../../../src/domain/playbook/bundled.ts";
import { findTarFile } from "../../../src/domain/oci/tar.ts";
import { readArtifactFile } from "../../../src/adapters/oci/chart_values.ts";
import { runCli } from "../../_helpers/cli_run.ts";
import { startChartRegistry, tarOf } from "../../_helpers/chart_registry.ts";

const enc = new TextEncoder();

function values(image: string): string {
  return `cephClusterSpec:\n  cephVersion:\n    image: ${image}\n    allowUnsupported: false\n`;
}

Deno.test("tar: the chart's values.yaml is found by path; a PAX long name is honoured; absent and malformed say so", () => {
  const tar = tarOf({
    "rook-ceph-cluster/Chart.yaml": "name: rook-ceph-cluster\n",
    "rook-ceph-cluster/charts/sub/values.yaml": "x: 1\n",
    "rook-ceph-cluster/values.yaml": values("quay.io/ceph/ceph:v19.2.3"),
  });
  const found = findTarFile(tar, (p) => /^[^/]+\/values\.yaml$/.test(p));
  assert(found.kind === "found");
  assertEquals(found.path, "rook-ceph-cluster/values.yaml");
  assert(new TextDecoder().decode(found.bytes).includes("v19.2.3"));
  assertEquals(findTarFile(tar, (p) => p === "nope").kind, "absent");
  const cut = tar.slice(0, 512 + 10); // the first body runs past the end
  assertEquals(findTarFile(cut, () => true).kind, "malformed");
  const long = "a/" + "b".repeat(150) + "/values.yaml";
  const record = ` path=${long}\n`;
  const len = String(record.length + String(record.length).length);
  const pax = tarOf({ "PaxHeader": `${len}${record}`, [long.slice(0, 99)]: "k: v\n" });
  pax[156] = "x".charCodeAt(0); // the first entry is the PAX header for the next
  const viaPax = findTarFile(pax, (p) => p === long);
  assert(viaPax.kind === "found", JSON.stringify(viaPax));
});

Deno.test("cairn bundled chart reads each tag's bundled value into a snapshot the review can use", async () => {
  const reg = startChartRegistry();
  try {
    await reg.add("rook/rook-ceph-cluster", "v1.19.3", {
      "rook-ceph-cluster/Chart.yaml": "name: rook-ceph-cluster\n",
      "rook-ceph-cluster/values.yaml": values("quay.io/ceph/ceph:v19.2.3"),
    });
    await reg.add("rook/rook-ceph-cluster", "v1.20.0", {
      "rook-ceph-cluster/values.yaml": values("quay.io/ceph/ceph:v20.2.0"),
    });
    const r = await runCli([
      "bundled",
      "chart",
      "--artifact",
      "rook-ceph-cluster",
      "--chart",
      "oci://ghcr.io/rook/rook-ceph-cluster",
      "--tag",
      "v1.19.3",
      "--tag",
      "v1.20.0",
      "--path",
      "cephClusterSpec.cephVersion.image",
      "--capture",
      ":(v[0-9.]+)",
      "--date",
      "2026-11-25",
      "--registry-mirror",
      `ghcr.io=${reg.url}`,
    ]);
    assertEquals(r.code, 0, r.stderr);
    const parsed = parseBundledVersions(enc.encode(r.stdout), "out.yaml");
    assert(parsed.ok);
    assertEquals(parsed.bundled.lookup("rook-ceph-cluster", "v1.19.3")?.version, "v19.2.3");
    assertEquals(parsed.bundled.lookup("rook-ceph-cluster", "1.20.0")?.version, "v20.2.0");
    assert(r.stdout.includes(reg.layerDigest("rook/rook-ceph-cluster", "v1.20.0")));
  } finally {
    await reg.close();
  }
});

Deno.test("cairn bundled chart refuses a layer that does not hash to its digest, and a value it cannot read", async () => {
  const reg = startChartRegistry();
  try {
    await reg.add("rook/rook-ceph-cluster", "v1.20.0", {
      "rook-ceph-cluster/values.yaml": values("quay.io/ceph/ceph:v20.2.0"),
    });
    const args = (tag: string, path = "cephClusterSpec.cephVersion.image") => [
      "bundled",
      "chart",
      "--artifact",
      "rook-ceph-cluster",
      "--chart",
      "oci://ghcr.io/rook/rook-ceph-cluster",
      "--tag",
      tag,
      "--path",
      path,
      "--registry-mirror",
      `ghcr.io=${reg.url}`,
    ];
    const missing = await runCli(args("v1.20.0", "cephClusterSpec.nope"));
    assertEquals([missing.code, missing.stdout], [1, ""]);
    assert(
      /RegistryUnreadable/.test(missing.stderr) && /nothing is written/.test(missing.stderr),
      missing.stderr,
    );
    const unknown = await runCli(args("v9.9.9"));
    assertEquals(unknown.code, 1);
    assert(/ImageNotFound/.test(unknown.stderr), unknown.stderr);
    reg.tamper(reg.layerDigest("rook/rook-ceph-cluster", "v1.20.0"), enc.encode("not the chart"));
    const tampered = await runCli(args("v1.20.0"));
    assertEquals([tampered.code, tampered.stdout], [1, ""]);
    assert(/DigestMismatch/.test(tampered.stderr), tampered.stderr);
  } finally {
    await reg.close();
  }
});

Deno.test("cairn bundled chart reads a file of another artifact: the Flux distribution in flux-operator-manifests", async () => {
  const reg = startChartRegistry();
  const flux = "application/vnd.cncf.flux.content.v1.tar+gzip";
  try {
    await reg.add("controlplaneio-fluxcd/flux-operator-manifests", "v0.33.0", {
      "flux-images/VERSION": "v2.7.3\n",
      "flux/source-controller.yaml": "kind: Deployment\n",
    }, flux);
    const r = await runCli([
      "bundled",
      "chart",
      "--artifact",
      "flux-operator-manifests",
      "--chart",
      "oci://ghcr.io/controlplaneio-fluxcd/flux-operator-manifests",
      "--tag",
      "v0.33.0",
      "--file",
      "flux-images/VERSION",
      "--layer-media-type",
      flux,
      "--date",
      "2026-11-25",
      "--registry-mirror",
      `ghcr.io=${reg.url}`,
    ]);
    assertEquals(r.code, 0, r.stderr);
    const parsed = parseBundledVersions(enc.encode(r.stdout), "out.yaml");
    assert(parsed.ok);
    assertEquals(parsed.bundled.lookup("flux-operator-manifests", "v0.33.0")?.version, "v2.7.3");
    const wrongLayer = await runCli([
      "bundled",
      "chart",
      "--artifact",
      "x",
      "--chart",
      "oci://ghcr.io/controlplaneio-fluxcd/flux-operator-manifests",
      "--tag",
      "v0.33.0",
      "--file",
      "flux-images/VERSION",
      "--registry-mirror",
      `ghcr.io=${reg.url}`,
    ]);
    assertEquals(wrongLayer.code, 1);
    assert(
      /has no application\/vnd\.cncf\.helm\.chart\.content/.test(wrongLayer.stderr),
      wrongLayer.stderr,
    );
  } finally {
    await reg.close();
  }
});

Deno.test("an archive that decompresses beyond the cap is refused (a gzip bomb stops at the cap)", async () => {
  const reg = startChartRegistry();
  try {
    await reg.add("rook/rook-ceph-cluster", "v1.20.0", {
      "rook-ceph-cluster/values.yaml": values("quay.io/ceph/ceph:v20.2.0") + "#".repeat(64 * 1024),
    });
    const opts = { mirrors: { "ghcr.io": reg.url } };
    const ok = await readArtifactFile("oci://ghcr.io/rook/rook-ceph-cluster", "v1.20.0", {}, opts);
    assert(ok.text.includes("v20.2.0"));
    await rejects(
      readArtifactFile("oci://ghcr.io/rook/rook-ceph-cluster", "v1.20.0", {
        maxTarBytes: 16 * 1024,
      }, opts),
      (e: Error & { reason?: string }) =>
        e.reason === "RegistryUnreadable" && /decompresses beyond 16384 bytes/.test(e.message),
    );
  } finally {
    await reg.close();
  }
});
