import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { evidenceReportRows, fetchEvidenceIntoCache } from "../../src/app/evidence_run.ts";
import { parseEvidenceManifest } from "../../src/domain/evidence/manifest.ts";
import { sha256Hex } from "../../src/domain/plan/digest.ts";
import { buildUpstreamRepos } from "../../src/sim/evidence_fixture.ts";
import { ROOT } from "../_helpers/twin_world.ts";

const FILE = "evidence/upgrade-order.yaml";

async function bound() {
  const bytes = await Deno.readFile(join(ROOT, FILE));
  return { path: FILE, sha256: await sha256Hex(bytes), bytes };
}

Deno.test("evidenceReportRows() shows every tuple, assertion and control of a filled cache; a corrupted entry fails its row", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const repos = await buildUpstreamRepos(join(dir, "upstream"));
    const b = await bound();
    const parsed = parseEvidenceManifest(new TextDecoder().decode(b.bytes), FILE);
    assert(parsed.ok);
    const cache = join(dir, "cache");
    await fetchEvidenceIntoCache(parsed.manifest, cache, repos.gitEnv);
    const good = await evidenceReportRows(b, cache);
    assertEquals(good.sourceChecks.map((c) => [c.verdict, c.actualSha256 === c.expectedSha256]), [
      ["pass", true],
      ["pass", true],
      ["pass", true],
    ]);
    assertEquals(good.assertions.length, 7);
    assert(good.assertions.every((a) => a.verdict === "pass"));
    assertEquals(good.reasons, []);
    const entry = join(
      cache,
      "git.example.invalid_siderolabs_talos.git",
      repos.talos[0],
      "cmd/talosctl/cmd/talos/upgrade.go",
    );
    await Deno.writeTextFile(entry, "synthetic replacement\n");
    const bad = await evidenceReportRows(b, cache);
    assertEquals(bad.sourceChecks[0]!.verdict, "fail");
    assertEquals(bad.sourceChecks[0]!.reason, "EvidenceHashMismatch");
    assert(bad.reasons.some((r) => r.reason === "EvidenceHashMismatch"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("evidenceReportRows() never passes what it could not read: empty cache, missing or changed manifest", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const b = await bound();
    const empty = await evidenceReportRows(b, join(dir, "none"));
    assertEquals(empty.sourceChecks.map((c) => c.verdict), Array(3).fill("unreadable"));
    assert(
      empty.assertions.filter((a) => !a.name.startsWith("control ")).every((a) =>
        a.verdict === "unreadable"
      ),
    );
    const missing = await evidenceReportRows({ path: b.path, sha256: b.sha256 }, dir);
    assertEquals(
      missing.sourceChecks.map((c) => [c.verdict, c.reason]),
      [["unreadable", "EvidenceManifestMissing"]],
    );
    const changed = new TextEncoder().encode(new TextDecoder().decode(b.bytes) + "# edited\n");
    const edited = await evidenceReportRows({ ...b, bytes: changed }, dir);
    assertEquals(
      edited.sourceChecks.map((c) => [c.verdict, c.reason]),
      [["fail", "EvidenceManifestDigestMismatch"]],
    );
    assertEquals(edited.reasons[0]?.reason, "EvidenceManifestDigestMismatch");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
