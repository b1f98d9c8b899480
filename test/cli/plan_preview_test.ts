import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import type { CommandIO } from "../../src/cli/command.ts";
import { parseCommandArgs } from "../../src/cli/command_args.ts";
import { fetchEvidenceIntoCache } from "../../src/app/evidence_run.ts";
import { command } from "../../src/cli/plan_preview.ts";
import { parseEvidenceManifest } from "../../src/domain/evidence/manifest.ts";
import { buildUpstreamRepos } from "../../src/sim/evidence_fixture.ts";
import { startTwinProcess, TEST_PKI_CACHE, type TwinProcess } from "../../src/app/twin_process.ts";
import { TwinControl } from "../../src/sim/twin_control.ts";
import { ROOT } from "../_helpers/twin_world.ts";

/** The twin's registry stands in for factory.talos.dev: installers resolve there, not online. */
function mirrorArgs(twin: TwinProcess): string[] {
  return Object.entries(twin.registry.mirrors).flatMap((
    [h, u],
  ) => ["--registry-mirror", `${h}=${u}`]);
}

function captureIo(): { io: CommandIO; out: string[] } {
  const out: string[] = [];
  return {
    out,
    io: {
      stdout: (t) => out.push(t),
      stderr: () => {},
      env: {},
      cwd: ROOT,
      color: false,
      tty: false,
      signal: new AbortController().signal,
    },
  };
}

