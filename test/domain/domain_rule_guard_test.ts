/**
 * Guards of the domain rules that the mutation campaign (tools/mutants/domain_rules.json) found
 * undefended: version ordering at multi-digit boundaries and ranges, the Kubernetes skew windows,
 * month-restricted maintenance windows, and structural equality of configuration values.
 */
import { deepStrictEqual as assertEquals, ok as assert, throws } from "node:assert/strict";
import {
  compareVersions,
  isVersion,
  parseRange,
  parseVersion,
  satisfies,
  tryParseVersion,
} from "../../src/domain/version.ts";
import { type ComponentVersion, skewViolations } from "../../src/domain/k8s_upgrade/skew.ts";
import { admitCommitment, type WindowSpec, windowStarts } from "../../src/domain/ops/window.ts";
import {
  type ConfigValue,
  diffConfigs,
  mergePatch,
  sameValue,
} from "../../src/domain/config_apply/config_diff.ts";
import { classifyDiff } from "../../src/domain/config_apply/classify.ts";

const v = parseVersion;
const at = (s: string) => Date.parse(s);
const iso = (ms: number) => new Date(ms).toISOString();

Deno.test("a two-digit minor or patch outranks a one-digit one (v1.10 is above v1.9)", () => {
  assertEquals(compareVersions(v("v1.10.0"), v("v1.9.0")), 1);
  assertEquals(compareVersions(v("v1.9.0"), v("v1.10.0")), -1);
  assertEquals(compareVersions(v("v1.35.10"), v("v1.35.9")), 1);
  assertEquals(compareVersions(v("v1.35.9"), v("v1.35.10")), -1);
  // A range bound at such a boundary follows the same numeric order.
  assert(satisfies(v("v1.10.0"), parseRange(">1.9.0")));
  assert(!satisfies(v("v1.9.5"), parseRange(">=1.10.0")));
});

Deno.test("a version number too large to hold exactly is refused, not rounded into another", () => {
  // 2^53 + 1 would round to 2^53 and compare equal to a different version.
  for (const text of ["1.9007199254740993.0", "9007199254740993.0.0", "1.2.9007199254740993"]) {
    assertEquals(tryParseVersion(text), undefined, text);
    assert(!isVersion(text), text);
    throws(() => parseVersion(text), RangeError);
  }
  assertEquals(v("1.9007199254740991.0").minor, 9007199254740991);
});

Deno.test("a bare or = comparator pins exactly one version; <= and >= hold their bounds", () => {
  for (const range of ["1.2.3", "=1.2.3"]) {
    const r = parseRange(range);
    assert(satisfies(v("1.2.3"), r), range);
    for (const other of ["1.2.4", "1.3.0", "1.2.2", "1.2.3-rc.1"]) {
      assert(!satisfies(v(other), r), `${other} against ${range}`);
    }
  }
  const atMost = parseRange("<=1.2.3");
  assert(satisfies(v("1.2.3"), atMost));
  assert(!satisfies(v("1.2.4"), atMost));
  assert(!satisfies(v("2.0.0-alpha.0"), atMost));
  const atLeast = parseRange(">=1.2.3");
  assert(satisfies(v("1.2.3"), atLeast));
  assert(!satisfies(v("1.2.2"), atLeast));
  assert(!satisfies(v("1.2.3-rc.1"), atLeast));
});

function apiservers(...versions: string[]): ComponentVersion[] {
  return versions.map((version, i) => ({
    component: "kube-apiserver",
    node: `cp-${i + 1}`,
    version,
  }));
}

function violators(observed: readonly ComponentVersion[]): string[] {
  return skewViolations(observed).map((x) => `${x.component}@${x.node}`);
}

Deno.test("a kubelet or kube-proxy may lag three minors behind the apiserver, never four", () => {
  const api = apiservers("v1.35.2");
  assertEquals(
    violators([
      ...api,
      { component: "kubelet", node: "w-1", version: "v1.32.0" },
      { component: "kube-proxy", node: "cluster", version: "v1.32.9" },
    ]),
    [],
  );
  assertEquals(
    violators([
      ...api,
      { component: "kubelet", node: "w-1", version: "v1.31.9" },
      { component: "kube-proxy", node: "cluster", version: "v1.31.0" },
    ]),
    ["kubelet@w-1", "kube-proxy@cluster"],
  );
});

Deno.test("kube-controller-manager and kube-scheduler may lag one minor behind the apiserver, never two", () => {
  const api = apiservers("v1.35.2");
  assertEquals(
    violators([
      ...api,
      { component: "kube-controller-manager", node: "cp-1", version: "v1.34.0" },
      { component: "kube-scheduler", node: "cp-1", version: "v1.34.9" },
    ]),
    [],
  );
  assertEquals(
    violators([
      ...api,
      { component: "kube-controller-manager", node: "cp-1", version: "v1.33.9" },
      { component: "kube-scheduler", node: "cp-1", version: "v1.33.0" },
    ]),
    ["kube-controller-manager@cp-1", "kube-scheduler@cp-1"],
  );
});

Deno.test("a component's lag is counted from the newest apiserver when apiservers are mixed", () => {
  // During a control-plane upgrade: v1.31 is three minors behind v1.34 but four behind v1.35,
  // and a kubelet may be routed to either apiserver.
  const mixed = apiservers("v1.34.3", "v1.35.0");
  const found = skewViolations([
    ...mixed,
    { component: "kubelet", node: "w-1", version: "v1.31.5" },
    { component: "kubelet", node: "w-2", version: "v1.32.0" },
    { component: "kube-scheduler", node: "cp-1", version: "v1.33.0" },
  ]);
  assertEquals(found.map((x) => `${x.component}@${x.node}`), [
    "kubelet@w-1",
    "kube-scheduler@cp-1",
  ]);
  assert(found[0]!.detail.includes("v1.35.0"), found[0]!.detail);
});

