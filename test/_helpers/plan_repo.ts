/**
 * A throwaway git repository holding copies of the shipped example plan and the files it binds
 * (catalogue, health policy, evidence manifest), so CLI tests can edit, bind and sign real
 * plans without touching the repository's own files.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** The files copied, repository-relative. */
export const PLAN_REPO_FILES = [
  "plans/talos-v1.14.2.yaml",
  "catalogue/talos.yaml",
  "policies/home-ops.yaml",
  "policies/home-ops-kubernetes.yaml",
  "evidence/upgrade-order.yaml",
  "fixtures/clusters/home-ops.yaml",
] as const;

/** A moment at which the shipped example plan and catalogue are valid (before its expiry). */
export const PLAN_REPO_NOW = "2026-11-25T00:00:00Z";

/** Creates the repository; the caller removes `dir`. */
export async function makePlanRepo(prefix = "cairn-plan-repo-"): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix });
  for (const rel of PLAN_REPO_FILES) {
    await Deno.mkdir(join(dir, dirname(rel)), { recursive: true });
    await Deno.copyFile(join(REPO_ROOT, rel), join(dir, rel));
  }
  const init = await new Deno.Command("git", {
    args: ["init", "-q", dir],
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!init.success) throw new Error(new TextDecoder().decode(init.stderr));
  return dir;
}
