/**
 * `GitOpsTree` over real git in a local repository: revisions resolved with `rev-parse
 * --verify`, changed paths from `diff --name-only -z --no-renames`, files read in two batched
 * `cat-file` calls (sizes first, so a file over the cap is never read; strict UTF-8). Read-only.
 */
import { CairnError } from "../../domain/errors.ts";
import { MAX_GITOPS_FILE_BYTES } from "../../domain/playbook/select.ts";
import type { FileContent } from "../../domain/review/judge.ts";
import type { GitOpsTree } from "../../ports/gitops_tree.ts";
import { runGit } from "./run_git.ts";

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/**
 * A GitOps tree over the repository in `dir` (its working tree is never read), or over a bare
 * repository given as `{ gitDir }` (the reconciler's cache clone).
 */
export function gitOpsTree(
  at: string | { readonly gitDir: string },
  maxBytes = MAX_GITOPS_FILE_BYTES,
): GitOpsTree {
  const where = typeof at === "string" ? { cwd: at } : { gitDir: at.gitDir };
  const git = (args: readonly string[], stdin?: Uint8Array) =>
    runGit(args, { ...where, ...(stdin ? { stdin } : {}) });
  return {
    async resolve(rev) {
      // deno-lint-ignore no-control-regex
      if (rev.startsWith("-") || rev.length > 256 || /[\s\u0000-\u001f]/.test(rev)) {
        throw unknownRef(rev, "not a revision");
      }
      const out = await git([
        "rev-parse",
        "--verify",
        "--quiet",
        "--end-of-options",
        `${rev}^{commit}`,
      ]);
      if (out.code !== 0) throw unknownRef(rev, out.stderr.trim() || "no such commit");
      return decoder.decode(out.stdout).trim();
    },
    async mergeBase(a, b) {
      const out = await git(["merge-base", "--end-of-options", a, b]);
      return out.code === 0 ? decoder.decode(out.stdout).trim() : undefined;
    },
    async changedPaths(from, to) {
      const out = await git([
        "diff",
        "--name-only",
        "-z",
        "--no-renames",
        "--end-of-options",
        from,
        to,
        "--",
      ]);
      if (out.code !== 0) {
        throw new CairnError({
          reason: "GitCommandFailed",
          message: `git diff failed: ${out.stderr.trim()}`,
        });
      }
      return decoder.decode(out.stdout).split("\0").filter((p) => p !== "").sort();
    },
    async readFiles(commit, paths) {
      const result = new Map<string, FileContent>();
      // Playbook paths never hold a newline (the schema refuses control characters), so the
      // line-oriented batch protocol cannot be confused by them.
      const wanted = paths.filter((p) => !/[\n\r]/.test(p));
      if (wanted.length === 0) return result;
      const check = await git(
        ["cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)"],
        encoder.encode(wanted.map((p) => `${commit}:${p}\n`).join("")),
      );
      if (check.code !== 0) {
        throw new CairnError({
          reason: "GitCommandFailed",
          message: `git cat-file failed: ${check.stderr.trim()}`,
        });
      }
      const lines = decoder.decode(check.stdout).split("\n");
      const toRead: { path: string; oid: string; size: number }[] = [];
      wanted.forEach((path, i) => {
        const line = lines[i] ?? "";
        const m = /^([0-9a-f]{40,64}) (\w+) (\d+)$/.exec(line);
        if (!m) result.set(path, { kind: "missing" });
        else if (m[2] !== "blob") {
          result.set(path, { kind: "unreadable", why: `it is a ${m[2]}, not a file` });
        } else if (Number(m[3]) > maxBytes) {
          result.set(path, {
            kind: "unreadable",
            why: `file is ${m[3]} bytes; the limit is ${maxBytes}`,
          });
        } else toRead.push({ path, oid: m[1]!, size: Number(m[3]) });
      });
      if (toRead.length === 0) return result;
      const batch = await git(
        ["cat-file", "--batch"],
        encoder.encode(toRead.map((r) => `${r.oid}\n`).join("")),
      );
      if (batch.code !== 0) {
        throw new CairnError({
          reason: "GitCommandFailed",
          message: `git cat-file failed: ${batch.stderr.trim()}`,
        });
      }
      let at = 0;
      const bytes = batch.stdout;
      for (const r of toRead) {
        const nl = bytes.indexOf(0x0a, at);
        const header = decoder.decode(bytes.subarray(at, nl));
        const size = Number(header.split(" ")[2]);
        const body = bytes.subarray(nl + 1, nl + 1 + size);
        at = nl + 1 + size + 1;
        try {
          result.set(r.path, {
            kind: "text",
            text: new TextDecoder("utf-8", { fatal: true }).decode(body),
          });
        } catch {
          result.set(r.path, { kind: "unreadable", why: "file is not valid UTF-8" });
        }
      }
      return result;
    },
  };
}

function unknownRef(rev: string, why: string): CairnError {
  return new CairnError({
    reason: "ReviewRefUnknown",
    message: `${JSON.stringify(rev)} does not name a commit of the repository (${why})`,
  });
}
