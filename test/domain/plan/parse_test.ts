import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { parseCatalogue } from "../../../src/domain/catalogue.ts";
import { checkPlan } from "../../../src/domain/plan/checks.ts";
import { sha256Hex } from "../../../src/domain/plan/digest.ts";
import { buildTalosUpgradePlanYaml } from "../../../src/domain/plan/example.ts";
import { located, safeParsePlan } from "../../../src/domain/plan/parse.ts";

const enc = new TextEncoder();
const NOW = Date.parse("2026-11-25T00:00:00Z");
const catBytes = await Deno.readFile(new URL("../../../catalogue/talos.yaml", import.meta.url));
const catalogue = await parseCatalogue(catBytes, "catalogue/talos.yaml");

Deno.test("safeParsePlan() identifies a plan by the SHA-256 of its exact bytes", async () => {
  const text = buildTalosUpgradePlanYaml({ catalogueSha256: catalogue.sha256 });
  const a = await safeParsePlan(enc.encode(text), { file: "a.yaml" });
  const b = await safeParsePlan(enc.encode(text + "# a comment changes identity\n"), {
    file: "b.yaml",
  });
  assert(a.ok && b.ok);
  assertEquals(a.parsed.sha256, await sha256Hex(enc.encode(text)));
  assert(a.parsed.sha256 !== b.parsed.sha256);
  assertEquals(a.parsed.plan.kind, "TalosUpgrade");
});

Deno.test("a 500-node plan from the builder parses and passes every check", async () => {
  const text = buildTalosUpgradePlanYaml({ catalogueSha256: catalogue.sha256, nodes: 500 });
  const r = await safeParsePlan(enc.encode(text), { file: "big.yaml" });
  assert(r.ok);
  assert(r.parsed.plan.kind === "TalosUpgrade");
  assertEquals(r.parsed.plan.spec.nodes.length, 500);
  assertEquals(r.parsed.plan.spec.nodes.at(-1)?.role, "controlplane");
  assertEquals(checkPlan(r.parsed.plan, { nowMs: NOW, catalogue }), []);
});

Deno.test("checkPlan() holds a plan whose catalogue is missing, stale or changed", async () => {
  const text = buildTalosUpgradePlanYaml({ catalogueSha256: catalogue.sha256 });
  const r = await safeParsePlan(enc.encode(text), { file: "p.yaml" });
  assert(r.ok);
  const reasons = (ctx: Parameters<typeof checkPlan>[1]) =>
    located(r.parsed.source, checkPlan(r.parsed.plan, ctx)).map((p) => p.reason);
  assertEquals(reasons({ nowMs: NOW, catalogue: undefined }), ["CatalogueMissing"]);
  assertEquals(
    reasons({
      nowMs: Date.parse("2026-12-19T00:00:01Z"),
      catalogue,
      catalogueMaxAgeMs: 86_400_000,
    }),
    [
      "CatalogueStale",
    ],
  );
  const edited = await parseCatalogue(
    enc.encode(new TextDecoder().decode(catBytes) + "\n"),
    "c.yaml",
  );
  assertEquals(reasons({ nowMs: NOW, catalogue: edited }), ["CatalogueDigestMismatch"]);
  assertEquals(reasons({ nowMs: Date.parse("2026-12-20T00:00:01Z"), catalogue }), [
    "PlanExpired",
    "CatalogueStale",
  ]);
});

Deno.test("checkPlan() treats a plan as expired at its expiry instant, not after it", async () => {
  const text = buildTalosUpgradePlanYaml({
    catalogueSha256: catalogue.sha256,
    expires: "2026-11-30T12:00:00Z",
  });
  const r = await safeParsePlan(enc.encode(text), { file: "p.yaml" });
  assert(r.ok);
  const at = (iso: string) =>
    checkPlan(r.parsed.plan, { nowMs: Date.parse(iso), catalogue }).map((p) => p.reason);
  assertEquals(at("2026-11-30T11:59:59.999Z"), []);
  assertEquals(at("2026-11-30T12:00:00.000Z"), ["PlanExpired"]);
});
