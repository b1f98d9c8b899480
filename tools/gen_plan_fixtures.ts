// deno-lint-ignore-file no-console no-regex-spaces
/**
 * Regenerates fixtures/plans/{valid,invalid}/ from the example plans in plans/ (which bind the
 * digest of catalogue/talos.yaml). Each invalid case is one edit of a valid base; its expected
 * location is where `at` first occurs in the edited file (found by text search, not by cairn),
 * written as `# expect: line:column` on line 1. Run after changing the catalogue or the plans:
 *   deno run -A tools/gen_plan_fixtures.ts
 */
const root = new URL("../", import.meta.url);
const read = (p: string) =>
  Deno.readTextFileSync(new URL(p, root)).split("\n").filter((l, i, a) =>
    !(l.startsWith("#") && a.slice(0, i).every((x) => x.startsWith("#")))
  ).join("\n");
const T = read("plans/talos-v1.14.2.yaml");
const K = read("plans/kubernetes-v1.36.0.yaml");
const C = read("plans/config-apply-ntp.yaml");
const U = read("plans/cilium-1.18.2.yaml");
const IMG = (tag: string) => `:v1.14.2@sha256`.replace("v1.14.2", tag);

/** Rewrites the plan's expiry line, whatever date the examples currently carry. */
function setExpires(text: string, to: string): string {
  const line = /^  expires: \S+$/m;
  if (!line.test(text)) throw new Error("fixture edit: no metadata.expires line");
  return text.replace(line, `  expires: ${to}`);
}
function rep(text: string, from: string, to: string): string {
  if (!text.includes(from)) throw new Error(`fixture edit: "${from}" not found`);
  return text.replace(from, to);
}
function hop(from: string, to: string, rpc = "lifecycle") {
  return (t: string) => {
    let s = rep(
      t,
      "    - from: v1.13.9\n      to: v1.14.2\n      rpcPath: lifecycle",
      `    - from: ${from}\n      to: ${to}\n      rpcPath: ${rpc}`,
    );
    s = rep(s, IMG("v1.14.2"), IMG(to));
    return s;
  };
}
const HOP_BLOCK = /    - from: v1\.13\.9\n[\s\S]*?schematic: [0-9a-f]{64}\n/;
function hopLines(from: string, to: string, rpc: string, t: string): string {
  const block = HOP_BLOCK.exec(t)![0];
  return block.replace("from: v1.13.9", `from: ${from}`).replace("to: v1.14.2", `to: ${to}`)
    .replace("rpcPath: lifecycle", `rpcPath: ${rpc}`).replace(IMG("v1.14.2"), IMG(to));
}
function hops(list: [string, string, string][]) {
  return (t: string) =>
    t.replace(HOP_BLOCK, list.map(([f, to, r]) => hopLines(f, to, r, t)).join(""));
}

interface Case {
  readonly base: string;
  readonly edit: (t: string) => string | Uint8Array;
  /** Text whose first occurrence (after `skip` earlier ones) marks the expected location. */
  readonly at: string;
  readonly nth?: number;
  /** Column offset inside `at`. */
  readonly col?: number;
}

