/**
 * Guards of the evidence checks and bound files that the module tests left undefended
 * (tools/mutants/evidence_rules.json): each test fails when one guard is removed or weakened, so
 * that cairn would accept evidence, a repository location or a bound file it must refuse.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { fileURLToPath as fromFileUrl } from "node:url";
import { checkIndependent, checkOrder } from "../../../src/domain/evidence/assertions.ts";
import { checkEvidence, type EvidenceInputs } from "../../../src/domain/evidence/checker.ts";
import { parseEvidenceManifest } from "../../../src/domain/evidence/manifest.ts";
import { repoUrlProblem } from "../../../src/domain/evidence/repo_url.ts";
import { checkBoundFiles } from "../../../src/domain/plan/bound_files.ts";
import { sha256Hex } from "../../../src/domain/plan/digest.ts";
import { buildTalosUpgradePlanYaml } from "../../../src/domain/plan/example.ts";
import { safeParsePlan } from "../../../src/domain/plan/parse.ts";

const ROOT = fromFileUrl(new URL("../../../", import.meta.url));
const SAMPLE = Deno.readTextFileSync(`${ROOT}fixtures/evidence/upgrade-order.yaml`);
const enc = new TextEncoder();

function refusedWith(url: string, want: RegExp) {
  const why = repoUrlProblem(url);
  assert(why !== undefined && want.test(why), `${JSON.stringify(url)} -> ${why}`);
}

// --- repository locations -------------------------------------------------------------------

Deno.test("repoUrlProblem() refuses a look-alike non-ASCII host or a bidi control in the path", () => {
  refusedWith("https://g\u0456thub.com/siderolabs/talos.git", /non-ASCII/);
  refusedWith("https://github.com/siderolabs/talos\u202e.git", /non-ASCII/);
  refusedWith("https://github.com/siderolabs/talos\u0085.git", /non-ASCII/);
  // The same host in punycode is visible as what it is, and accepted.
  assertEquals(repoUrlProblem("https://xn--gthub-n2e.com/siderolabs/talos.git"), undefined);
});

Deno.test("repoUrlProblem() refuses an otherwise well-formed URL past the length cap", () => {
  const long = `https://github.com/${"a".repeat(3000)}.git`;
  assertEquals(repoUrlProblem(long.slice(0, 2000)), undefined);
  refusedWith(long, /longer than/);
});

Deno.test("repoUrlProblem() refuses a URL with whitespace that the URL parser would encode away", () => {
  refusedWith("https://github.com/org/repo.git --upload-pack=x", /whitespace/);
});

Deno.test("repoUrlProblem() refuses a host ssh could read as an option or expand into a shell", () => {
  refusedWith("ssh://a$(id)b/org/repo.git", /malformed host/);
  refusedWith("git://evil;id/org/repo.git", /malformed host/);
  refusedWith("git@-oProxyCommand=x:org/repo.git", /malformed host/);
  refusedWith("git@evil$(id):org/repo.git", /malformed host/);
});

Deno.test("repoUrlProblem() refuses user names outside ssh and user names with shell metacharacters", () => {
  refusedWith("https://oauth2@gitlab.example.com/org/repo.git", /carry no user/);
  refusedWith("git://anonymous@git.example.com/org/repo.git", /carry no user/);
  refusedWith("ssh://a$(id)@github.com/org/repo.git", /malformed user/);
  refusedWith("a$(id)@github.com:org/repo.git", /malformed user/);
  assertEquals(repoUrlProblem("ssh://git@github.com/org/repo.git"), undefined);
});

Deno.test("repoUrlProblem() refuses shell metacharacters in an scp-like path", () => {
  refusedWith("git@github.com:org/$(id).git", /characters outside/);
  refusedWith("git@github.com:org/repo.git;id", /characters outside/);
});

// --- manifest parsing -----------------------------------------------------------------------

Deno.test("parseEvidenceManifest() refuses a manifest over the size cap even when it would parse", () => {
  const big = `${SAMPLE}#${"x".repeat(300 * 1024)}\n`;
  const r = parseEvidenceManifest(big, "big.yaml");
  assert(!r.ok);
  assert(r.problems[0]!.message.includes("exceeds"), r.problems[0]!.message);
});

Deno.test("parseEvidenceManifest() refuses a revision that is a commit id plus a suffix naming another commit", () => {
  const rev = "677e53deb1f2573cb49612f762d49151f2f18883";
  for (const other of [`${rev}~1`, `${rev}^2`, `${rev}:other.go`, "main"]) {
    const r = parseEvidenceManifest(
      SAMPLE.replace(`revision: ${rev}`, `revision: "${other}"`),
      "m",
    );
    assert(!r.ok, other);
    assertEquals(r.problems.map((p) => p.location?.path), ["sources[2].revision"], other);
  }
});

Deno.test("parseEvidenceManifest() refuses two sources with the same id (one cache entry would vouch for both)", () => {
  const extra = `  - id: talos-upgrade
    repo: https://git.example.invalid/someone-else/talos.git
    revision: ${"b".repeat(40)}
    path: cmd/talosctl/cmd/talos/upgrade.go
    sha256: 26f6262e00db2bbfa22eac39350cdb4da92e6cb6ebb0f6e629759466abc05037
`;
  const text = SAMPLE.replace("assertions:\n", `${extra}assertions:\n`);
  assert(text !== SAMPLE);
  const r = parseEvidenceManifest(text, "m.yaml");
  assert(!r.ok);
  assertEquals(r.problems.map((p) => [p.location?.path, p.message]), [
    ["sources[3].id", "source id 'talos-upgrade' is repeated"],
  ]);
});

Deno.test("parseEvidenceManifest() refuses a duplicated key (a reviewer reads one value, the parser keeps another)", () => {
  const text = SAMPLE.replace(
    "    path: manager_apply.go\n",
    "    path: manager_apply.go\n    path: other.go\n",
  );
  assert(text !== SAMPLE);
  const r = parseEvidenceManifest(text, "m.yaml");
  assert(!r.ok);
  assert(r.problems.some((p) => /unique/i.test(p.message)), JSON.stringify(r.problems));
});

Deno.test("parseEvidenceManifest() refuses more alias expansions than its budget", () => {
  const assertions = Array.from(
    { length: 60 },
    (_, i) =>
      `  - { name: alias-${i}, kind: order, source: talos-upgrade, function: f, calls: *c }\n`,
  ).join("");
  const text = SAMPLE
    .replace("calls: [pullImage, upgradeInternal, drainNodes]", "calls: &c [pullImage, drainNodes]")
    .replace("controls:\n", `${assertions}controls:\n`);
  const r = parseEvidenceManifest(text, "m.yaml");
  assert(!r.ok);
  assert(r.problems[0]!.message.includes("aliases"), r.problems[0]!.message);
});

Deno.test("parseEvidenceManifest() returns a problem for an alias bomb instead of throwing", () => {
  let bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (let i = 1; i < 9; i++) {
    const prev = String.fromCharCode(96 + i);
    bomb += `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [` +
      Array.from({ length: 10 }, () => `*${prev}`).join(", ") + "]\n";
  }
  const r = parseEvidenceManifest(bomb, "bomb.yaml");
  assert(!r.ok);
  assertEquals(r.problems.map((p) => [p.reason, p.message]), [
    ["EvidenceManifestInvalid", "YAML aliases expand beyond the allowed budget"],
  ]);
});

// --- the checker ------------------------------------------------------------------------------

const UPGRADE = `func upgrade() error {\n\tpull()\n\tinstall()\n\tdrain()\n\treturn nil\n}\n`;
const EXTRA = "package extra\n";

async function inputs(files: { up?: string; extra?: string }): Promise<EvidenceInputs> {
  const text = `apiVersion: cairn.dev/v1alpha1
kind: EvidenceManifest
metadata: { name: guard }
sources:
  - { id: up, repo: "file:///r.git", revision: "${
    "a".repeat(40)
  }", path: up.go, sha256: "${await sha256Hex(
    enc.encode(UPGRADE),
  )}" }
  - { id: extra, repo: "file:///r.git", revision: "${
    "a".repeat(40)
  }", path: x.go, sha256: "${await sha256Hex(
    enc.encode(EXTRA),
  )}" }
assertions:
  - { name: install-first, kind: order, source: up, function: upgrade, calls: [pull, install, drain] }
`;
  const r = parseEvidenceManifest(text, "guard.yaml");
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  const cached = new Map<string, Uint8Array>();
  if (files.up !== undefined) cached.set("up", enc.encode(files.up));
  if (files.extra !== undefined) cached.set("extra", enc.encode(files.extra));
  return {
    manifest: r.manifest,
    manifestFile: "guard.yaml",
    manifestBytes: enc.encode(text),
    cached,
  };
}

async function checked(i: EvidenceInputs) {
  const out = await checkEvidence(i);
  assert(out.status === "checked");
  return out.result;
}

Deno.test("checkEvidence() in a fetch run fails a source the fetch did not report, whatever the cache holds", async () => {
  const base = await inputs({ up: UPGRADE, extra: EXTRA });
  const extraSha = base.manifest.sources[1]!.sha256;
  const r = await checked({
    ...base,
    fetched: new Map([["extra", { ok: true, sha256: extraSha }]]),
  });
  assertEquals(r.sources.map((s) => [s.id, s.verdict, s.reason]), [
    ["up", "fail", "EvidenceFetchFailed"],
    ["extra", "pass", undefined],
  ]);
  assertEquals(r.ok, false);
});

Deno.test("checkEvidence() fails a download whose hash differs from the pin even when the cache entry matches", async () => {
  const base = await inputs({ up: UPGRADE, extra: EXTRA });
  const extraSha = base.manifest.sources[1]!.sha256;
  const r = await checked({
    ...base,
    fetched: new Map([["up", { ok: true, sha256: "0".repeat(64) }], ["extra", {
      ok: true,
      sha256: extraSha,
    }]]),
  });
  const up = r.sources[0]!;
  assertEquals([up.verdict, up.reason, up.fetchedSha256], [
    "fail",
    "EvidenceHashMismatch",
    "0".repeat(64),
  ]);
  assertEquals(r.ok, false);
});

Deno.test("checkEvidence() never evaluates an assertion over bytes that failed their hash check", async () => {
  // Changed bytes that still satisfy the assertion: the assertion must not pass on them.
  const r = await checked(await inputs({ up: `${UPGRADE}// edited\n`, extra: EXTRA }));
  assertEquals(r.sources[0]!.reason, "EvidenceHashMismatch");
  const a = r.assertions[0]!;
  assertEquals(a.verdict, "fail");
  assert(a.message.includes("did not pass its hash check"), a.message);
});

Deno.test("checkEvidence() fails the result on a failing source that no assertion reads", async () => {
  const r = await checked(await inputs({ up: UPGRADE, extra: "package tampered\n" }));
  assertEquals(r.assertions.map((a) => a.verdict), ["pass"]);
  assertEquals(r.sources[1]!.reason, "EvidenceHashMismatch");
  assertEquals(r.ok, false);
  assertEquals(r.counts.sources, { passed: 1, failed: 1 });
});

// --- source scanning --------------------------------------------------------------------------

Deno.test("checkOrder() ignores a call named only in a block comment", () => {
  assertEquals(
    checkOrder("func f() {\n\t/* a() */\n\tb()\n\ta()\n}\n", "f", ["a", "b"]).holds,
    false,
  );
});

