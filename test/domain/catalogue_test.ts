import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import {
  CATALOGUE_MAX_AGE_MS,
  hasRelease,
  inWindow,
  isCatalogueStale,
  latestPatch,
  parseCatalogue,
  supportRow,
} from "../../src/domain/catalogue.ts";
import { CairnError } from "../../src/domain/errors.ts";

async function assertRejects(
  fn: () => Promise<unknown>,
  _cls: typeof CairnError,
): Promise<CairnError> {
  try {
    await fn();
  } catch (e) {
    if (e instanceof CairnError) return e;
    throw e;
  }
  throw new Error("expected a CairnError");
}
import { sha256Hex } from "../../src/domain/plan/digest.ts";
import { formatVersion, parseVersion } from "../../src/domain/version.ts";

const SHIPPED = new URL("../../catalogue/talos.yaml", import.meta.url);
const enc = new TextEncoder();

async function shipped() {
  const bytes = await Deno.readFile(SHIPPED);
  return { bytes, cat: await parseCatalogue(bytes, "catalogue/talos.yaml") };
}

Deno.test("parseCatalogue() reads the shipped snapshot and digests its exact bytes", async () => {
  const { bytes, cat } = await shipped();
  assertEquals(cat.sha256, await sha256Hex(bytes));
  assertEquals(cat.snapshotAtMs, Date.parse("2026-11-20T00:00:00Z"));
  assertEquals(cat.rows.map((r) => r.minor), ["1.13", "1.14"]);
});

Deno.test("latestPatch() finds the newest stable patch of a minor", async () => {
  const { cat } = await shipped();
  assertEquals(formatVersion(latestPatch(cat, parseVersion("v1.13.2"))!), "v1.13.9");
  assertEquals(formatVersion(latestPatch(cat, parseVersion("v1.14.0"))!), "v1.14.2");
  assertEquals(latestPatch(cat, parseVersion("v1.15.0")), undefined);
});

Deno.test("latestPatch() ignores prereleases listed in the catalogue", async () => {
  const text = (await Deno.readTextFile(SHIPPED)).replace(
    "        - version: v1.14.2\n",
    "        - version: v1.14.2\n        - version: v1.14.3-rc.0\n",
  );
  const cat = await parseCatalogue(enc.encode(text), "c.yaml");
  assertEquals(formatVersion(latestPatch(cat, parseVersion("v1.14.0"))!), "v1.14.2");
  assert(hasRelease(cat, parseVersion("v1.14.3-rc.0")));
  assert(!hasRelease(cat, parseVersion("v1.14.3")));
});

Deno.test("supportRow() gives the Kubernetes and kubelet windows of a Talos minor", async () => {
  const { cat } = await shipped();
  const row = supportRow(cat, parseVersion("v1.14.2"))!;
  assert(inWindow(row.kubernetes, parseVersion("v1.32.0")));
  assert(inWindow(row.kubernetes, parseVersion("v1.37.9")));
  assert(!inWindow(row.kubernetes, parseVersion("v1.31.9")));
  assert(!inWindow(row.kubelet, parseVersion("v1.38.0")));
  assert(hasRelease(cat, parseVersion("v1.13.9")));
  assert(!hasRelease(cat, parseVersion("v1.13.10")));
});

Deno.test("isCatalogueStale() holds a snapshot older than the maximum age", async () => {
  const { cat } = await shipped();
  assert(!isCatalogueStale(cat, cat.snapshotAtMs + CATALOGUE_MAX_AGE_MS));
  assert(isCatalogueStale(cat, cat.snapshotAtMs + CATALOGUE_MAX_AGE_MS + 1));
});

Deno.test("parseCatalogue() refuses an unknown field with its location", async () => {
  const text = (await Deno.readTextFile(SHIPPED)).replace(
    "  product: talos\n",
    "  product: talos\n  colour: red\n",
  );
  const err = await assertRejects(() => parseCatalogue(enc.encode(text), "c.yaml"), CairnError);
  assertEquals(err.reason, "CatalogueInvalid");
  assertEquals([err.location?.line, err.location?.column], [7, 3]);
});

Deno.test("parseCatalogue() refuses a release filed under the wrong minor", async () => {
  const text = (await Deno.readTextFile(SHIPPED)).replace("version: v1.14.1", "version: v1.13.11");
  const err = await assertRejects(() => parseCatalogue(enc.encode(text), "c.yaml"), CairnError);
  assertEquals(err.reason, "CatalogueInvalid");
  assert(err.message.includes("v1.13.11"));
});