const INVALID: Record<string, Case> = {
  "UnknownField--top-level-status": { base: T, edit: (t) => t + "status: {}\n", at: "status:" },
  "UnknownField--metadata-labels": {
    base: T,
    edit: (t) => rep(t, "  cluster: home-ops\n", "  cluster: home-ops\n  labels: {}\n"),
    at: "labels:",
  },
  "UnknownField--node-zone": {
    base: T,
    edit: (t) => rep(t, "      address: 10.5.0.6\n", "      address: 10.5.0.6\n      zone: a\n"),
    at: "zone:",
  },
  "UnknownField--merge-key-not-merged": {
    base: T,
    edit: (t) =>
      rep(
        rep(t, "pull: {", "pull: &d {"),
        "install: { transportSeconds: 600, verificationSeconds: 900 }",
        "install: { <<: *d, transportSeconds: 600, verificationSeconds: 900 }",
      ),
    at: "<<",
  },
  "UnknownField--phases-force": {
    base: T,
    edit: (t) => rep(t, "    rebootMode: default\n", "    rebootMode: default\n    force: true\n"),
    at: "force:",
  },
  "UnknownField--hop-preserve": {
    base: T,
    edit: (t) =>
      rep(t, "      rpcPath: lifecycle\n", "      rpcPath: lifecycle\n      preserve: true\n"),
    at: "preserve:",
  },
  "PlanSchemaInvalid--maxparallel-string": {
    base: T,
    edit: (t) => rep(t, "maxParallel: 1", 'maxParallel: "1"'),
    at: '"1"',
  },
  "PlanSchemaInvalid--installer-without-digest": {
    base: T,
    edit: (t) => t.replace(/@sha256:[0-9a-f]{64}/, ""),
    at: "factory.talos.dev",
  },
  "PlanSchemaInvalid--missing-author": {
    base: T,
    edit: (t) => rep(t, "  author: alice@example.com\n", ""),
    at: "name: talos",
    col: 0,
  },
  "PlanSchemaInvalid--unknown-kind": {
    base: T,
    edit: (t) => rep(t, "kind: TalosUpgrade", "kind: TalosDowngrade"),
    at: "TalosDowngrade",
  },
  "PlanSchemaInvalid--api-version": {
    base: T,
    edit: (t) => rep(t, "cairn.dev/v1alpha1", "cairn.dev/v1"),
    at: "cairn.dev/v1",
  },
  "PlanSchemaInvalid--node-role-master": {
    base: T,
    edit: (t) => rep(t, "role: worker", "role: master"),
    at: "master",
  },
  "PlanSchemaInvalid--version-without-v": {
    base: T,
    edit: (t) => rep(t, "      to: v1.14.2", "      to: 1.14.2"),
    at: "to: 1.14.2",
    col: 4,
  },
  "PlanSchemaInvalid--expires-date-only": {
    base: T,
    edit: (t) => setExpires(t, "2026-12-20"),
    at: "2026-12-20",
  },
  "PlanSchemaInvalid--reboot-mode-force": {
    base: T,
    edit: (t) => rep(t, "rebootMode: default", "rebootMode: force"),
    at: "force",
  },
  "PlanSchemaInvalid--negative-deadline": {
    base: T,
    edit: (t) => rep(t, "pull: { transportSeconds: 300", "pull: { transportSeconds: -5"),
    at: "-5",
  },
  "BoundPathInvalid--absolute-catalogue-path": {
    base: T,
    edit: (t) => rep(t, "path: catalogue/talos.yaml", "path: /etc/catalogue.yaml"),
    at: "/etc/catalogue.yaml",
  },
  "BoundPathInvalid--health-policy-escapes-repository": {
    base: T,
    edit: (t) => rep(t, "path: policies/home-ops.yaml", "path: ../../etc/passwd"),
    at: "../../etc/passwd",
  },
  "BoundPathInvalid--evidence-dot-segment": {
    base: T,
    edit: (t) => rep(t, "path: evidence/upgrade-order.yaml", "path: evidence/./upgrade-order.yaml"),
    at: "evidence/./upgrade-order.yaml",
  },
  "PlanSchemaInvalid--empty-hops": {
    base: T,
    edit: (t) => t.replace(HOP_BLOCK, "").replace("  hops:\n", "  hops: []\n"),
    at: "[]",
  },
  "PlanSchemaInvalid--partial-drain-unreviewed": {
    base: T,
    edit: (t) =>
      t +
      "    - action: partialDrain\n      reviewedBy: bob@example.com\n      justification: reviewed\n",
    at: "action: partialDrain",
  },
  "ComponentUnknown--component-unknown": {
    base: U,
    edit: (t) => rep(t, "component: cilium", "component: istio"),
    at: "istio",
  },
  "ComponentUnknown--component-short-name": {
    base: U,
    edit: (t) => rep(t, "component: cilium", "component: cnpg"),
    at: "cnpg",
  },
  "ComponentUnknown--component-own-kind": {
    base: U,
    edit: (t) => rep(t, "component: cilium", "component: talos"),
    at: "talos",
  },
  "PlanSchemaInvalid--not-a-mapping": { base: T, edit: () => "- just\n- a list\n", at: "- just" },
  "DuplicateKey--spec-platform": {
    base: T,
    edit: (t) => rep(t, "  arch: amd64\n", "  arch: amd64\n  platform: metal\n"),
    at: "platform: metal",
    nth: 1,
  },
  "DuplicateKey--node-name": {
    base: T,
    edit: (t) =>
      rep(t, "      address: 10.5.0.6\n", "      address: 10.5.0.6\n      name: worker-9\n"),
    at: "name: worker-9",
  },
  "AliasBudgetExceeded--billion-laughs": {
    base: T,
    edit: (t) =>
      t + "lol:\n" +
      ["a", "b", "c", "d", "e", "f"].map((k, i) =>
        i === 0
          ? `  ${k}: &${k} ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n`
          : `  ${k}: &${k} [${Array(9).fill(`*${["a", "b", "c", "d", "e"][i - 1]}`).join(", ")}]\n`
      ).join(""),
    at: "*a",
  },
  "MultipleDocuments--two-plans": { base: T, edit: (t) => t + "---\n" + t, at: "---" },
  "MultipleDocuments--trailing-document": {
    base: T,
    edit: (t) => t + "---\nkind: Extra\n",
    at: "---",
  },
  "PlanSyntaxInvalid--unclosed-flow-mapping": {
    base: T,
    edit: (t) => rep(t, "verificationSeconds: 60 }\n", "verificationSeconds: 60\n"),
    at: "drain: {",
  },
  "PlanSyntaxInvalid--custom-tag": {
    base: T,
    edit: (t) => rep(t, "arch: amd64", "arch: !!js/function amd64"),
    at: "!!js",
  },
  "PlanSyntaxInvalid--bad-indent": {
    base: T,
    edit: (t) => rep(t, "  platform: metal\n", "   platform: metal\n"),
    at: "platform: metal",
    col: -3,
  },
  "PlanEncodingInvalid--latin1-byte": {
    base: T,
    edit: (t) => {
      const [a, b] = t.split("alice@example.com");
      const enc = new TextEncoder();
      return new Uint8Array([
        ...enc.encode(a!),
        0x61,
        0x6c,
        0x69,
        0x63,
        0xe9,
        ...enc.encode("@example.com" + b!),
      ]);
    },
    at: "alic",
    col: 4,
  },
  "PlanEncodingInvalid--control-character": {
    base: T,
    edit: (t) => rep(t, "cluster: home-ops", "cluster: home\u0007ops"),
    at: "\u0007",
  },
  "VersionDowngrade--1.14.2-to-1.13.9": {
    base: T,
    edit: hop("v1.14.2", "v1.13.9"),
    at: "v1.13.9\n",
  },
  "VersionDowngrade--release-to-its-prerelease": {
    base: T,
    edit: hop("v1.14.0", "v1.14.0-rc.1"),
    at: "v1.14.0-rc.1\n",
  },
  "VersionDowngrade--kubernetes": {
    base: K,
    edit: (t) => rep(t, "to: v1.36.0", "to: v1.34.0"),
    at: "v1.34.0",
  },
  "VersionDowngrade--component": {
    base: U,
    edit: (t) => rep(t, "to: v1.18.2", "to: v1.16.0"),
    at: "v1.16.0",
  },
  "VersionUnchanged--same-talos": {
    base: T,
    edit: hop("v1.13.9", "v1.13.9"),
    at: "to: v1.13.9",
    col: 4,
  },
  "SkippedMinor--1.13-to-1.15": { base: T, edit: hop("v1.13.9", "v1.15.0"), at: "v1.15.0\n" },
  "SkippedMinor--major-2.0": { base: T, edit: hop("v1.13.9", "v2.0.0"), at: "v2.0.0\n" },
  "SkippedMinor--kubernetes-1.35-to-1.37": {
    base: K,
    edit: (t) => rep(t, "to: v1.36.0", "to: v1.37.0"),
    at: "v1.37.0",
  },
  "MissingIntermediatePatch--from-1.13.5": {
    base: T,
    edit: hop("v1.13.5", "v1.14.2"),
    at: "v1.13.5",
  },
  "MissingIntermediatePatch--second-hop-stale": {
    base: T,
    edit: hops([["v1.13.5", "v1.13.8", "lifecycle"], ["v1.13.8", "v1.14.2", "lifecycle"]]),
    at: "from: v1.13.8",
    col: 6,
  },
  "HopChainBroken--gap-between-hops": {
    base: T,
    edit: hops([["v1.13.5", "v1.13.8", "lifecycle"], ["v1.13.9", "v1.14.2", "lifecycle"]]),
    at: "from: v1.13.9",
    col: 6,
  },
  "RpcPathMismatch--legacy-on-1.13.9": {
    base: T,
    edit: (t) => rep(t, "rpcPath: lifecycle", "rpcPath: legacy"),
    at: "legacy",
  },
  "RpcPathMismatch--prerelease-boundary-alpha.2-is-legacy": {
    base: T,
    edit: hop("v1.13.0-alpha.2", "v1.13.9"),
    at: "rpcPath: lifecycle",
    col: 9,
  },
  "RpcPathMismatch--prerelease-boundary-alpha.3-is-lifecycle": {
    base: T,
    edit: hop("v1.13.0-alpha.3", "v1.13.9", "legacy"),
    at: "legacy",
  },
  "RpcPathMismatch--prerelease-boundary-alpha.1-is-legacy": {
    base: T,
    edit: hop("v1.13.0-alpha.1", "v1.13.9"),
    at: "rpcPath: lifecycle",
    col: 9,
  },
  "CatalogueUnknownVersion--target-1.14.3": {
    base: T,
    edit: hop("v1.13.9", "v1.14.3"),
    at: "v1.14.3\n",
  },
  "CatalogueUnknownVersion--config-talos-1.13.10": {
    base: C,
    edit: (t) => rep(t, "talosVersion: v1.13.9", "talosVersion: v1.13.10"),
    at: "v1.13.10",
  },
  "KubernetesUnsupported--1.31-on-talos-1.14": {
    base: T,
    edit: (t) =>
      rep(rep(t, "version: v1.35.2", "version: v1.31.5"), "kubelet: v1.35.2", "kubelet: v1.32.0"),
    at: "v1.31.5",
  },
  "KubernetesUnsupported--1.37-on-talos-1.13": {
    base: K,
    edit: (t) =>
      rep(rep(t, "talosVersion: v1.14.2", "talosVersion: v1.13.9"), "to: v1.36.0", "to: v1.36.0")
        .replace("from: v1.35.2", "from: v1.36.0").replace("to: v1.36.0", "to: v1.37.0"),
    at: "v1.37.0",
  },
  "KubeletOutsideWindow--kubelet-1.31": {
    base: T,
    edit: (t) => rep(t, "kubelet: v1.35.2", "kubelet: v1.31.9"),
    at: "v1.31.9",
  },
  "PlanExpired--expired-first-of-november": {
    base: T,
    edit: (t) => setExpires(t, "2026-11-01T00:00:00Z"),
    at: "2026-11-01",
  },
  "DeadlinesInconsistent--drain-transport-exceeds-verification": {
    base: T,
    edit: (t) => rep(t, "drain: { transportSeconds: 600", "drain: { transportSeconds: 1000"),
    at: "1000",
  },
  "DeadlinesInconsistent--component-rollout": {
    base: U,
    edit: (t) => rep(t, "transportSeconds: 60,", "transportSeconds: 3600,"),
    at: "3600",
  },
  "NodeListInvalid--duplicate-node": {
    base: T,
    edit: (t) => rep(t, "name: worker-3", "name: worker-2"),
    at: "worker-2",
    nth: 1,
  },
  "NodeListInvalid--duplicate-address": {
    base: T,
    edit: (t) => rep(t, "address: 10.5.0.8", "address: 10.5.0.7"),
    at: "10.5.0.7",
    nth: 1,
  },
  "NodeListInvalid--control-plane-before-workers": {
    base: T,
    edit: (t) =>
      rep(t, "name: worker-1\n      role: worker", "name: worker-1\n      role: controlplane"),
    at: "role: worker",
    col: 6,
  },
  "NodeListInvalid--kubernetes-worker-before-control-plane": {
    base: K,
    edit: (t) => rep(t, "name: cp-1\n      role: controlplane", "name: cp-1\n      role: worker"),
    at: "role: controlplane",
    col: 6,
  },
  "NodeListInvalid--two-control-planes-at-once": {
    base: T,
    edit: (t) => rep(t, "maxParallel: 1", "maxParallel: 2"),
    at: "maxParallel: 2",
    col: 13,
  },
  "ParallelismUnsupported--two-nodes-at-once": {
    base: C,
    edit: (t) => rep(t, "maxParallel: 1", "maxParallel: 2"),
    at: "maxParallel: 2",
    col: 13,
  },
  "CatalogueMissing--no-such-file": {
    base: T,
    edit: (t) => rep(t, "path: catalogue/talos.yaml", "path: catalogue/does-not-exist.yaml"),
    at: "catalogue/does-not-exist.yaml",
  },
  "CatalogueDigestMismatch--stale-digest": {
    base: T,
    edit: (t) =>
      t.replace(/(catalogue:\n    path: .*\n    sha256: )[0-9a-f]{64}/, `$1${"ab".repeat(32)}`),
    at: "ab".repeat(32),
  },
  "CatalogueStale--september-snapshot": {
    base: T,
    edit: (t) =>
      t.replace(
        /(catalogue:\n    path: ).*\n(    sha256: )[0-9a-f]{64}/,
        `$1fixtures/plans/catalogues/stale.yaml\n$2${staleSha}`,
      ),
    at: "fixtures/plans/catalogues/stale.yaml",
  },
  "HealthPolicyMissing--no-such-file": {
    base: T,
    edit: (t) => rep(t, "path: policies/home-ops.yaml", "path: policies/does-not-exist.yaml"),
    at: "policies/does-not-exist.yaml",
  },
  "HealthPolicyDigestMismatch--stale-digest": {
    base: T,
    edit: (t) =>
      t.replace(/(healthPolicy:\n    path: .*\n    sha256: )[0-9a-f]{64}/, `$1${"cd".repeat(32)}`),
    at: "cd".repeat(32),
  },
  "HealthPolicyDigestMismatch--component-plan": {
    base: U,
    edit: (t) =>
      t.replace(/(healthPolicy:\n    path: .*\n    sha256: )[0-9a-f]{64}/, `$1${"ef".repeat(32)}`),
    at: "ef".repeat(32),
  },
  "HealthPolicyClusterMismatch--policy-for-another-cluster": {
    base: K,
    edit: (t) => bindFixture(t, "healthPolicy", "policies/other-cluster.yaml"),
    at: "fixtures/plans/policies/other-cluster.yaml",
  },
  "HealthPolicyInvalid--policy-does-not-parse": {
    base: T,
    edit: (t) => bindFixture(t, "healthPolicy", "policies/unknown-field.yaml"),
    at: "fixtures/plans/policies/unknown-field.yaml",
  },
  "EvidenceManifestMissing--no-such-file": {
    base: T,
    edit: (t) => rep(t, "path: evidence/upgrade-order.yaml", "path: evidence/gone.yaml"),
    at: "evidence/gone.yaml",
  },
  "EvidenceManifestDigestMismatch--stale-digest": {
    base: T,
    edit: (t) =>
      t.replace(/(evidence:\n    path: .*\n    sha256: )[0-9a-f]{64}/, `$1${"a1".repeat(32)}`),
    at: "a1".repeat(32),
  },
  "EvidenceManifestInvalid--manifest-does-not-parse": {
    base: T,
    edit: (t) => bindFixture(t, "evidence", "evidence/no-sources.yaml"),
    at: "fixtures/plans/evidence/no-sources.yaml",
  },
  "InstallerImageMismatch--tag-is-not-target": {
    base: T,
    edit: (t) => rep(t, IMG("v1.14.2"), IMG("v1.14.1")),
    at: "factory.talos.dev",
  },
  "InstallerImageMismatch--schematic-differs": {
    base: T,
    edit: (t) => rep(t, "        schematic: 3068", "        schematic: 4068"),
    at: "factory.talos.dev",
  },
  "InstallerImageMismatch--wrong-platform": {
    base: T,
    edit: (t) => rep(t, "platform: metal", "platform: aws"),
    at: "factory.talos.dev",
  },
  "RecoveryActionInvalid--listed-twice": {
    base: T,
    edit: (t) => t + "    - action: uncordonOwnedCordon\n",
    at: "uncordonOwnedCordon",
    nth: 1,
  },
  "PlanSchemaInvalid--recovery-retry-image-pull": {
    base: T,
    edit: (t) => t + "    - action: retryImagePull\n",
    at: "retryImagePull",
  },
  "PowercycleOnSecureBoot--secureboot-installer": {
    base: T,
    edit: (t) =>
      rep(
        rep(t, "/metal-installer/", "/metal-installer-secureboot/"),
        "rebootMode: default",
        "rebootMode: powercycle",
      ),
    at: "powercycle",
  },
  "ConfigApplyModeUnsupported--reboot-on-1.14": {
    base: C,
    edit: (t) =>
      rep(
        rep(t, "talosVersion: v1.13.9", "talosVersion: v1.14.2"),
        "mode: noReboot",
        "mode: reboot",
      ),
    at: "reboot\n",
  },
  "ConfigApplyModeMismatch--staged-for-immediate": {
    base: C,
    edit: (t) => rep(t, "mode: noReboot", "mode: staged"),
    at: "staged\n",
  },
};