Deno.test("checkOrder() reads an escaped quote as part of the string, not its end", () => {
  const src = 'func f() {\n\ts := "\\" b()"\n\ta()\n\tb()\n}\n';
  assertEquals(checkOrder(src, "f", ["b", "a"]).holds, false);
  assert(checkOrder(src, "f", ["a", "b"]).holds);
});

Deno.test("checkOrder() matches a dotted call literally, not as a pattern", () => {
  assertEquals(checkOrder("func f() {\n\taxb()\n\tc()\n}\n", "f", ["a.b", "c"]).holds, false);
  assert(checkOrder("func f() {\n\ta.b()\n\tc()\n}\n", "f", ["a.b", "c"]).holds);
});

Deno.test("checkOrder() does not take a longer identifier ending in the name for the call", () => {
  const src = "func f() {\n\tprepull()\n\tinstall()\n\tpull()\n}\n";
  assertEquals(checkOrder(src, "f", ["pull", "install"]).holds, false);
});

Deno.test("checkOrder() does not count a call made after the function ends", () => {
  const src = "func f() {\n\ta()\n}\n\nfunc g() {\n\tb()\n}\n";
  assertEquals(checkOrder(src, "f", ["a", "b"]).message, "call b not found in f");
});

Deno.test("checkOrder() does not count a mention of the name that is not a call", () => {
  const src = "func f() {\n\tg := b\n\ta()\n\tb()\n}\n";
  assertEquals(checkOrder(src, "f", ["b", "a"]).holds, false);
});

