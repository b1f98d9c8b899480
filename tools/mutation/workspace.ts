/**
 * A throwaway copy of the repository to mutate: the files git knows (tracked, plus untracked ones
 * that are not ignored, so a helper's uncommitted tests count) in their current working-tree
 * versions, with node_modules linked rather than copied. One copy serves many mutants: each edit
 * is undone before the next, so the copy never holds more than one mutation.
 */
import { dirname, join } from "node:path";
import { occurrences } from "./mutants.ts";

export interface WorkspaceCopy {
  readonly dir: string;
  /** Applies one edit to `file`, runs `fn`, and restores the file's original bytes afterwards. */
  withEdit<T>(file: string, find: string, replace: string, fn: () => Promise<T>): Promise<T>;
  remove(): Promise<void>;
}

const LINKED = ["node_modules", "tools/deno/node_modules", "tools/kubectl/node_modules"];

export async function makeWorkspaceCopy(root: string): Promise<WorkspaceCopy> {
  const listed = await new Deno.Command("git", {
    args: ["-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!listed.success) {
    throw new Error(
      `git ls-files failed in ${root}: ${new TextDecoder().decode(listed.stderr).trim()}`,
    );
  }
  const files = new TextDecoder().decode(listed.stdout).split("\0").filter((f) => f !== "");
  const dir = await Deno.makeTempDir({ prefix: "cairn-mutate-" });
  try {
    const made = new Set<string>();
    for (const f of files) {
      const from = join(root, f);
      let st: Deno.FileInfo;
      try {
        st = await Deno.lstat(from);
      } catch (e) {
        if (e instanceof Deno.errors.NotFound) continue; // deleted in the working tree
        throw e;
      }
      const to = join(dir, f);
      const parent = dirname(to);
      if (!made.has(parent)) {
        await Deno.mkdir(parent, { recursive: true });
        made.add(parent);
      }
      if (st.isSymlink) await Deno.symlink(await Deno.readLink(from), to);
      else if (st.isFile) await Deno.copyFile(from, to);
    }
    // Installed dependencies are linked, not copied: the npm packages, and the pinned Deno and
    // kubectl that ./cairn and the tools bootstrap (a test that runs ./cairn must not install
    // a second Deno into the copy, nor print that it does).
    for (const linked of LINKED) {
      try {
        await Deno.stat(join(root, linked));
        await Deno.mkdir(dirname(join(dir, linked)), { recursive: true });
        await Deno.symlink(join(root, linked), join(dir, linked));
      } catch (e) {
        if (!(e instanceof Deno.errors.NotFound)) throw e;
      }
    }
  } catch (e) {
    await Deno.remove(dir, { recursive: true });
    throw e;
  }
  return {
    dir,
    async withEdit(file, find, replace, fn) {
      const path = join(dir, file);
      const original = await Deno.readTextFile(path);
      const n = occurrences(original, find);
      if (n !== 1) throw new Error(`find text occurs ${n} times in the copy of ${file}`);
      await Deno.writeTextFile(path, original.replace(find, () => replace));
      try {
        return await fn();
      } finally {
        await Deno.writeTextFile(path, original);
      }
    },
    async remove() {
      // Removes the links themselves, never what they point to.
      await Deno.remove(dir, { recursive: true });
    },
  };
}
