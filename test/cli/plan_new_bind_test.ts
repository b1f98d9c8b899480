import { deepStrictEqual as assertEquals, ok as assert, rejects } from "node:assert/strict";
import { parse } from "yaml";
import { type Command, type CommandIO } from "../../src/cli/command.ts";
import { parseCommandArgs } from "../../src/cli/command_args.ts";
import { command as bind } from "../../src/cli/plan_bind.ts";
import { command as check } from "../../src/cli/plan_check.ts";
import { command as planNew } from "../../src/cli/plan_new.ts";
import { registryInstallerResolver } from "../../src/adapters/oci/installer_resolver.ts";
import { CairnError } from "../../src/domain/errors.ts";
import { buildInstallerContent } from "../../src/sim/registry/installer_images.ts";
import { startRegistrySim } from "../../src/sim/registry/server.ts";
import { makePlanRepo, PLAN_REPO_NOW, REPO_ROOT } from "../_helpers/plan_repo.ts";

async function runIn(cwd: string, cmd: Command, argv: string[]) {
  let stdout = "", stderr = "";
  const io: CommandIO = {
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
    env: {},
    cwd,
    color: false,
    tty: false,
    signal: new AbortController().signal,
  };
  const code = await cmd.run(parseCommandArgs(cmd, argv), io);
  return { code, stdout, stderr };
}

const NOW = ["--now", PLAN_REPO_NOW];
const SCHEMATIC = "30684e2ddd0b9d61be817efe9f71ba839dc0e7610d8bc111fe7f70c6b29db08b";

async function homeOpsRegistry() {
  const description = parse(
    await Deno.readTextFile(`${REPO_ROOT}fixtures/clusters/home-ops.yaml`),
  ) as { spec: { installerImages: string[] } };
  return await startRegistrySim(buildInstallerContent(description.spec.installerImages));
}

