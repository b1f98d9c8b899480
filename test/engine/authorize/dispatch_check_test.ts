/**
 * The dispatch check re-runs every authorising check on evidence read at the moment of dispatch:
 * plan checks (same code as `cairn plan check`), bound-file digests, expiry, catalogue freshness,
 * the trust root as it is now, the cluster's own identity and each hop's installer resolution.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { allowedSignersText, type DemoSigner, demoSigner } from "../../../src/app/demo_keys.ts";
import { parsePlan } from "../../../src/domain/plan/parse.ts";
import { boundHealthPolicy } from "../../../src/engine/authorize/bound_policy.ts";
import { parseAllowedSigners } from "../../../src/domain/trust/allowed_signers.ts";
import {
  checkAtDispatch,
  type DispatchPorts,
  type DispatchSubject,
} from "../../../src/engine/authorize/dispatch_check.ts";
import type {
  BoundFileSource,
  ClusterIdentitySource,
  InstallerResolver,
} from "../../../src/ports/dispatch.ts";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const PLAN = "plans/talos-v1.14.2.yaml";
const PINNED = "sha256:ab24c2b78ee916b5dbc6ddefe4d83bebd13346573d4c56f9c18210ea9f01a0b3";
const NOW = Date.parse("2026-12-01T10:00:00Z");

/** The repository's bound files in memory, editable per test. */
async function repoFiles(): Promise<Map<string, Uint8Array>> {
  const files = new Map<string, Uint8Array>();
  for (
    const p of ["catalogue/talos.yaml", "policies/home-ops.yaml", "evidence/upgrade-order.yaml"]
  ) {
    files.set(p, await Deno.readFile(join(ROOT, p)));
  }
  return files;
}

function memoryFiles(files: Map<string, Uint8Array>): BoundFileSource {
  return {
    describe: () => "memory",
    read: (path) => {
      const bytes = files.get(path);
      return Promise.resolve(
        bytes ? { status: "read", bytes } : { status: "missing", detail: "not in memory" },
      );
    },
  };
}

const clusterNamed = (name: string): ClusterIdentitySource => ({
  read: (node) => Promise.resolve({ name, id: "id-1", source: `test from ${node}` }),
});

const registryAnswering = (digest: string): InstallerResolver => ({
  describe: () => "test registry",
  resolve: (reference, platform) =>
    Promise.resolve({
      ok: true,
      value: {
        reference,
        platform: `${platform.os}/${platform.architecture}`,
        digest,
        registry: "test",
      },
    }),
});

interface Fixture {
  subject: DispatchSubject;
  ports: DispatchPorts;
  files: Map<string, Uint8Array>;
  signers: DemoSigner[];
  trustText: { value: string };
}

async function fixture(edit: (t: string) => string = (t) => t): Promise<Fixture> {
  const text = edit(await Deno.readTextFile(join(ROOT, PLAN)));
  const bytes = new TextEncoder().encode(text);
  const parsed = await parsePlan(bytes, { file: PLAN });
  const signers = [await demoSigner("alice@example.com"), await demoSigner("bob@example.com")];
  const signatures = (await Promise.all(signers.map((s) => s.sign(bytes)))).join("");
  const trustText = { value: allowedSignersText(signers) };
  const files = await repoFiles();
  return {
    subject: { plan: parsed.plan, bytes, signatures, requiredApprovals: 1 },
    ports: {
      files: memoryFiles(files),
      trust: {
        load: () => Promise.resolve(parseAllowedSigners(trustText.value, "allowed_signers")),
      },
      clock: { now: () => NOW, sleep: () => Promise.resolve() },
      cluster: clusterNamed("home-ops"),
      installers: registryAnswering(PINNED),
    },
    files,
    signers,
    trustText,
  };
}

function reasons(r: { refusals: readonly { reason: string }[] }): string[] {
  return r.refusals.map((x) => x.reason);
}

