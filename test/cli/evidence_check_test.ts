import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { command } from "../../src/cli/evidence_check.ts";
import { parseCommandArgs } from "../../src/cli/command_args.ts";
import type { EvidenceCheckResult } from "../../src/domain/evidence/result.ts";
import {
  buildUpstreamRepos,
  FIXTURES,
  LOGICAL,
  type UpstreamRepos,
} from "../adapters/evidence/upstream_repos.ts";
import { startSilentListener, within } from "../_helpers/silent_listener.ts";

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

async function run(argv: string[], env: Record<string, string>, cwd: string): Promise<Run> {
  let stdout = "";
  let stderr = "";
  const io = {
    stdout: (t: string) => void (stdout += t),
    stderr: (t: string) => void (stderr += t),
    env,
    cwd,
    color: false,
    tty: false,
    signal: new AbortController().signal,
  };
  const code = await command.run(parseCommandArgs(command, argv), io);
  return { code, stdout, stderr };
}

async function withUpstream(fn: (repos: UpstreamRepos, dir: string) => Promise<void>) {
  const dir = await Deno.makeTempDir();
  try {
    await fn(await buildUpstreamRepos(join(dir, "repos")), dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const SAMPLE = join(FIXTURES, "upgrade-order.yaml");
const json = (r: Run) => JSON.parse(r.stdout) as EvidenceCheckResult;

Deno.test("evidence check: a clean fetch and an offline re-check both exit 0", async () => {
  await withUpstream(async (repos, dir) => {
    const cache = join(dir, "cache");
    assertEquals(
      repos.talos[0],
      "9684195043cd45bfc1ee12802bc1117c4ae08fde",
      "fixture commit id drifted",
    );
    const fetched = await run(
      [SAMPLE, "--cache", cache, "--fetch", "--output", "json"],
      repos.gitEnv,
      dir,
    );
    assertEquals(fetched.code, 0, fetched.stdout + fetched.stderr);
    const r = json(fetched);
    assertEquals(r.mode, "fetch");
    assert(r.sources.every((s) => s.fetchedSha256 === s.expectedSha256 && s.verdict === "pass"));
    assertEquals(r.counts, {
      sources: { passed: 3, failed: 0 },
      assertions: { passed: 5, failed: 0 },
      controls: { passed: 2, failed: 0 },
    });
    // Offline: no git URL rewriting, so any attempt to reach the network would fail.
    const offline = await run([SAMPLE, "--cache", cache], {}, dir);
    assertEquals(offline.code, 0, offline.stdout + offline.stderr);
    assert(offline.stdout.includes("PASS reversed-phase-order [reversed-order] observed fail"));
    assert(offline.stdout.includes("ok: sources 3/3, assertions 5/5, controls 2/2 as declared"));
  });
});

Deno.test("evidence check: a corrupted cache entry exits 1 at the hash check", async () => {
  await withUpstream(async (repos, dir) => {
    const cache = join(dir, "cache");
    assertEquals((await run([SAMPLE, "--cache", cache, "--fetch"], repos.gitEnv, dir)).code, 0);
    const entry = join(
      cache,
      "git.example.invalid_siderolabs_talos.git",
      repos.talos[0],
      "cmd/talosctl/cmd/talos/upgrade.go",
    );
    await Deno.writeTextFile(entry, "synthetic replacement text\n");
    const r = await run([SAMPLE, "--cache", cache, "--output", "json"], {}, dir);
    assertEquals(r.code, 1);
    const bad = json(r).sources.find((s) => s.id === "talos-upgrade")!;
    assertEquals([bad.verdict, bad.reason], ["fail", "EvidenceHashMismatch"]);
    assert(bad.message.includes(`@${repos.talos[0]}:cmd/talosctl/cmd/talos/upgrade.go`));
    assert(
      bad.message.includes(`expected sha256 ${bad.expectedSha256}, actual ${bad.cachedSha256}`),
    );
    const dependent = json(r).assertions.find((a) => a.name === "install-precedes-drain")!;
    assertEquals(dependent.verdict, "fail");
  });
});

Deno.test("evidence check: a manifest whose reversed-order control passes exits 1", async () => {
  await withUpstream(async (repos, dir) => {
    const cache = join(dir, "cache");
    const text = (await Deno.readTextFile(SAMPLE)).replace(
      "    assertion: install-precedes-drain\n",
      "    assertion: install-precedes-drain\n    calls: [pullImage, upgradeInternal, drainNodes]\n",
    );
    const manifest = join(dir, "control-passes.yaml");
    await Deno.writeTextFile(manifest, text);
    const r = await run(
      [manifest, "--cache", cache, "--fetch", "--output", "json"],
      repos.gitEnv,
      dir,
    );
    assertEquals(r.code, 1);
    const c = json(r).controls.find((x) => x.name === "reversed-phase-order")!;
    assertEquals([c.observed, c.verdict, c.reason], [
      "pass",
      "fail",
      "EvidenceControlUnexpectedlyPassed",
    ]);
    assert(json(r).sources.every((s) => s.verdict === "pass"));
  });
});

Deno.test("evidence check: a tampered revision is caught at the download hash", async () => {
  await withUpstream(async (repos, dir) => {
    const cache = join(dir, "cache");
    const text = (await Deno.readTextFile(SAMPLE)).replaceAll(repos.talos[0], repos.talos[1]);
    const manifest = join(dir, "tampered.yaml");
    await Deno.writeTextFile(manifest, text);
    const r = await run(
      [manifest, "--cache", cache, "--fetch", "--output", "json"],
      repos.gitEnv,
      dir,
    );
    assertEquals(r.code, 1);
    const s = json(r).sources.find((x) => x.id === "talos-upgrade")!;
    assertEquals([s.verdict, s.reason], ["fail", "EvidenceHashMismatch"]);
    assert(
      s.message.startsWith(
        `download of https://git.example.invalid/siderolabs/talos.git@${repos.talos[1]}`,
      ),
    );
    assert(s.fetchedSha256 !== s.expectedSha256);
    // The mismatching bytes never enter the cache, so the offline re-check fails too.
    const offline = await run([manifest, "--cache", cache, "--output", "json"], {}, dir);
    assertEquals(offline.code, 1);
    assertEquals(
      json(offline).sources.find((x) => x.id === "talos-upgrade")!.reason,
      "EvidenceFileMissing",
    );
  });
});

Deno.test("evidence check: an invalid manifest is refused with a located reason", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(join(dir, "m.yaml"), "apiVersion: cairn.dev/v1alpha1\nkind: Other\n");
    const r = await run(["m.yaml", "--cache", "c"], {}, dir);
    assertEquals(r.code, 1);
    assert(r.stderr.startsWith("m.yaml:2:7: EvidenceManifestInvalid"), r.stderr);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("evidence check --fetch: a manifest whose repo is a git option is refused at parse and git never runs it", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const marker = join(dir, "pwned");
    for (const repo of [`--upload-pack=touch ${marker}`, `ext::sh -c touch% ${marker}`]) {
      const text = (await Deno.readTextFile(SAMPLE)).replace(
        `repo: ${LOGICAL.ssa}`,
        `repo: ${JSON.stringify(repo)}`,
      );
      await Deno.writeTextFile(join(dir, "m.yaml"), text);
      const r = await run(["m.yaml", "--cache", "c", "--fetch"], {}, dir);
      assertEquals(r.code, 1, repo);
      const line = text.split("\n").findIndex((l) => l.includes(JSON.stringify(repo))) + 1;
      assert(r.stderr.startsWith(`m.yaml:${line}:11: EvidenceRepoUrlInvalid: `), r.stderr);
      assertEquals(r.stdout, "");
      await Deno.lstat(marker).then(
        () => assert(false, `git ran ${repo}`),
        (e) => assert(e instanceof Deno.errors.NotFound),
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("evidence check --fetch: an upstream that never answers is unread within the budget, never a pass", async () => {
  await withUpstream(async (repos, dir) => {
    const cache = join(dir, "cache");
    // A good cache from an earlier fetch must not turn the unread download into a pass.
    const clean = await run([SAMPLE, "--cache", cache, "--fetch"], repos.gitEnv, dir);
    assertEquals(clean.code, 0, clean.stdout + clean.stderr);
    const silent = startSilentListener();
    try {
      const env = {
        ...repos.gitEnv,
        // The talos upstream now leads to a listener that accepts and stays silent.
        GIT_CONFIG_KEY_0: `url.git://127.0.0.1:${silent.port}/talos.git.insteadOf`,
      };
      const started = Date.now();
      const r = await within(
        10_000,
        run(
          [SAMPLE, "--cache", cache, "--fetch", "--fetch-timeout", "2", "--output", "json"],
          env,
          dir,
        ),
      );
      const took = Date.now() - started;
      assertEquals(r.code, 1);
      assert(took < 10_000, `took ${took} ms`);
      assert(silent.accepted() >= 1, "git reached the silent upstream");
      const result = json(r);
      assertEquals(result.ok, false);
      // The first talos file spends the budget; nothing after it is fetched, even the upstream
      // that answers.
      assertEquals(
        result.sources.map((s) => [s.id, s.verdict, s.reason]),
        [
          ["talos-upgrade", "fail", "EvidenceFetchTimedOut"],
          ["talos-kubernetes-upgrade", "fail", "EvidenceFetchTimedOut"],
          ["ssa-apply", "fail", "EvidenceFetchTimedOut"],
        ],
      );
      assert(/unread/.test(result.sources[0]!.message), result.sources[0]!.message);
    } finally {
      await silent.close();
    }
  });
});

Deno.test("evidence check refuses a malformed --fetch-timeout as a usage error", async () => {
  for (const bad of ["0", "-1", "1.5", "soon"]) {
    let threw = false;
    try {
      await run([SAMPLE, "--cache", "c", "--fetch", "--fetch-timeout", bad], {}, ".");
    } catch (e) {
      threw = e instanceof Error && /--fetch-timeout/.test(e.message);
    }
    assert(threw, bad);
  }
});

Deno.test("evidence check refuses a manifest that is a link to /dev/zero or a FIFO without reading it", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.symlink("/dev/zero", join(dir, "zero.yaml"));
    const mk = await new Deno.Command("mkfifo", { args: [join(dir, "fifo.yaml")] }).output();
    assert(mk.success);
    for (const name of ["zero.yaml", "fifo.yaml"]) {
      let reason = "";
      try {
        await within(5_000, run([name, "--cache", "c"], {}, dir));
      } catch (e) {
        reason = (e as { reason?: string }).reason ?? String(e);
      }
      assertEquals(reason, "FileUnreadable", name);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
