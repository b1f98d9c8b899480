/**
 * `cairn apply` and `cairn rehearse` run the dispatch check before anything is sent: a signed
 * v1.13.9 → v1.15.0 plan (a skipped minor, which `cairn plan check` refuses) is refused by both
 * with SkippedMinor, journaled, and the twin's mutation counters stay at zero; a --health-policy
 * other than the bound one is refused naming both digests.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { allowedSignersText, demoSigner } from "../../src/app/demo_keys.ts";
import { startTwinProcess, TEST_PKI_CACHE, type TwinProcess } from "../../src/app/twin_process.ts";
import { openJournal } from "../../src/adapters/journal/libsql_journal.ts";
import { cryptoIdSource } from "../../src/adapters/journal/ids.ts";
import { TwinControl } from "../../src/sim/twin_control.ts";
import { ROOT } from "../_helpers/twin_world.ts";

const BOUND = ["catalogue/talos.yaml", "policies/home-ops.yaml", "evidence/upgrade-order.yaml"];

/** A repository outside git: the bound files at its root, the plan (signed) in plans/. */
async function repoWithPlan(text: string): Promise<{ dir: string; plan: string }> {
  const dir = await Deno.makeTempDir({ prefix: "cairn-dispatch-" });
  for (const f of BOUND) {
    await Deno.mkdir(join(dir, f, ".."), { recursive: true });
    await Deno.copyFile(join(ROOT, f), join(dir, f));
  }
  await Deno.mkdir(join(dir, "plans"));
  const plan = join(dir, "plans", "talos-skip.yaml");
  await Deno.writeTextFile(plan, text);
  const people = [await demoSigner("alice@example.com"), await demoSigner("bob@example.com")];
  await Deno.writeTextFile(join(dir, "allowed_signers"), allowedSignersText(people));
  const bytes = await Deno.readFile(plan);
  await Deno.writeTextFile(
    `${plan}.sig`,
    (await Promise.all(people.map((p) => p.sign(bytes)))).join(""),
  );
  return { dir, plan };
}

async function cairn(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", join(ROOT, "src/main.ts"), ...args],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const d = new TextDecoder();
  return { code: out.code, stdout: d.decode(out.stdout), stderr: d.decode(out.stderr) };
}

function mirrorArgs(twin: TwinProcess): string[] {
  return Object.entries(twin.registry.mirrors).flatMap((
    [h, u],
  ) => ["--registry-mirror", `${h}=${u}`]);
}

async function mutations(control: TwinControl): Promise<number> {
  const stats = await control.stats();
  return stats.talos.totalMutating + (stats.kube as { mutating: number }).mutating;
}

/** The example plan skipping 1.14: v1.13.9 → v1.15.0 (named so its file name matches). */
async function skippedMinor(): Promise<string> {
  return (await Deno.readTextFile(join(ROOT, "plans/talos-v1.14.2.yaml")))
    .replace("name: talos-v1.14.2", "name: talos-skip")
    .replaceAll("v1.14.2", "v1.15.0");
}