Deno.test("checkIndependent() does not take a longer identifier starting with the option for a use", () => {
  const src = "func up(o Opts) {\n\tif o.DryRun {\n\t\tpull(o.Pre)\n\t}\n\tlog(o.PreX)\n}\n";
  assertEquals(checkIndependent(src, "up", "Pre", "DryRun").holds, false);
});

Deno.test("checkIndependent() counts a use in the condition of an if on the flag as guarded", () => {
  const src = "func up(o Opts) {\n\tif o.DryRun && o.PrePull {\n\t\treturn\n\t}\n}\n";
  assertEquals(checkIndependent(src, "up", "PrePull", "DryRun").holds, false);
});

Deno.test("checkIndependent() ignores the option named in a comment or a string", () => {
  for (const mention of ["// PrePull is skipped on a dry run", 'log("o.PrePull")']) {
    const src = `func up(o Opts) {\n\t${mention}\n\tif !o.DryRun {\n\t\tpull(o.PrePull)\n\t}\n}\n`;
    assertEquals(checkIndependent(src, "up", "PrePull", "DryRun").holds, false, mention);
  }
});

// --- bound files ------------------------------------------------------------------------------

const policyBytes = Deno.readFileSync(`${ROOT}policies/home-ops.yaml`);
const POLICY_SHA = await sha256Hex(policyBytes);
const manifestBytes = Deno.readFileSync(`${ROOT}evidence/upgrade-order.yaml`);
const MANIFEST_SHA = await sha256Hex(manifestBytes);
const dec = new TextDecoder();