const VALID: Record<string, (t: string) => string> = {
  "talos-two-hops-latest-patch-first": hops([["v1.13.5", "v1.13.9", "lifecycle"], [
    "v1.13.9",
    "v1.14.2",
    "lifecycle",
  ]]),
  "talos-from-alpha.3-lifecycle": hop("v1.13.0-alpha.3", "v1.13.9"),
  "talos-from-alpha.2-legacy": hop("v1.13.0-alpha.2", "v1.13.9", "legacy"),
  "talos-reviewed-partial-drain": (t) =>
    t +
    "    - action: partialDrain\n      reviewedBy: bob@example.com\n      maxRemainingPods: 1\n" +
    '      justification: "postgres replica with a 1800 s grace period; drain bound stays 600 s"\n',
  "talos-secureboot-default-reboot": (t) =>
    rep(t, "/metal-installer/", "/metal-installer-secureboot/"),
  "talos-powercycle-without-secureboot": (t) =>
    rep(t, "rebootMode: default", "rebootMode: powercycle"),
  "talos-kubernetes-at-matrix-edge": (t) =>
    t.replace("version: v1.35.2", "version: v1.36.9").replace(
      "kubelet: v1.35.2",
      "kubelet: v1.32.0",
    ),
};

let staleSha = "";
/** Bound-file fixtures under fixtures/plans/ (path → bytes), written by main(). */
const BOUND_FIXTURES = new Map<string, Uint8Array>();
const boundSha = new Map<string, string>();

