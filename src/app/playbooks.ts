/**
 * Where the playbooks shipped with cairn live (`playbooks/` at the top of the repository), and
 * the loading entry point commands use.
 */
import { fileURLToPath } from "node:url";
import { loadPlaybookDir } from "../adapters/playbook/playbook_dir.ts";
import { CairnError } from "../domain/errors.ts";
import type { Playbook } from "../domain/playbook/schema.ts";

/** The directory of the playbooks shipped with cairn. */
export function shippedPlaybooksDir(): string {
  return fileURLToPath(new URL("../../playbooks/", import.meta.url));
}

/** Loads `dir` (default: the shipped set); the first problem is thrown as a CairnError. */
export async function loadPlaybooks(dir?: string): Promise<readonly Playbook[]> {
  const r = await loadPlaybookDir(dir ?? shippedPlaybooksDir(), dir ?? "playbooks");
  if (!r.ok) throw new CairnError(r.problems[0]!);
  return r.playbooks;
}