Deno.test("dispatch check passes on current evidence and hands over the bound health policy", async () => {
  const f = await fixture();
  const r = await checkAtDispatch(f.subject, f.ports, "worker-1");
  assertEquals(r.verdict, "pass", JSON.stringify(r.refusals));
  assertEquals(r.items.map((i) => [i.check, i.verdict]), [
    ["plan", "pass"],
    ["trust-root", "pass"],
    ["cluster-identity", "pass"],
    ["installer", "pass"],
  ]);
  assert(r.policy && r.policy.bindings.length > 0, "the bound policy is returned");
  assertEquals(r.installers[0]?.resolved?.digest, PINNED);
});

Deno.test("dispatch check refuses a plan for another cluster than the one the cluster reports", async () => {
  const f = await fixture();
  const r = await checkAtDispatch(
    f.subject,
    { ...f.ports, cluster: clusterNamed("prod-eu") },
    "cp-1",
  );
  assertEquals([r.verdict, reasons(r)], ["refused", ["ClusterIdentityMismatch"]]);
  assert(r.refusals[0]!.message.includes("the plan is for cluster home-ops"));
  assert(r.refusals[0]!.message.includes("prod-eu"));
  assertEquals(r.policy, undefined, "no policy is handed over for a refused plan");
});

Deno.test("dispatch check holds when the cluster's identity cannot be read", async () => {
  const f = await fixture();
  const cluster: ClusterIdentitySource = { read: () => Promise.reject(new Error("apid down")) };
  const r = await checkAtDispatch(f.subject, { ...f.ports, cluster }, "worker-1");
  assertEquals([r.verdict, reasons(r)], ["held", ["ClusterIdentityUnreadable"]]);
});

Deno.test("dispatch check re-reads the trust root: a removed approver stops the plan", async () => {
  const f = await fixture();
  assertEquals((await checkAtDispatch(f.subject, f.ports, "worker-1")).verdict, "pass");
  f.trustText.value = allowedSignersText([f.signers[0]!]);
  const r = await checkAtDispatch(f.subject, f.ports, "worker-2");
  assertEquals(r.verdict, "refused");
  assertEquals(r.items.find((i) => i.check === "trust-root")?.verdict, "fail");
  assert(reasons(r).every((x) => ["SignerNotTrusted", "ApprovalsInsufficient"].includes(x)));
});

Deno.test("dispatch check holds when the trust root cannot be read now", async () => {
  const f = await fixture();
  const trust = { load: () => Promise.reject(new Error("ENOENT allowed_signers")) };
  const r = await checkAtDispatch(f.subject, { ...f.ports, trust }, "worker-1");
  assertEquals([r.verdict, reasons(r)], ["held", ["TrustRootUnreadable"]]);
});

Deno.test("dispatch check refuses bound files changed after approval", async (t) => {
  for (
    const [path, reason] of [
      ["catalogue/talos.yaml", "CatalogueDigestMismatch"],
      ["policies/home-ops.yaml", "HealthPolicyDigestMismatch"],
      ["evidence/upgrade-order.yaml", "EvidenceManifestDigestMismatch"],
    ] as const
  ) {
    await t.step(path, async () => {
      const f = await fixture();
      const text = new TextDecoder().decode(f.files.get(path));
      f.files.set(path, new TextEncoder().encode(text + "# edited after approval\n"));
      const r = await checkAtDispatch(f.subject, f.ports, "worker-1");
      assertEquals([r.verdict, reasons(r)], ["refused", [reason]]);
    });
  }
});

Deno.test("dispatch check holds when a bound file is gone", async () => {
  const f = await fixture();
  f.files.delete("policies/home-ops.yaml");
  const r = await checkAtDispatch(f.subject, f.ports, "worker-1");
  assertEquals([r.verdict, reasons(r)], ["held", ["HealthPolicyMissing"]]);
});

Deno.test("dispatch check refuses a plan that expired before dispatch", async () => {
  const f = await fixture();
  const later = Date.parse(f.subject.plan.metadata.expires) + 1000;
  const r = await checkAtDispatch(f.subject, {
    ...f.ports,
    clock: { now: () => later, sleep: () => Promise.resolve() },
  }, "worker-1");
  assertEquals(r.verdict, "refused");
  assert(reasons(r).includes("PlanExpired"), reasons(r).join());
});

