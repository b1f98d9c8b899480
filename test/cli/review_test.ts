import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import {
  checkoutBranch,
  commitFiles,
  dropDeviation,
  initialState,
  renderBundledVersions,
  renderRepo,
  renovateBump,
} from "../../src/sim/gitops/mod.ts";
import { runCli } from "../_helpers/cli_run.ts";
import { GitOpsRepo } from "../_helpers/gitops_review.ts";

Deno.test("cairn review: findings exit 1 with a markdown report naming file:line; clean exits 0", async () => {
  const base = initialState({ seed: 9 });
  await using repo = await GitOpsRepo.create(base);
  const bundled = join(repo.dir, "..", `${repo.dir.split("/").pop()}-bundled.yaml`);
  await Deno.writeTextFile(bundled, renderBundledVersions());
  try {
    const bump = renovateBump(base, "rook-ceph/csi-drivers", "patch");
    await repo.branch("bad", dropDeviation(bump.state, "rook-ceph/rbd-snapshot-policy"));
    await repo.branch("good", bump.state);
    const args = ["review", "--repo", repo.dir, "--base", "main", "--bundled", bundled];
    const bad = await runCli([...args, "--head", "bad"]);
    assertEquals(bad.code, 1, bad.stderr);
    assert(bad.stdout.startsWith("# Review: bad against main\n"), bad.stdout.slice(0, 200));
    assert(
      /\*\*Verdict: FINDINGS: 1 finding in 1 protected component \(1 blocking\)/.test(bad.stdout),
    );
    assert(
      /\*\*DeviationDropped\*\* \(rook-ceph, blocking\)/.test(bad.stdout) &&
        /`kubernetes\/apps\/rook-ceph\/rook-ceph\/csi-drivers\/helmrelease\.yaml:\d+:\d+` \(head\)/
          .test(bad.stdout),
      bad.stdout,
    );
    assert(/required action \(snapshotter-removed\)/.test(bad.stdout));
    assert(/### Rollback caveats/.test(bad.stdout) && /### After merge/.test(bad.stdout));
    const good = await runCli([...args, "--head", "good", "--output", "json"]);
    assertEquals(good.code, 0, good.stderr);
    const json = JSON.parse(good.stdout);
    assertEquals(json.result.verdict, "clean");
    assertEquals(json.result.findings, []);
    assert(/^[0-9a-f]{40}$/.test(json.head.commit));
  } finally {
    await Deno.remove(bundled);
  }
});

Deno.test("cairn review: without a snapshot a riding companion is unknown, not unchanged", async () => {
  const base = initialState({ seed: 9 });
  await using repo = await GitOpsRepo.create(base);
  await repo.branch("flux", renovateBump(base, "flux/flux", "patch").state);
  const r = await runCli(["review", "--repo", repo.dir, "--base", "main", "--head", "flux"]);
  assertEquals(r.code, 1);
  assert(/\*\*CompanionVersionUnknown\*\* \(flux, attention\)/.test(r.stdout), r.stdout);
});

Deno.test("cairn review: markdown and HTML in file names and values are escaped", async () => {
  const base = initialState({ seed: 9 });
  await using repo = await GitOpsRepo.create(base);
  const files = renderRepo(base);
  const cilium = "kubernetes/apps/kube-system/cilium/app/helm/values.yaml";
  const evil = files[cilium]!.replace(
    "mode: dsr",
    'mode: "<img src=x onerror=alert(1)> | [x](javascript:y)"',
  );
  const odd = "kubernetes/apps/kube-system/cilium/app/<b>`x`|.yaml";
  await repo.branch("evil", { ...files, [cilium]: evil, [odd]: "a: 1\n" });
  const r = await runCli(["review", "--repo", repo.dir, "--base", "main", "--head", "evil"]);
  assertEquals(r.code, 1);
  assert(!r.stdout.includes("<img") && !r.stdout.includes("<b>"), r.stdout);
  // The brackets are escaped, so no link can form; the pipe cannot split a table cell.
  assert(!/[^\\]\[x\]/.test(r.stdout));
  assert(r.stdout.includes("&lt;img src=x onerror=alert(1)&gt; &#124; \\[x\\](javascript:y)"));
  assert(
    r.stdout.includes("app/&lt;b&gt;&#96;x&#96;&#124;.yaml"),
    "the odd file name is listed, escaped",
  );
});

Deno.test("cairn review: usage and refusals", async () => {
  const missing = await runCli(["review", "--repo", "."]);
  assertEquals(missing.code, 2);
  const base = initialState({ seed: 9 });
  await using repo = await GitOpsRepo.create(base);
  const unknown = await runCli(["review", "--repo", repo.dir, "--base", "main", "--head", "nope"]);
  assertEquals(unknown.code, 1);
  assert(/ReviewRefUnknown/.test(unknown.stderr), unknown.stderr);
});

Deno.test("cairn review: the base commit's catalogue/bundled-versions.yaml is the default snapshot", async () => {
  const base = initialState({ seed: 9 });
  await using repo = await GitOpsRepo.create(base);
  const withSnapshot = {
    ...renderRepo(base),
    "catalogue/bundled-versions.yaml": renderBundledVersions(),
  };
  const main = await repo.branch("main-with-snapshot", withSnapshot);
  const bumped = renderRepo(renovateBump(base, "flux/flux", "patch").state);
  await checkoutBranch(repo.dir, "flux", main);
  await commitFiles(repo.dir, {
    ...bumped,
    "catalogue/bundled-versions.yaml": renderBundledVersions(),
  }, "flux");
  const r = await runCli([
    "review",
    "--repo",
    repo.dir,
    "--base",
    "main-with-snapshot",
    "--head",
    "flux",
    "--output",
    "json",
  ]);
  assertEquals(r.code, 0, r.stdout.slice(0, 2000));
  assertEquals(JSON.parse(r.stdout).bundled.name, "simulated-upstream");
});

Deno.test("cairn review: a --repo that is missing or not a repository is said so, before git runs", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const missing = await runCli([
      "review",
      "--repo",
      join(dir, "nope"),
      "--base",
      "a",
      "--head",
      "b",
    ]);
    assertEquals(missing.code, 1);
    assertEquals(
      missing.stderr,
      `FileUnreadable: --repo ${join(dir, "nope")}: no such directory\n`,
    );
    const plain = await runCli(["review", "--repo", dir, "--base", "a", "--head", "b"]);
    assertEquals(plain.code, 1);
    assertEquals(plain.stderr, `FileUnreadable: --repo ${dir}: not a git repository\n`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