/** Rebinds `role` (healthPolicy, evidence) to a file under fixtures/plans/ with its real digest. */
function bindFixture(t: string, role: string, rel: string): string {
  const re = new RegExp(`(${role}:\n    path: ).*\n(    sha256: )[0-9a-f]{64}`);
  if (!re.test(t)) throw new Error(`fixture edit: no ${role} binding`);
  return t.replace(re, `$1fixtures/plans/${rel}\n$2${boundSha.get(rel)}`);
}

function boundFixtureTexts(): Record<string, string> {
  const policy = Deno.readTextFileSync(new URL("policies/home-ops.yaml", root));
  const manifest = Deno.readTextFileSync(new URL("evidence/upgrade-order.yaml", root));
  return {
    "policies/other-cluster.yaml": rep(policy, "  cluster: home-ops\n", "  cluster: lab\n"),
    "policies/unknown-field.yaml": rep(policy, "\nspec:\n", "\nspec:\n  mode: lenient\n"),
    "evidence/no-sources.yaml": manifest.slice(0, manifest.indexOf("\nsources:\n")) +
      manifest.slice(manifest.indexOf("\nassertions:")),
  };
}
async function sha256(bytes: Uint8Array): Promise<string> {
  const h = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes.slice()));
  return [...h].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function position(text: string, c: Case): string {
  let idx = -1;
  for (let i = 0; i <= (c.nth ?? 0); i++) {
    idx = text.indexOf(c.at, idx + 1);
    if (idx < 0) throw new Error(`marker "${c.at}" not found`);
  }
  idx += c.col ?? 0;
  const before = text.slice(0, idx).split("\n");
  return `${before.length + 1}:${before[before.length - 1]!.length + 1}`;
}

