import {
  deepStrictEqual as assertEquals,
  ok as assert,
  throws as assertThrows,
} from "node:assert/strict";
import {
  compareVersions,
  formatVersion,
  isLifecycleApiVersion,
  parseRange,
  parseVersion,
  satisfies,
  tryParseVersion,
} from "../../src/domain/version.ts";

const v = parseVersion;

Deno.test("compareVersions() orders prereleases below their release and above the previous patch", () => {
  assertEquals(compareVersions(v("1.14.0-beta.0"), v("1.13.9")), 1);
  assertEquals(compareVersions(v("1.14.0-beta.0"), v("1.14.0")), -1);
  assertEquals(compareVersions(v("v1.14.0"), v("1.14.0")), 0);
  assertEquals(compareVersions(v("1.0.0+build.1"), v("1.0.0+build.2")), 0);
});

Deno.test("compareVersions() follows the SemVer 2.0.0 precedence chain", () => {
  const chain = [
    "1.0.0-alpha",
    "1.0.0-alpha.1",
    "1.0.0-alpha.beta",
    "1.0.0-beta",
    "1.0.0-beta.2",
    "1.0.0-beta.11",
    "1.0.0-rc.1",
    "1.0.0",
    "1.0.1",
    "1.1.0",
    "2.0.0",
  ].map(v);
  for (let i = 0; i < chain.length - 1; i++) {
    assertEquals(compareVersions(chain[i]!, chain[i + 1]!), -1, formatVersion(chain[i]!));
    assertEquals(compareVersions(chain[i + 1]!, chain[i]!), 1);
  }
  const shuffled = [...chain].reverse().sort(compareVersions);
  assertEquals(shuffled.map(formatVersion), chain.map(formatVersion));
});

Deno.test("tryParseVersion() refuses malformed versions", () => {
  for (
    const bad of ["1.2", "01.2.3", "1.2.3-", "1.2.3-01", "1.2.3.4", "V1.2.3", "1.2.3-a..b", ""]
  ) {
    assertEquals(tryParseVersion(bad), undefined, bad);
  }
  assertThrows(() => parseVersion("x"), RangeError);
  assertEquals(v("v1.14.0-beta.0").prerelease, ["beta", 0]);
});

Deno.test("isLifecycleApiVersion() applies >1.13.0-alpha.2 <2.0.0 with prerelease ordering", () => {
  const inside = ["1.13.0-alpha.3", "1.13.0-beta.0", "1.13.0", "1.13.9", "1.14.0-beta.0", "1.99.0"];
  const outside = ["1.13.0-alpha.1", "1.13.0-alpha.2", "1.12.9", "1.12.99", "2.0.0", "2.1.0"];
  for (const s of inside) assert(isLifecycleApiVersion(v(s)), s);
  for (const s of outside) assert(!isLifecycleApiVersion(v(s)), s);
  // blang/semver ranges match prereleases, so 2.0.0-alpha.1 (< 2.0.0) is inside.
  assert(isLifecycleApiVersion(v("2.0.0-alpha.1")));
});

Deno.test("satisfies() handles every comparator operator", () => {
  assert(satisfies(v("1.2.3"), parseRange(">=1.2.3 <=1.2.3")));
  assert(satisfies(v("1.2.3"), parseRange("=1.2.3")));
  assert(satisfies(v("1.2.3"), parseRange("1.2.3")));
  assert(!satisfies(v("1.2.4"), parseRange("<1.2.4")));
  assertThrows(() => parseRange(">1.2"), RangeError);
});
