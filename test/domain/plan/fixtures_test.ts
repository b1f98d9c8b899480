/**
 * The data-driven fixture walk: every file in fixtures/plans/invalid/ is named
 * `<Reason>--<case>.yaml` and carries `# expect: line:column` on its first line; it must yield
 * exactly that reason at exactly that location. Every file in fixtures/plans/valid/ must pass.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { fileURLToPath as fromFileUrl } from "node:url";
import { checkPlanFile } from "../../../src/app/plan_check_run.ts";
import { isReason } from "../../../src/domain/reasons.ts";
import { buildTalosUpgradePlanYaml } from "../../../src/domain/plan/example.ts";
import { safeParsePlan } from "../../../src/domain/plan/parse.ts";

const ROOT = fromFileUrl(new URL("../../../", import.meta.url));
const NOW = Date.parse("2026-11-25T00:00:00Z");
const dir = (d: string) => `fixtures/plans/${d}`;

function list(d: string): string[] {
  return [...Deno.readDirSync(`${ROOT}${dir(d)}`)].map((e) => e.name)
    .filter((n) => n.endsWith(".yaml")).sort();
}

Deno.test("every invalid plan fixture yields exactly its reason at its expected location", async () => {
  const names = list("invalid");
  assert(names.length >= 40, `only ${names.length} invalid fixtures`);
  for (const name of names) {
    const reason = name.split("--")[0]!;
    assert(isReason(reason), `${name}: ${reason} is not a catalogued reason`);
    const bytes = await Deno.readFile(`${ROOT}${dir("invalid")}/${name}`);
    const header = /^# expect: (\d+):(\d+)\n/.exec(
      new TextDecoder("latin1").decode(bytes.subarray(0, 40)),
    );
    assert(header, `${name}: first line must be "# expect: line:column"`);
    const file = `${dir("invalid")}/${name}`;
    const r = await checkPlanFile(file, { nowMs: NOW, cwd: ROOT });
    const got = r.problems.map((p) => `${p.reason}@${p.location?.line}:${p.location?.column}`);
    assertEquals(got, [`${reason}@${header[1]}:${header[2]}`], name);
    assertEquals(r.problems[0]!.location?.file, file);
  }
});

Deno.test("every valid plan fixture and example plan passes plan check", async () => {
  const files = [
    ...list("valid").map((n) => `${dir("valid")}/${n}`),
    ...[...Deno.readDirSync(`${ROOT}plans`)].filter((e) => e.name.endsWith(".yaml"))
      .map((e) => `plans/${e.name}`),
  ];
  assert(files.length >= 9);
  for (const file of files) {
    const r = await checkPlanFile(file, { nowMs: NOW, cwd: ROOT });
    assertEquals(r.problems, [], file);
  }
});

Deno.test("safeParsePlan() refuses a 50 MB plan on its size before parsing", async () => {
  const tmp = await Deno.makeTempDir();
  try {
    const base = buildTalosUpgradePlanYaml({ catalogueSha256: "0".repeat(64) });
    const pad = "# padding\n".repeat(5 * 1024 * 1024);
    const path = `${tmp}/huge.yaml`;
    await Deno.writeTextFile(path, base + pad);
    const bytes = await Deno.readFile(path);
    assert(bytes.length >= 50 * 1024 * 1024);
    const r = await safeParsePlan(bytes, { file: "huge.yaml" });
    assert(!r.ok);
    assertEquals(r.problems.map((p) => [p.reason, p.location?.line, p.location?.column]), [
      ["PlanTooLarge", 1, 1],
    ]);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});
