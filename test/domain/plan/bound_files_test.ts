import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { fileURLToPath as fromFileUrl } from "node:url";
import { checkBoundFiles } from "../../../src/domain/plan/bound_files.ts";
import { sha256Hex } from "../../../src/domain/plan/digest.ts";
import {
  buildTalosUpgradePlanYaml,
  HOME_OPS_HEALTH_POLICY_SHA256,
  type TalosPlanOptions,
} from "../../../src/domain/plan/example.ts";
import { safeParsePlan } from "../../../src/domain/plan/parse.ts";

const ROOT = fromFileUrl(new URL("../../../", import.meta.url));
const read = (p: string) => Deno.readFile(`${ROOT}${p}`);
const policyBytes = await read("policies/home-ops.yaml");
const manifestBytes = await read("evidence/upgrade-order.yaml");
const POLICY_SHA = await sha256Hex(policyBytes);
const MANIFEST_SHA = await sha256Hex(manifestBytes);
const text = (b: Uint8Array) => new TextDecoder().decode(b);

async function talosPlan(extra: Partial<TalosPlanOptions> = {}, evidence = true) {
  const yaml = buildTalosUpgradePlanYaml({
    catalogueSha256: "c".repeat(64),
    ...(evidence
      ? { evidence: { path: "evidence/upgrade-order.yaml", sha256: MANIFEST_SHA } }
      : {}),
    ...extra,
  });
  const r = await safeParsePlan(new TextEncoder().encode(yaml), { file: "p.yaml" });
  assert(r.ok);
  return r.parsed.plan;
}

const read_ = (bytes: Uint8Array, sha256: string) => ({
  status: "read" as const,
  sha256,
  text: text(bytes),
});

Deno.test("the home-ops policy in policies/ is byte-identical to the health fixture and its digest is the builder's", async () => {
  assertEquals(policyBytes, await read("fixtures/health/home-ops.yaml"));
  assertEquals(HOME_OPS_HEALTH_POLICY_SHA256, POLICY_SHA);
});

Deno.test("the evidence manifest in evidence/ is byte-identical to the evidence fixture", async () => {
  assertEquals(manifestBytes, await read("fixtures/evidence/upgrade-order.yaml"));
});

Deno.test("checkBoundFiles() accepts the real policy and manifest at their bound digests", async () => {
  const plan = await talosPlan();
  const loads = {
    healthPolicy: read_(policyBytes, POLICY_SHA),
    evidence: read_(manifestBytes, MANIFEST_SHA),
  };
  assertEquals(checkBoundFiles(plan, loads), []);
});

Deno.test("checkBoundFiles() names a missing file, a changed file and a policy for another cluster", async () => {
  const plan = await talosPlan();
  const missing = { status: "missing" as const, detail: "NotFound" };
  const reasons = (loads: Parameters<typeof checkBoundFiles>[1]) =>
    checkBoundFiles(plan, loads).map((i) => `${i.reason}@${i.path.join(".")}`);
  assertEquals(reasons({ healthPolicy: missing, evidence: missing }), [
    "HealthPolicyMissing@spec.healthPolicy.path",
    "EvidenceManifestMissing@spec.evidence.path",
  ]);
  const edited = new Uint8Array([...policyBytes, 10]);
  assertEquals(reasons({ healthPolicy: read_(edited, await sha256Hex(edited)) }), [
    "HealthPolicyDigestMismatch@spec.healthPolicy.sha256",
  ]);
  const lab = text(policyBytes).replace("  cluster: home-ops\n", "  cluster: lab\n");
  // The digest matches what was read: only the cluster relation can refuse it.
  const labSha = await sha256Hex(new TextEncoder().encode(lab));
  const labPlan = await talosPlan({ healthPolicySha256: labSha });
  assertEquals(
    checkBoundFiles(labPlan, { healthPolicy: { status: "read", sha256: labSha, text: lab } })
      .map((i) => i.reason),
    ["HealthPolicyClusterMismatch"],
  );
});

Deno.test("checkBoundFiles() refuses a manifest that matches its digest but does not parse", async () => {
  const broken = "apiVersion: cairn.dev/v1alpha1\nkind: EvidenceManifest\n";
  const plan2 = await talosPlan({ evidence: { path: "e.yaml", sha256: "a".repeat(64) } });
  const issues = checkBoundFiles(plan2, {
    evidence: { status: "read", sha256: "a".repeat(64), text: broken },
  });
  assertEquals(issues.map((i) => i.reason), ["EvidenceManifestInvalid"]);
  assert(issues[0]!.message.includes("e.yaml:"), issues[0]!.message);
});

Deno.test("checkBoundFiles() checks no evidence for a plan that binds none", async () => {
  const plan = await talosPlan({}, false);
  const stray = { status: "missing" as const, detail: "NotFound" };
  assertEquals(checkBoundFiles(plan, { evidence: stray }), []);
});
