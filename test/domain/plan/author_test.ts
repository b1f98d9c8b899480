import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { parseCatalogue } from "../../../src/domain/catalogue.ts";
import { rolloutOrder, talosHopChain } from "../../../src/domain/plan/author.ts";

const cat = await parseCatalogue(
  new TextEncoder().encode(`apiVersion: cairn.dev/v1alpha1
kind: ReleaseCatalogue
metadata: { product: talos, snapshotAt: 2026-11-20T00:00:00Z }
spec:
  minors:
    - minor: "1.12"
      kubernetes: { min: "1.30", max: "1.35" }
      releases: [{ version: v1.12.0 }, { version: v1.12.4 }, { version: v1.12.5-beta.0 }]
    - minor: "1.13"
      kubernetes: { min: "1.31", max: "1.36" }
      releases: [{ version: v1.13.0 }, { version: v1.13.2 }, { version: v1.13.9 }]
    - minor: "1.15"
      kubernetes: { min: "1.33", max: "1.38" }
      releases: [{ version: v1.15.0 }]
`),
  "test-catalogue.yaml",
);

const chain = (from: string, to: string) => {
  const r = talosHopChain(cat, from, to);
  return r.ok ? r.hops.map((h) => `${h.from}>${h.to}`) : r.refusal.reason;
};

Deno.test("the hop chain takes the latest stable patch first, then one minor at a time", () => {
  assertEquals(chain("v1.12.0", "v1.13.2"), ["v1.12.0>v1.12.4", "v1.12.4>v1.13.2"]);
  // Already on the latest patch: straight to the next minor; a prerelease is never a waypoint.
  assertEquals(chain("v1.12.4", "v1.13.9"), ["v1.12.4>v1.13.9"]);
  // Within one minor, one hop, even past several patches.
  assertEquals(chain("v1.13.0", "v1.13.9"), ["v1.13.0>v1.13.9"]);
});

Deno.test("the hop chain refuses downgrades, unchanged versions, unknown targets and a missing minor", () => {
  assertEquals(chain("v1.13.2", "v1.12.4"), "VersionDowngrade");
  assertEquals(chain("v1.13.2", "v1.13.2"), "VersionUnchanged");
  assertEquals(chain("v1.13.2", "v1.13.5"), "CatalogueUnknownVersion");
  assertEquals(chain("v1.12.1", "v1.13.9"), "CatalogueUnknownVersion"); // source not catalogued
  assertEquals(chain("v1.13.9", "v1.15.0"), "CatalogueUnknownVersion"); // 1.14 is missing
});

Deno.test("rollout order puts every worker before every control plane, keeping the source order", () => {
  const nodes = [
    { name: "cp-1", role: "controlplane" as const },
    { name: "w-2", role: "worker" as const },
    { name: "cp-2", role: "controlplane" as const },
    { name: "w-1", role: "worker" as const },
  ];
  assertEquals(rolloutOrder(nodes).map((n) => n.name), ["w-2", "w-1", "cp-1", "cp-2"]);
});
