/**
 * The plan schema's component names are the playbooks' ids: the list the pure schema sees
 * (`domain/playbook/ids.ts`) is exactly the shipped `playbooks/*.yaml` by `metadata.name`, and a
 * ComponentUpgrade naming anything else is a located `ComponentUnknown` listing the known ids.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { loadPlaybooks } from "../../../src/app/playbooks.ts";
import {
  COMPONENT_UPGRADE_IDS,
  OWN_PLAN_KIND,
  PLAYBOOK_IDS,
} from "../../../src/domain/playbook/ids.ts";
import { safeParsePlan } from "../../../src/domain/plan/parse.ts";

Deno.test("the schema's component ids are the shipped playbooks' ids", async () => {
  const shipped = (await loadPlaybooks()).map((p) => p.metadata.name).sort();
  assertEquals([...PLAYBOOK_IDS], shipped);
  for (const id of Object.keys(OWN_PLAN_KIND)) assert(shipped.includes(id), id);
});

const plan = (component: string) =>
  new TextEncoder().encode(
    Deno.readTextFileSync(new URL("../../../plans/cilium-1.18.2.yaml", import.meta.url))
      .replace(/component: cilium/, `component: ${component}`),
  );

Deno.test("every ComponentUpgrade id parses; cnpg, istio and talos are located ComponentUnknown", async () => {
  for (const id of COMPONENT_UPGRADE_IDS) {
    const r = await safeParsePlan(plan(id), { file: "plans/x.yaml" });
    assert(r.ok, `${id}: ${r.ok ? "" : r.problems[0]!.message}`);
  }
  const line = new TextDecoder().decode(plan("cnpg")).split("\n")
    .findIndex((l) => l.includes("component: ")) + 1;
  for (const id of ["cnpg", "istio", "talos"]) {
    const r = await safeParsePlan(plan(id), { file: "plans/x.yaml" });
    if (r.ok) throw new Error(`${id} was accepted`);
    const p = r.problems.find((x) => x.reason === "ComponentUnknown");
    if (!p) throw new Error(`${id}: ${JSON.stringify(r.problems)}`);
    assertEquals(p.location?.line, line);
    assertEquals(p.location?.file, "plans/x.yaml");
    if (id === "talos") assert(p.message.includes("TalosUpgrade"), p.message);
    else assert(p.message.includes("cloudnative-pg, coredns"), p.message);
  }
});