async function main() {
  const stale = Deno.readTextFileSync(new URL("catalogue/talos.yaml", root))
    .replace(/snapshotAt: .*/, "snapshotAt: 2026-09-01T00:00:00Z");
  const staleBytes = new TextEncoder().encode(stale);
  staleSha = await sha256(staleBytes);
  for (const [rel, text] of Object.entries(boundFixtureTexts())) {
    const bytes = new TextEncoder().encode(text);
    BOUND_FIXTURES.set(rel, bytes);
    boundSha.set(rel, await sha256(bytes));
  }
  const dir = (p: string) => new URL(`fixtures/plans/${p}/`, root);
  Deno.mkdirSync(dir("catalogues"), { recursive: true });
  Deno.writeFileSync(new URL("stale.yaml", dir("catalogues")), staleBytes);
  for (const [rel, bytes] of BOUND_FIXTURES) {
    Deno.mkdirSync(dir(rel.split("/")[0]!), { recursive: true });
    Deno.writeFileSync(new URL(`fixtures/plans/${rel}`, root), bytes);
  }
  for (const d of ["invalid", "valid"]) {
    Deno.mkdirSync(dir(d), { recursive: true });
    for (const e of Deno.readDirSync(dir(d))) {
      if (e.name.endsWith(".yaml")) Deno.removeSync(new URL(e.name, dir(d)));
    }
  }
  for (const [name, c] of Object.entries(INVALID)) {
    const edited = c.edit(c.base);
    const text = typeof edited === "string" ? edited : new TextDecoder("latin1").decode(edited);
    const header = new TextEncoder().encode(`# expect: ${position(text, c)}\n`);
    const body = typeof edited === "string" ? new TextEncoder().encode(edited) : edited;
    Deno.writeFileSync(
      new URL(`${name}.yaml`, dir("invalid")),
      new Uint8Array([...header, ...body]),
    );
  }
  for (const [name, edit] of Object.entries(VALID)) {
    Deno.writeTextFileSync(new URL(`${name}.yaml`, dir("valid")), edit(T));
  }
  console.log(
    `wrote ${Object.keys(INVALID).length} invalid and ${Object.keys(VALID).length} valid fixtures`,
  );
}

await main();