async function talosPlan(evidence: { path: string; sha256: string }) {
  const yaml = buildTalosUpgradePlanYaml({ catalogueSha256: "c".repeat(64), evidence });
  const r = await safeParsePlan(enc.encode(yaml), { file: "p.yaml" });
  assert(r.ok);
  return r.parsed.plan;
}

Deno.test("checkBoundFiles() checks the evidence manifest a KubernetesUpgrade plan binds", async () => {
  const yaml = Deno.readTextFileSync(`${ROOT}plans/kubernetes-v1.36.0.yaml`).replace(
    "  retry:\n",
    `  evidence:\n    path: evidence/upgrade-order.yaml\n    sha256: ${MANIFEST_SHA}\n  retry:\n`,
  );
  const r = await safeParsePlan(enc.encode(yaml), { file: "k.yaml" });
  assert(r.ok, JSON.stringify(!r.ok && r.problems));
  assertEquals(r.parsed.plan.kind, "KubernetesUpgrade");
  const issues = checkBoundFiles(r.parsed.plan, {
    evidence: { status: "missing", detail: "NotFound" },
  });
  assertEquals(issues.map((i) => i.reason), ["EvidenceManifestMissing"]);
  const edited = {
    status: "read" as const,
    sha256: "e".repeat(64),
    text: dec.decode(manifestBytes),
  };
  assertEquals(checkBoundFiles(r.parsed.plan, { evidence: edited }).map((i) => i.reason), [
    "EvidenceManifestDigestMismatch",
  ]);
});

Deno.test("checkBoundFiles() parses new bytes at a known path again, never reusing the old verdict", async () => {
  const path = "guard/memo-by-digest.yaml";
  const good = await talosPlan({ path, sha256: MANIFEST_SHA });
  const goodLoad = {
    status: "read" as const,
    sha256: MANIFEST_SHA,
    text: dec.decode(manifestBytes),
  };
  assertEquals(checkBoundFiles(good, { evidence: goodLoad }), []);
  const broken = "apiVersion: cairn.dev/v1alpha1\nkind: EvidenceManifest\n";
  const brokenSha = await sha256Hex(enc.encode(broken));
  const rebound = await talosPlan({ path, sha256: brokenSha });
  const issues = checkBoundFiles(rebound, {
    evidence: { status: "read", sha256: brokenSha, text: broken },
  });
  assertEquals(issues.map((i) => i.reason), ["EvidenceManifestInvalid"]);
});

Deno.test("checkBoundFiles() refuses the health policy bound again as the evidence manifest", async () => {
  const plan = await talosPlan({ path: "policies/home-ops.yaml", sha256: POLICY_SHA });
  const load = { status: "read" as const, sha256: POLICY_SHA, text: dec.decode(policyBytes) };
  const issues = checkBoundFiles(plan, { healthPolicy: load, evidence: load });
  assertEquals(issues.map((i) => `${i.reason}@${i.path.join(".")}`), [
    "EvidenceManifestInvalid@spec.evidence.path",
  ]);
});