Deno.test("a major-version gap is skew, never a negative lag", () => {
  assertEquals(
    violators([...apiservers("v2.0.0"), { component: "kubelet", node: "w-1", version: "v1.35.0" }]),
    ["kubelet@w-1"],
  );
  assertEquals(violators(apiservers("v2.0.0", "v1.35.0")), ["kube-apiserver@cp-1"]);
});

Deno.test("a window whose cron excludes December never opens in December (a year-end freeze)", () => {
  const w: WindowSpec = { start: "0 2 * 1-11 *", durationMinutes: 240, timeZone: "UTC" };
  assertEquals(
    windowStarts(w, at("2026-11-29T00:00:00Z"), at("2026-12-03T00:00:00Z")).map(iso),
    ["2026-11-29T02:00:00.000Z", "2026-11-30T02:00:00.000Z"],
  );
  const d = admitCommitment([w], at("2026-12-15T02:30:00Z"), 30 * 60_000);
  assertEquals(d, {
    admit: false,
    why: "closed",
    next: { opensAtMs: at("2027-01-01T02:00:00Z"), closesAtMs: at("2027-01-01T06:00:00Z") },
  });
  // The same hour in November is open.
  assertEquals(admitCommitment([w], at("2026-11-15T02:30:00Z"), 30 * 60_000), {
    admit: true,
    closesAtMs: at("2026-11-15T06:00:00Z"),
  });
});

const RUNNING: ConfigValue = {
  machine: {
    kernel: { modules: [{ name: "br_netfilter" }] },
    systemDiskEncryption: { ephemeral: { provider: "luks2", keys: [{ slot: 0, nodeID: {} }] } },
  },
};

function effective(patch: ConfigValue) {
  const diff = diffConfigs(RUNNING, mergePatch(RUNNING, patch));
  return { diff, overall: classifyDiff(14, diff).overall };
}

Deno.test("a list that gained an element (a second disk-encryption key) is a change needing activation", () => {
  const { diff, overall } = effective({
    machine: {
      systemDiskEncryption: {
        ephemeral: { keys: [{ slot: 0, nodeID: {} }, { slot: 1, tpm: {} }] },
      },
    },
  });
  assertEquals(diff, [{ path: "machine.systemDiskEncryption.ephemeral.keys", change: "modified" }]);
  assertEquals(overall, "explicitActivation");
  assert(!sameValue(["time.cloudflare.com"], ["time.cloudflare.com", "pool.ntp.org"]));
});

Deno.test("a kernel module that gains parameters is a changed module needing activation", () => {
  const { diff, overall } = effective({
    machine: { kernel: { modules: [{ name: "br_netfilter", parameters: ["nf_conntrack=1"] }] } },
  });
  assertEquals(diff.map((c) => c.modules), [{ added: [], removed: [], changed: ["br_netfilter"] }]);
  assertEquals(overall, "explicitActivation");
  // A stored configuration that lacks a key of the target is not the target.
  assert(
    !sameValue({ install: { disk: "/dev/sda" } }, { install: { disk: "/dev/sda", wipe: true } }),
  );
});

Deno.test("a day field starting with * is unrestricted, as in Vixie cron: 0 2 */2 * 6 opens on odd-numbered Saturdays only", () => {
  const w: WindowSpec = { start: "0 2 */2 * 6", durationMinutes: 60, timeZone: "UTC" };
  const days = windowStarts(
    w,
    Date.parse("2026-01-01T00:00:00Z"),
    Date.parse("2026-03-01T00:00:00Z"),
  )
    .map((ms) => new Date(ms).toISOString().slice(0, 10));
  // Saturdays of January and February 2026: 3, 10, 17, 24, 31 Jan; 7, 14, 21, 28 Feb.
  assertEquals(days, ["2026-01-03", "2026-01-17", "2026-01-31", "2026-02-07", "2026-02-21"]);
  // Both fields restricted without a star: either one matching is enough.
  const either: WindowSpec = { start: "0 2 1 * 6", durationMinutes: 60, timeZone: "UTC" };
  const opens = windowStarts(
    either,
    Date.parse("2026-01-01T00:00:00Z"),
    Date.parse("2026-01-12T00:00:00Z"),
  )
    .map((ms) => new Date(ms).toISOString().slice(0, 10));
  assertEquals(opens, ["2026-01-01", "2026-01-03", "2026-01-10"]);
});

Deno.test("windows back to back are one opening when a step is admitted, as for the next window", () => {
  const utc = (start: string): WindowSpec => ({ start, durationMinutes: 60, timeZone: "UTC" });
  // 01:00-02:00 and 02:00-03:00: at 01:30 a 60-minute step fits the merged opening.
  const d = admitCommitment(
    [utc("0 1 * * *"), utc("0 2 * * *")],
    at("2026-06-01T01:30:00Z"),
    60 * 60_000,
  );
  assertEquals(d, { admit: true, closesAtMs: at("2026-06-01T03:00:00Z") });
  // Hourly windows admit a 90-minute step at any minute; one window alone would never fit it.
  const hourly = admitCommitment([utc("0 * * * *")], at("2026-06-01T05:10:00Z"), 90 * 60_000);
  assertEquals(hourly.admit, true);
  const once = admitCommitment([utc("0 5 * * *")], at("2026-06-01T05:10:00Z"), 90 * 60_000);
  assertEquals(once.admit ? "admitted" : once.why, "too-short");
});