Deno.test("cairn plan preview reads the twin with zero writes on both simulators and reports drain planning", async () => {
  const twin = await startTwinProcess({
    cluster: join(ROOT, "fixtures/clusters/home-ops.yaml"),
    pkiCacheDir: TEST_PKI_CACHE,
  });
  const dir = await Deno.makeTempDir();
  try {
    const control = new TwinControl(twin.controlUrl);
    await control.resetStats();
    const { io, out } = captureIo();
    const args = parseCommandArgs(command, [
      "plans/talos-v1.14.2.yaml",
      "--kubeconfig",
      twin.kubeconfigPath!,
      "--talosconfig",
      twin.talosconfigPath,
      ...mirrorArgs(twin),
      "--health-policy",
      "fixtures/health/home-ops.yaml",
      "--evidence-cache",
      join(dir, "empty-cache"),
      "--out",
      join(dir, "preview.md"),
    ]);
    const code = await command.run(args, io);
    const stats = await control.stats();
    const kube = stats.kube as { mutating: number; total: number };
    assertEquals([stats.talos.totalMutating, kube.mutating], [0, 0]);
    assert(stats.talos.totalCalls >= 7 && kube.total > 7, "the preview did read the cluster");
    const report = await Deno.readTextFile(join(dir, "preview.md"));
    for (const node of ["worker-1", "cp-3"]) {
      assert(report.includes(`drain planning ${node}`), `drain planning row for ${node}`);
    }
    assert(report.includes("drain plan ok"));
    assert(report.includes("The preview made no writes"));
    assert(out.join("").includes("report written"));
    // An empty evidence cache shows every tuple unread and holds the plan; it never passes.
    assertEquals(code, 1);
    assert(report.includes("**Verdict: HELD"), report.slice(0, 300));
    assert(report.includes("0 of 3 pinned sources match their recorded SHA-256."));
    assertEquals(
      report.match(/\| unread \| \*\*unreadable\*\* `EvidenceFileMissing` \|/g)?.length,
      3,
    );
  } finally {
    await twin.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cairn plan preview refuses a drain bound below the pods' grace periods", async () => {
  const twin = await startTwinProcess({
    cluster: join(ROOT, "fixtures/clusters/home-ops.yaml"),
    pkiCacheDir: TEST_PKI_CACHE,
  });
  const dir = await Deno.makeTempDir();
  try {
    const text = (await Deno.readTextFile(join(ROOT, "plans/talos-v1.14.2.yaml")))
      .replace("drainTimeoutSeconds: 600", "drainTimeoutSeconds: 120");
    const plan = join(dir, "short-drain.yaml");
    await Deno.writeTextFile(plan, text);
    const { io, out } = captureIo();
    const code = await command.run(
      parseCommandArgs(command, [
        plan,
        "--kubeconfig",
        twin.kubeconfigPath!,
        "--talosconfig",
        twin.talosconfigPath,
        ...mirrorArgs(twin),
        ...mirrorArgs(twin),
        "--output",
        "json",
      ]),
      io,
    );
    const model = JSON.parse(out.join(""));
    assertEquals([code, model.verdict], [1, "refused"]);
    const drain = model.reasons.filter((r: { reason: string }) =>
      r.reason === "DrainBoundTooShort"
    );
    assertEquals(drain.map((r: { where: string }) => r.where), [
      "worker-1",
      "worker-2",
      "worker-3",
    ]);
    assertEquals((await new TwinControl(twin.controlUrl).stats()).talos.totalMutating, 0);
  } finally {
    await twin.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cairn plan preview lists every pinned tuple and assertion from a filled evidence cache", async () => {
  const dir = await Deno.makeTempDir();
  const twin = await startTwinProcess({
    cluster: join(ROOT, "fixtures/clusters/home-ops.yaml"),
    pkiCacheDir: TEST_PKI_CACHE,
  });
  try {
    const repos = await buildUpstreamRepos(join(dir, "upstream"));
    const file = "evidence/upgrade-order.yaml";
    const parsed = parseEvidenceManifest(await Deno.readTextFile(join(ROOT, file)), file);
    assert(parsed.ok);
    const cache = join(dir, "cache");
    await fetchEvidenceIntoCache(parsed.manifest, cache, repos.gitEnv);
    const { io } = captureIo();
    const code = await command.run(
      parseCommandArgs(command, [
        "plans/talos-v1.14.2.yaml",
        "--kubeconfig",
        twin.kubeconfigPath!,
        "--talosconfig",
        twin.talosconfigPath,
        ...mirrorArgs(twin),
        ...mirrorArgs(twin),
        "--health-policy",
        "fixtures/health/home-ops.yaml",
        "--evidence-cache",
        cache,
        "--out",
        join(dir, "preview.md"),
      ]),
      io,
    );
    const report = await Deno.readTextFile(join(dir, "preview.md"));
    // Every P-placed row was read and passed, rows 17 and 18 included (the object store and
    // broker routes, the metrics-storage and MQTT resources of the twin): READY, exit 0.
    assertEquals(code, 0, report.slice(0, 600));
    const verdict = report.split("\n").find((l) => l.startsWith("**Verdict:")) ?? "";
    assert(verdict.startsWith("**Verdict: READY FOR APPROVAL"), verdict);
    assert(/\| 17 \| Object-store endpoint[^|]*\| P\/O \| pass \|/.test(report), "row 17");
    assert(/\| 18 \| Metrics-storage operator[^|]*\| P\/O \| pass \|/.test(report), "row 18");
    // The hashes match, and the report says the bytes came from local stand-ins for the upstreams.
    assert(
      report.includes(
        "3 of 3 pinned sources match their recorded SHA-256; the bytes came: 3 from local " +
          "stand-ins, none from the named upstreams.",
      ),
      "tuples and their provenance",
    );
    // Each hop's installer was resolved at the twin's registry and matched its pinned digest.
    assert(
      /\| installer of hop 0 \(linux\/amd64\) \| pass \| hop 0: [^|]* resolves to /.test(report),
    );
    assert(/\| cluster identity \| pass \| the cluster reports home-ops/.test(report));
    assert(/\| 10 \| Installer image exists[^|]*\| P\/E \| pass \| hop 0: /.test(report), "row 10");
    assertEquals(
      report.match(/\| local stand-in: a repository on this machine replaced /g)?.length,
      3,
    );
    for (const s of parsed.manifest.sources) {
      assert(report.includes(`| \`${s.sha256}\` | \`${s.sha256}\` | pass |`), s.id);
    }
    for (const a of parsed.manifest.assertions) assert(report.includes(`| ${a.name} | pass |`));
    for (const c of parsed.manifest.controls) {
      assert(report.includes(`| control ${c.name} | pass |`), c.name);
    }
  } finally {
    await twin.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
