/**
 * The shipped example plans must pass `cairn plan check` for a new user who clones the
 * repository today. This is one of the few tests that reads the wall clock on purpose: it fails
 * 14 days before any example expires, while there is still time to run `deno task examples`
 * (which needs nothing but this repository). A catalogue snapshot going stale is written to
 * stderr as a warning instead of failing: refreshing it needs a genuine read of the releases API,
 * which a machine without that network cannot make, and a suite that turns red on a date with no
 * offline remedy would block every unrelated change. `plan check` itself still refuses a stale
 * snapshot (CatalogueStale), so users are never told a stale catalogue is fine.
 */
import { parse } from "yaml";
import { CATALOGUE_MAX_AGE_MS, parseCatalogue } from "../src/domain/catalogue.ts";

const ROOT = new URL("../", import.meta.url);
const DAY_MS = 86_400_000;
const WARNING_DAYS = 14;

Deno.test(`every shipped example plan passes plan check for at least ${WARNING_DAYS} more days`, async () => {
  const now = Date.now();
  const late: string[] = [];
  const warnings = new Set<string>();
  const plans = [...Deno.readDirSync(new URL("plans/", ROOT))]
    .filter((e) => e.name.endsWith(".yaml")).map((e) => `plans/${e.name}`).sort();
  if (plans.length === 0) throw new Error("no example plans found in plans/");
  for (const plan of plans) {
    const doc = parse(await Deno.readTextFile(new URL(plan, ROOT)));
    const ends: { at: number; what: string; fix: string; warnOnly?: true }[] = [{
      at: Date.parse(doc.metadata.expires),
      what: `it expires (metadata.expires ${doc.metadata.expires})`,
      fix: "deno task examples",
    }];
    const bound = doc.spec.catalogue?.path as string | undefined;
    if (bound) {
      const cat = await parseCatalogue(await Deno.readFile(new URL(bound, ROOT)), bound);
      ends.push({
        at: cat.snapshotAtMs + CATALOGUE_MAX_AGE_MS,
        what: `its catalogue ${bound} (snapshot of ${cat.file.metadata.snapshotAt}) goes stale`,
        fix: "deno task examples --catalogue-base-url URL (a genuine read of the releases API)",
        warnOnly: true,
      });
    }
    for (const end of ends) {
      if (end.at - now < WARNING_DAYS * DAY_MS) {
        const line = `${plan} stops passing plan check on ${new Date(end.at).toISOString()}: ` +
          `${end.what}. Run: ${end.fix}`;
        if (end.warnOnly) warnings.add(line);
        else late.push(line);
      }
    }
  }
  if (warnings.size) {
    const text = [...warnings].map((w) => `warning: ${w}\n`).join("");
    await Deno.stderr.write(new TextEncoder().encode(text));
  }
  if (late.length) {
    throw new Error(
      `shipped examples need refreshing (less than ${WARNING_DAYS} days left):\n` + late.join("\n"),
    );
  }
});
