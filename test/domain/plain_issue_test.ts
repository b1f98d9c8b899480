/** zod's wording never reaches users: plan and config problems speak cairn's words. */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { safeParsePlan } from "../../src/domain/plan/parse.ts";

const ZOD = /Invalid input|received|Too small|Too big|Invalid option|Unrecognized/;
const PLAN = await Deno.readTextFile(new URL("../../plans/cilium-1.18.2.yaml", import.meta.url));

async function messages(text: string): Promise<string[]> {
  const r = await safeParsePlan(new TextEncoder().encode(text), { file: "p.yaml" });
  assert(!r.ok, "the broken plan parsed");
  return r.ok ? [] : r.problems.map((p) => p.message);
}

Deno.test("a missing field, a wrong type, a bad kind and a bound are said plainly", async () => {
  const broken = PLAN.replace(/^ {2}author: .*\n/m, "")
    .replace(/^ {2}name: .*$/m, "  name: 5")
    .replace(/maxAttempts: \d+/, "maxAttempts: -1");
  const ms = await messages(broken);
  for (const m of ms) assert(!ZOD.test(m), m);
  assert(ms.includes('missing field "author"'), ms.join("\n"));
  assert(ms.includes("expected a string"), ms.join("\n"));
  assert(ms.includes("must be at least 1"), ms.join("\n"));
  // A mistyped kind is answered with the kinds there are, so it is fixed in one go.
  assertEquals(await messages(PLAN.replace(/^kind: .*$/m, "kind: TalosUpgrad")), [
    'not a known kind; expected one of "TalosUpgrade", "KubernetesUpgrade", "ConfigApply", ' +
    '"ComponentUpgrade"',
  ]);
});

Deno.test("one allowed value is named alone; a count of items is singular or plural", async () => {
  assertEquals(
    await messages(PLAN.replace(/^apiVersion: .*$/m, "apiVersion: cairn.dev/v1")),
    ['expected "cairn.dev/v1alpha1"'],
  );
  const { z } = await import("zod");
  const { plainIssueMessage } = await import("../../src/domain/plain_issue.ts");
  const one = z.array(z.string()).min(1).safeParse([]).error!.issues[0]!;
  assertEquals(plainIssueMessage(one), "needs at least 1 item");
  const two = z.array(z.string()).max(2).safeParse(["a", "b", "c"]).error!.issues[0]!;
  assertEquals(plainIssueMessage(two), "takes at most 2 items");
});