Deno.test("dispatch check refuses a skipped minor exactly as plan check does", async () => {
  const f = await fixture((t) => t.replaceAll("v1.14.2", "v1.15.0"));
  const r = await checkAtDispatch(f.subject, f.ports, "worker-1");
  assertEquals(r.verdict, "refused");
  assert(reasons(r).includes("SkippedMinor"), reasons(r).join());
});

Deno.test("dispatch check refuses an installer that resolves to another digest", async () => {
  const f = await fixture();
  const other = `sha256:${"1".repeat(64)}`;
  const r = await checkAtDispatch(
    f.subject,
    { ...f.ports, installers: registryAnswering(other) },
    "worker-1",
  );
  assertEquals([r.verdict, reasons(r)], ["refused", ["InstallerDigestMismatch"]]);
  assert(r.refusals[0]!.message.includes(other) && r.refusals[0]!.message.includes(PINNED));
  assertEquals(r.installers[0]?.resolved?.digest, other, "the resolution is kept as evidence");
});

Deno.test("dispatch check: a missing image refuses, an unreadable registry holds, none passes", async (t) => {
  const failing = (reason: "ImageNotFound" | "RegistryUnreadable"): InstallerResolver => ({
    describe: () => "test registry",
    resolve: () => Promise.resolve({ ok: false, failure: { reason, message: reason } }),
  });
  await t.step("ImageNotFound refuses", async () => {
    const f = await fixture();
    const r = await checkAtDispatch(
      f.subject,
      { ...f.ports, installers: failing("ImageNotFound") },
      "w",
    );
    assertEquals([r.verdict, reasons(r)], ["refused", ["ImageNotFound"]]);
  });
  await t.step("RegistryUnreadable holds", async () => {
    const f = await fixture();
    const r = await checkAtDispatch(
      f.subject,
      { ...f.ports, installers: failing("RegistryUnreadable") },
      "w",
    );
    assertEquals([r.verdict, reasons(r)], ["held", ["RegistryUnreadable"]]);
  });
  await t.step("no resolver: recorded as not evaluated, never as a pass", async () => {
    const f = await fixture();
    const { installers: _, ...ports } = f.ports;
    const r = await checkAtDispatch(f.subject, ports, "w");
    assertEquals(r.items.find((i) => i.check === "installer")?.verdict, "not-evaluated");
  });
});

Deno.test("boundHealthPolicy() gives the bound policy only when its digest matches", async () => {
  const f = await fixture();
  const ok = await boundHealthPolicy(f.subject.plan, f.ports.files);
  assert(ok.ok && ok.sha256 === f.subject.plan.spec.healthPolicy.sha256);
  const text = new TextDecoder().decode(f.files.get("policies/home-ops.yaml"));
  f.files.set("policies/home-ops.yaml", new TextEncoder().encode(text + "# another policy\n"));
  const changed = await boundHealthPolicy(f.subject.plan, f.ports.files);
  assertEquals(changed.ok ? "ok" : changed.reason, "HealthPolicyDigestMismatch");
  f.files.delete("policies/home-ops.yaml");
  const gone = await boundHealthPolicy(f.subject.plan, f.ports.files);
  assertEquals(gone.ok ? "ok" : gone.reason, "HealthPolicyMissing");
});

Deno.test("dispatch check holds on a catalogue that went stale since approval (CatalogueStale)", async () => {
  const f = await fixture((t) =>
    t.replace(/^ {2}expires: \S+$/m, "  expires: 2027-01-31T00:00:00Z")
  );
  const later = Date.parse("2026-12-25T00:00:00Z"); // the snapshot of 2026-11-20 is 35 days old
  const r = await checkAtDispatch(f.subject, {
    ...f.ports,
    clock: { now: () => later, sleep: () => Promise.resolve() },
  }, "worker-1");
  assertEquals([r.verdict, reasons(r)], ["held", ["CatalogueStale"]]);
});