Deno.test("plan new talos from the home-ops description writes the shipped plan's bindings, hop and order, and it passes plan check", async () => {
  const dir = await makePlanRepo("cairn-plan-new-");
  const registry = await homeOpsRegistry();
  try {
    const argv = [
      "talos",
      "--nodes",
      "fixtures/clusters/home-ops.yaml",
      "--cluster",
      "home-ops",
      "--from",
      "v1.13.9",
      "--to",
      "v1.14.2",
      "--author",
      "alice@example.com",
      "--evidence",
      "evidence/upgrade-order.yaml",
      "--out",
      "plans/new.yaml",
      "--registry-mirror",
      `factory.talos.dev=${registry.url}`,
      ...NOW,
    ];
    const r = await runIn(dir, planNew, argv);
    assertEquals([r.code, r.stderr], [0, ""]);
    assert(r.stdout.startsWith("wrote plans/new.yaml: talos-v1.14.2, v1.13.9→v1.14.2, 7 nodes"));
    const checked = await runIn(dir, check, ["plans/new.yaml", ...NOW]);
    assertEquals([checked.code, checked.stderr], [0, ""]);

    const written = parse(await Deno.readTextFile(`${dir}/plans/new.yaml`));
    const shipped = parse(await Deno.readTextFile(`${dir}/plans/talos-v1.14.2.yaml`));
    for (const key of ["catalogue", "healthPolicy", "evidence", "nodes", "kubernetes"]) {
      assertEquals(written.spec[key], shipped.spec[key], key);
    }
    // The same hop and installer; plan new pins the linux/amd64 manifest, the shipped plan the
    // index it is selected from (dispatch accepts either: both fix the platform's bytes).
    const [w, s] = [written.spec.hops[0], shipped.spec.hops[0]];
    assertEquals([written.spec.hops.length, w.from, w.to, w.rpcPath], [1, s.from, s.to, s.rpcPath]);
    const [wRef, wDigest] = w.installer.image.split("@");
    const [sRef, sDigest] = s.installer.image.split("@");
    assertEquals(wRef, sRef);
    const resolved = await registryInstallerResolver({
      mirrors: { "factory.talos.dev": registry.url },
      timeoutMs: 10_000,
    }).resolve(wRef, { os: "linux", architecture: "amd64" });
    assert(resolved.ok);
    assertEquals([resolved.value.digest, resolved.value.indexDigest], [wDigest, sDigest]);
    assertEquals(
      written.spec.nodes.map((n: { role: string }) => n.role),
      ["worker", "worker", "worker", "worker", "controlplane", "controlplane", "controlplane"],
    );

    // Never overwritten without --force; with it, rewritten.
    await rejects(
      runIn(dir, planNew, argv),
      (e) =>
        e instanceof CairnError && e.reason === "AuthoringInputInvalid" &&
        e.message.includes("--force"),
    );
    assertEquals((await runIn(dir, planNew, [...argv, "--force"])).code, 0);
  } finally {
    await registry.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("plan new refuses when an installer cannot be resolved, and writes nothing", async () => {
  const dir = await makePlanRepo("cairn-plan-new-unresolved-");
  const registry = await startRegistrySim(buildInstallerContent([])); // serves nothing
  try {
    await rejects(
      runIn(dir, planNew, [
        "talos",
        "--nodes",
        "fixtures/clusters/home-ops.yaml",
        "--to",
        "v1.14.2",
        "--author",
        "alice@example.com",
        "--out",
        "plans/unresolved.yaml",
        "--registry-mirror",
        `factory.talos.dev=${registry.url}`,
        ...NOW,
      ]),
      (e) => e instanceof CairnError && e.message.includes("cannot resolve the installer"),
    );
    // A plan that would fail plan check (here: already expired) is not kept either.
    const registryOk = await homeOpsRegistry();
    try {
      const expired = await runIn(dir, planNew, [
        "talos",
        "--nodes",
        "fixtures/clusters/home-ops.yaml",
        "--to",
        "v1.14.2",
        "--author",
        "alice@example.com",
        "--out",
        "plans/expired.yaml",
        "--expires",
        "2026-11-01T00:00:00Z",
        "--registry-mirror",
        `factory.talos.dev=${registryOk.url}`,
        ...NOW,
      ]);
      assertEquals(expired.code, 1);
      assert(expired.stderr.includes("plans/expired.yaml:"), expired.stderr);
      assert(expired.stderr.includes("PlanExpired"), expired.stderr);
    } finally {
      await registryOk.stop();
    }
    const left = [...Deno.readDirSync(`${dir}/plans`)].map((e) => e.name);
    assertEquals(left, ["talos-v1.14.2.yaml"]);
  } finally {
    await registry.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

/** A catalogue four minors wide, dated at the test's now. */
const WIDE_CATALOGUE = `apiVersion: cairn.dev/v1alpha1
kind: ReleaseCatalogue
metadata:
  product: talos
  snapshotAt: 2026-11-20T00:00:00Z
spec:
  minors:
    - minor: "1.11"
      kubernetes: { min: "1.30", max: "1.35" }
      releases: [{ version: v1.11.0 }, { version: v1.11.1 }, { version: v1.11.3 }]
    - minor: "1.12"
      kubernetes: { min: "1.30", max: "1.35" }
      releases: [{ version: v1.12.0 }, { version: v1.12.5 }, { version: v1.12.6-rc.0 }]
    - minor: "1.13"
      kubernetes: { min: "1.31", max: "1.36" }
      releases: [{ version: v1.13.0 }, { version: v1.13.9 }]
    - minor: "1.14"
      kubernetes: { min: "1.32", max: "1.37" }
      releases: [{ version: v1.14.0 }, { version: v1.14.1 }, { version: v1.14.2 }]
`;

Deno.test("plan new --to three minors ahead walks the latest patch of each minor, installers resolved per hop", async () => {
  const dir = await makePlanRepo("cairn-plan-new-wide-");
  const hops = ["v1.11.3", "v1.12.5", "v1.13.9", "v1.14.2"];
  const refs = hops.map((v) => `factory.talos.dev/metal-installer/${SCHEMATIC}:${v}`);
  const registry = await startRegistrySim(buildInstallerContent(refs));
  try {
    await Deno.writeTextFile(`${dir}/catalogue/wide.yaml`, WIDE_CATALOGUE);
    await Deno.writeTextFile(
      `${dir}/inventory.yaml`,
      `apiVersion: cairn.dev/v1alpha1
kind: NodeInventory
metadata: { name: home-ops }
spec:
  kubernetesVersion: v1.35.2
  nodes:
    - { name: cp-1, role: controlplane, address: 10.5.0.3, schematic: ${SCHEMATIC}, talosVersion: v1.11.1 }
    - { name: worker-1, role: worker, address: 10.5.0.6, schematic: ${SCHEMATIC}, talosVersion: v1.11.1 }
`,
    );
    const r = await runIn(dir, planNew, [
      "talos",
      "--nodes",
      "inventory.yaml",
      "--to",
      "v1.14.2",
      "--author",
      "alice@example.com",
      "--catalogue",
      "catalogue/wide.yaml",
      "--out",
      "plans/wide.yaml",
      "--registry-mirror",
      `factory.talos.dev=${registry.url}`,
      "-o",
      "json",
      ...NOW,
    ]);
    assertEquals([r.code, r.stderr], [0, ""]);
    assertEquals(JSON.parse(r.stdout).hops, [
      { from: "v1.11.1", to: "v1.11.3" },
      { from: "v1.11.3", to: "v1.12.5" },
      { from: "v1.12.5", to: "v1.13.9" },
      { from: "v1.13.9", to: "v1.14.2" },
    ]);
    const plan = parse(await Deno.readTextFile(`${dir}/plans/wide.yaml`));
    assertEquals(plan.spec.nodes.map((n: { name: string }) => n.name), ["worker-1", "cp-1"]);
    for (const [i, h] of plan.spec.hops.entries()) {
      assert(
        new RegExp(`^${refs[i]!.replaceAll(".", "\\.")}@sha256:[0-9a-f]{64}$`).test(
          h.installer.image,
        ),
        h.installer.image,
      );
    }
    assertEquals(plan.spec.hops.map((h: { rpcPath: string }) => h.rpcPath), [
      "legacy",
      "legacy",
      "legacy",
      "lifecycle",
    ]);
    const checked = await runIn(dir, check, ["plans/wide.yaml", ...NOW]);
    assertEquals([checked.code, checked.stderr], [0, ""]);
  } finally {
    await registry.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("plan bind after editing the health policy rewrites only that digest and plan check passes again", async () => {
  const dir = await makePlanRepo("cairn-plan-bind-");
  try {
    const plan = "plans/talos-v1.14.2.yaml";
    await Deno.writeTextFile(`${dir}/${plan}.sig`, "kept as is\n");
    const before = await Deno.readTextFile(`${dir}/${plan}`);
    const unchanged = await runIn(dir, bind, [plan]);
    assertEquals(unchanged.code, 0);
    assert(unchanged.stdout.includes("unchanged"), unchanged.stdout);
    assertEquals(await Deno.readTextFile(`${dir}/${plan}`), before);

    await Deno.writeTextFile(
      `${dir}/policies/home-ops.yaml`,
      "# tightened after review\n",
      { append: true },
    );
    const stale = await runIn(dir, check, [plan, ...NOW]);
    assertEquals(stale.code, 1);
    assert(stale.stderr.includes("HealthPolicyDigestMismatch"), stale.stderr);

    const r = await runIn(dir, bind, [plan, "-o", "json"]);
    assertEquals([r.code, JSON.parse(r.stdout).changed], [0, ["spec.healthPolicy"]]);
    const text = await runIn(dir, bind, [plan]);
    assert(text.stdout.includes("unchanged"));
    const after = await Deno.readTextFile(`${dir}/${plan}`);
    const diff = before.split("\n").map((l, i) => [l, after.split("\n")[i]]).filter(([a, b]) =>
      a !== b
    );
    assertEquals(diff.length, 1);
    assert(diff[0]![0]!.trim().startsWith("sha256: "));
    assertEquals((await runIn(dir, check, [plan, ...NOW])).code, 0);
    assertEquals(await Deno.readTextFile(`${dir}/${plan}.sig`), "kept as is\n");

    await Deno.remove(`${dir}/evidence/upgrade-order.yaml`);
    await rejects(runIn(dir, bind, [plan]), (e) => e instanceof CairnError);
    assertEquals(await Deno.readTextFile(`${dir}/${plan}`), after);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("plan bind prints a message naming the re-signing when a digest changed", async () => {
  const dir = await makePlanRepo("cairn-plan-bind-msg-");
  try {
    await Deno.writeTextFile(`${dir}/catalogue/talos.yaml`, "# note\n", { append: true });
    const r = await runIn(dir, bind, ["plans/talos-v1.14.2.yaml"]);
    assertEquals(r.code, 0);
    assert(r.stdout.includes("rebound spec.catalogue"), r.stdout);
    assert(r.stdout.includes("sign it again"), r.stdout);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("plan new kubernetes writes the control planes first and passes plan check; a skipped minor is refused, nothing kept", async () => {
  const dir = await makePlanRepo("cairn-plan-new-k8s-");
  try {
    const argv = [
      "kubernetes",
      "--nodes",
      "fixtures/clusters/home-ops.yaml",
      "--to",
      "v1.36.0",
      "--talos",
      "v1.14.2",
      "--author",
      "alice@example.com",
      "--out",
      "plans/k8s.yaml",
      ...NOW,
    ];
    const r = await runIn(dir, planNew, argv);
    assertEquals([r.code, r.stderr], [0, ""]);
    assertEquals((await runIn(dir, check, ["plans/k8s.yaml", ...NOW])).code, 0);
    const plan = parse(await Deno.readTextFile(`${dir}/plans/k8s.yaml`));
    assertEquals([plan.kind, plan.spec.from, plan.spec.to], [
      "KubernetesUpgrade",
      "v1.35.2",
      "v1.36.0",
    ]);
    assertEquals(
      plan.spec.nodes.map((n: { role: string }) => n.role),
      ["controlplane", "controlplane", "controlplane", "worker", "worker", "worker", "worker"],
    );
    const skipped = await runIn(dir, planNew, [
      ...argv.slice(0, 4),
      "v1.37.0",
      ...argv.slice(5, 10),
      "plans/skip.yaml",
      ...NOW,
    ]);
    assertEquals(skipped.code, 1);
    assert(skipped.stderr.includes("plans/skip.yaml:"), skipped.stderr);
    assert(skipped.stderr.includes("SkippedMinor"), skipped.stderr);
    assertEquals(await Deno.stat(`${dir}/plans/skip.yaml`).then(() => true, () => false), false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("plan new config binds the machine-config patch by digest and plan new component writes a Flux-delivered bump; both pass plan check", async () => {
  const dir = await makePlanRepo("cairn-plan-new-config-");
  try {
    await Deno.mkdir(`${dir}/talos/home-ops`, { recursive: true });
    const patch = "machine:\n  time:\n    servers: [time.cloudflare.com]\n";
    await Deno.writeTextFile(`${dir}/talos/home-ops/ntp.yaml`, patch);
    const config = await runIn(dir, planNew, [
      "config",
      "--nodes",
      "fixtures/clusters/home-ops.yaml",
      "--mode",
      "noReboot",
      "--activation",
      "immediate",
      "--config",
      "talos/home-ops/ntp.yaml",
      "--author",
      "alice@example.com",
      ...NOW,
    ]);
    assertEquals([config.code, config.stderr], [0, ""]);
    const c = parse(await Deno.readTextFile(`${dir}/plans/config-ntp.yaml`));
    const digest = Array.from(
      new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(patch))),
    ).map((b) => b.toString(16).padStart(2, "0")).join("");
    assertEquals(c.spec.config, { path: "talos/home-ops/ntp.yaml", sha256: digest });
    assertEquals([c.spec.talosVersion, c.spec.nodes[0].role], ["v1.13.9", "worker"]);
    assertEquals((await runIn(dir, check, ["plans/config-ntp.yaml", ...NOW])).code, 0);

    const component = await runIn(dir, planNew, [
      "component",
      "--cluster",
      "home-ops",
      "--component",
      "cilium",
      "--flux-namespace",
      "kube-system",
      "--from",
      "v1.17.6",
      "--to",
      "v1.18.2",
      "--author",
      "alice@example.com",
      "--out",
      "plans/cilium.yaml",
      ...NOW,
    ]);
    assertEquals([component.code, component.stderr], [0, ""]);
    const u = parse(await Deno.readTextFile(`${dir}/plans/cilium.yaml`));
    assertEquals(u.spec.flux, { kind: "HelmRelease", namespace: "kube-system", name: "cilium" });
    assertEquals((await runIn(dir, check, ["plans/cilium.yaml", ...NOW])).code, 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
