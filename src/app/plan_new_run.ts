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

/**
 * The reviewed branch of a component bump, read with real git in the repository at `root`: the
 * base and head commits, and every pin file of the component's playbook that the branch changes,
 * with the SHA-256 of its bytes at head (what the plan binds; the dispatch check holds the
 * watched branch to them). A branch that moves no pin file of the component is refused.
 */
export async function componentBranchChange(o: {
  readonly root: string;
  readonly cairnRoot: string;
  readonly component: string;
  readonly base: string;
  readonly head: string;
}): Promise<{ base: string; head: string; pins: { path: string; sha256: string }[] }> {
  const { gitOrThrow, gitText } = await import("../adapters/git/run_git.ts");
  const { readPlaybook } = await import("./component_run.ts");
  const { sha256Hex } = await import("../domain/plan/digest.ts");
  const { CairnError } = await import("../domain/errors.ts");
  const commit = async (ref: string) =>
    await gitText(["rev-parse", "--verify", "--end-of-options", `${ref}^{commit}`], {
      cwd: o.root,
    });
  const base = await commit(o.base), head = await commit(o.head);
  const playbook = await readPlaybook(o.cairnRoot, o.component);
  if (!playbook) {
    throw new CairnError({
      reason: "AuthoringInputInvalid",
      message: `no playbook for component ${o.component}: its pin files are unknown`,
    });
  }
  const pinFiles = new Set(playbook.spec.pinSets.flatMap((s) => s.pins.map((p) => p.file)));
  const changed = (await gitText(["diff", "--name-only", base, head, "--"], { cwd: o.root }))
    .split("\n").filter((f) => pinFiles.has(f)).sort();
  if (changed.length === 0) {
    throw new CairnError({
      reason: "AuthoringInputInvalid",
      message: `${o.head} moves no pin file of ${o.component} against ${o.base}`,
    });
  }
  const pins = [];
  for (const path of changed) {
    const bytes = await gitOrThrow(["show", `${head}:${path}`], { cwd: o.root });
    pins.push({ path, sha256: await sha256Hex(bytes) });
  }
  return { base, head, pins };
}
