import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { parse } from "yaml";
import { makePlanRepo, REPO_ROOT } from "./_helpers/plan_repo.ts";

const TOOL = `${REPO_ROOT}tools/refresh_examples.ts`;

async function refresh(root: string, extra: string[] = []) {
  const r = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", TOOL, "--root", root, "--now", "2026-11-25T00:00:00Z", ...extra],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: r.code, out: dec.decode(r.stdout) + dec.decode(r.stderr) };
}

Deno.test("deno task examples moves every example's expiry, re-binds its digests, names stale signatures, and checks them", async () => {
  const dir = await makePlanRepo("cairn-refresh-examples-");
  try {
    const plans = [...Deno.readDirSync(`${REPO_ROOT}plans`)].map((e) => e.name)
      .filter((n) => n.endsWith(".yaml")).sort();
    for (const p of plans) await Deno.copyFile(`${REPO_ROOT}plans/${p}`, `${dir}/plans/${p}`);
    // A reviewed change of the policy the examples bind, and one signed example.
    await Deno.writeTextFile(`${dir}/policies/home-ops.yaml`, "# reviewed\n", { append: true });
    await Deno.writeTextFile(`${dir}/plans/talos-v1.14.2.yaml.sig`, "signed before\n");

    const first = await refresh(dir, ["--from", "2026-11-21", "--days", "30"]);
    assertEquals(first.code, 1, first.out);
    assert(first.out.includes("plans/talos-v1.14.2.yaml.sig"), first.out);
    assert(first.out.includes("sign again"), first.out);
    for (const p of plans) {
      const doc = parse(await Deno.readTextFile(`${dir}/plans/${p}`));
      assertEquals(doc.metadata.expires, "2026-12-21T00:00:00Z", p);
      assert(new RegExp(`^ok plans/${p.replaceAll(".", "\\.")} `, "m").test(first.out), first.out);
    }
    assert(first.out.includes("spec.healthPolicy.sha256"), first.out);
    assert(first.out.includes("refresh it with --catalogue-base-url URL"), first.out);
    // The catalogue is never re-dated without a genuine read of its source.
    assertEquals(
      await Deno.readTextFile(`${dir}/catalogue/talos.yaml`),
      await Deno.readTextFile(`${REPO_ROOT}catalogue/talos.yaml`),
    );

    await Deno.remove(`${dir}/plans/talos-v1.14.2.yaml.sig`);
    const again = await refresh(dir, ["--from", "2026-11-21", "--days", "30"]);
    assertEquals(again.code, 0, again.out);
    assert(/plans\/talos-v1\.14\.2\.yaml: unchanged/.test(again.out), again.out);

    const bad = await refresh(dir, ["--from", "2026-11-21", "--days", "3"]);
    assertEquals(bad.code, 1);
    assert(bad.out.includes("--days"), bad.out);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