Deno.test("cairn apply and cairn rehearse refuse a signed plan that skips a minor; nothing is sent", async () => {
  const twin = await startTwinProcess({
    cluster: join(ROOT, "fixtures/clusters/home-ops.yaml"),
    pkiCacheDir: TEST_PKI_CACHE,
  });
  const { dir, plan } = await repoWithPlan(await skippedMinor());
  try {
    const control = new TwinControl(twin.controlUrl);
    await control.resetStats();
    const journalUrl = `file:${join(dir, "journal.db")}`;
    const applied = await cairn([
      "apply",
      plan,
      "--kubeconfig",
      twin.kubeconfigPath!,
      "--talosconfig",
      twin.talosconfigPath,
      "--journal",
      journalUrl,
      "--allowed-signers",
      join(dir, "allowed_signers"),
      ...mirrorArgs(twin),
    ]);
    assertEquals(applied.code, 1, applied.stderr);
    assert(/worker-1 not-committed SkippedMinor: /.test(applied.stdout), applied.stdout);
    assert(applied.stdout.includes("rollout refused"), applied.stdout);
    assertEquals(await mutations(control), 0, "apply sent nothing");
    const journal = await openJournal({ url: journalUrl, ids: cryptoIdSource(), nowMs: 0 });
    try {
      const checks = (await journal.events()).filter((e) => e.kind === "dispatch-check");
      assertEquals(checks.length, 1);
      const body = JSON.parse(checks[0]!.body);
      assertEquals(body.verdict, "refused");
      assert(body.refusals.some((r: { reason: string }) => r.reason === "SkippedMinor"));
      assertEquals((await journal.exportAll())["plans"] ?? [], [], "a refused plan is never bound");
      assert((await journal.verifyChain()).ok);
    } finally {
      await journal.close();
    }

    const rehearsed = await cairn([
      "rehearse",
      plan,
      "--journal",
      `file:${join(dir, "rehearsal.db")}`,
      "--allowed-signers",
      join(dir, "allowed_signers"),
      "--out",
      join(dir, "out"),
    ]);
    assertEquals(rehearsed.code, 1, rehearsed.stderr);
    assert(/worker-1\s+not-committed\s+SkippedMinor: /.test(rehearsed.stdout), rehearsed.stdout);
    assert(rehearsed.stdout.includes("rollout refused"), rehearsed.stdout);
  } finally {
    await twin.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cairn apply refuses a --health-policy whose digest is not the bound one, naming both", async () => {
  const text = (await Deno.readTextFile(join(ROOT, "plans/talos-v1.14.2.yaml")))
    .replace("name: talos-v1.14.2", "name: talos-skip");
  const { dir, plan } = await repoWithPlan(text);
  try {
    const r = await cairn([
      "apply",
      plan,
      "--kubeconfig",
      join(dir, "none"),
      "--talosconfig",
      join(dir, "none"),
      "--journal",
      `file:${join(dir, "journal.db")}`,
      "--allowed-signers",
      join(dir, "allowed_signers"),
      "--health-policy",
      join(ROOT, "fixtures/health/tuppr-talosupgrade.yaml"),
    ]);
    assertEquals(r.code, 1, r.stderr);
    assert(r.stderr.includes("HealthPolicyOverrideMismatch"), r.stderr);
    assert(r.stderr.includes("b9f0df7b6d9761115fa5a88b7167c0636a7f2b6e595e3734b4c7a2f6d8f9d35d"));
    assert(r.stderr.includes("93e6ebeccdff543e329b475f85a66e2392c09a7483cf98012bf64f4824cac9e7"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cairn rehearse refuses a plan whose pinned installer digest is not what the registry serves", async () => {
  // Same reference and platform, another pinned digest: the twin's registry resolves the real one.
  const text = (await Deno.readTextFile(join(ROOT, "plans/talos-v1.14.2.yaml")))
    .replace("name: talos-v1.14.2", "name: talos-skip")
    .replace(/(installer:\n\s+image: [^@\n]+@sha256:)[0-9a-f]{64}/, `$1${"cd".repeat(32)}`);
  assert(text.includes("cd".repeat(32)));
  const { dir, plan } = await repoWithPlan(text);
  try {
    const r = await cairn([
      "rehearse",
      plan,
      "--journal",
      `file:${join(dir, "rehearsal.db")}`,
      "--out",
      join(dir, "out"),
    ]);
    assertEquals(r.code, 1, r.stderr);
    // The rehearsal writes the report a real run publishes, saying why nothing was sent.
    const report = await Deno.readTextFile(join(dir, "out", "execution.md"));
    assert(report.startsWith("# Execution report: talos-skip\n"), report.slice(0, 200));
    assert(report.includes("**Verdict: REFUSED"), report.slice(0, 400));
    assert(report.includes("`InstallerDigestMismatch`"), report.slice(0, 1200));
    assert(r.stdout.includes(`report  ${join(dir, "out", "execution.md")}`), r.stdout);
    assert(/worker-1\s+not-committed\s+InstallerDigestMismatch: /.test(r.stdout), r.stdout);
    assert(r.stdout.includes(`sha256:${"cd".repeat(32)}`), "names the pinned digest");
    assert(r.stdout.includes("rollout refused"), r.stdout);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
