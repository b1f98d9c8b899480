/**
 * The adapters `cairn plan new` reads through: the repository root a new plan lives in, the
 * files it binds (read exactly as plan check reads them: inside the repository, never through a
 * link, capped) and the registry that pins each hop's installer to its per-platform digest.
 * Authoring the plan is the domain's (`domain/plan/author.ts`); the command renders and writes.
 */
import { findRepositoryRoot, readBoundFile } from "../adapters/repo/bound_file_reader.ts";
import { registryInstallerResolver } from "../adapters/oci/installer_resolver.ts";
import type { BoundFileRead, InstallerResolver } from "../ports/dispatch.ts";

/** The repository holding `planDir` (its `.git`), or `cwd` outside git when it holds the plan. */
export async function newPlanRepositoryRoot(planDir: string, cwd: string): Promise<string> {
  return await findRepositoryRoot(planDir, cwd);
}

/** `rel` (repository-relative) as the plan at `planPath` would bind it. */
export async function readFileToBind(
  planPath: string,
  rel: string,
  where: { readonly cwd: string; readonly root: string },
): Promise<BoundFileRead> {
  return await readBoundFile(planPath, rel, where);
}

/** Installer references to digests through the registry, or a mirror of a registry host. */
export function newPlanInstallerResolver(
  mirrors: Readonly<Record<string, string>>,
  timeoutMs: number,
): InstallerResolver {
  return registryInstallerResolver({ mirrors, timeoutMs });
}
