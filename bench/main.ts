// deno-lint-ignore-file no-console
/**
 * `deno task bench [NAME...]`: runs every `bench/*_bench.ts` (or those whose name contains one
 * of the arguments) in its own process, one after another, so that figures do not disturb each
 * other. Each benchmark prints its own figures and its ratio against a baseline measured in the
 * same run; timed assertions never live in tests.
 */
const dir = new URL(".", import.meta.url).pathname;
const filters = Deno.args;
const files = [...Deno.readDirSync(dir)]
  .map((e) => e.name)
  .filter((n) => n.endsWith("_bench.ts"))
  .filter((n) => filters.length === 0 || filters.some((f) => n.includes(f)))
  .sort();
let failed = 0;
for (const name of files) {
  console.log(`\n=== ${name}`);
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${dir}${name}`],
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  const { code } = await child.status;
  if (code !== 0) {
    console.log(`!!! ${name} exited ${code}`);
    failed++;
  }
}
console.log(`\nbenchmarks: ${files.length - failed} ran, ${failed} failed`);
Deno.exit(failed === 0 ? 0 : 1);
