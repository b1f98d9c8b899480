import { deepStrictEqual as assertEquals, ok, rejects } from "node:assert/strict";
import { CairnError } from "../../../src/domain/errors.ts";
import { ObjectReader } from "../../../src/adapters/git/object_reader.ts";
import type { TreeEntry } from "../../../src/adapters/git/git_parse.ts";
import { decodePath, splitNul } from "../../../src/adapters/git/git_parse.ts";
import { git } from "../../_helpers/git_daemon.ts";

const te = new TextEncoder();
const td = new TextDecoder();

/** A bare repository of either object format, written with plumbing only. */
async function bareRepo(
  format: "sha1" | "sha256",
): Promise<{ dir: string; close(): Promise<void> }> {
  const dir = await Deno.makeTempDir({ prefix: "cairn-objects-" });
  await git(["init", "--quiet", "--bare", `--object-format=${format}`, dir]);
  return { dir, close: () => Deno.remove(dir, { recursive: true }) };
}

async function blob(dir: string, text: string): Promise<string> {
  return (await git(["--git-dir", dir, "hash-object", "-w", "--stdin"], undefined, te.encode(text)))
    .trim();
}

/** `git mktree -z` from entries whose names are raw bytes (so they need not be UTF-8). */
async function tree(
  dir: string,
  entries: readonly { mode: string; type: string; oid: string; name: Uint8Array }[],
): Promise<string> {
  const parts: Uint8Array[] = [];
  for (const e of entries) {
    parts.push(te.encode(`${e.mode} ${e.type} ${e.oid}\t`), e.name, new Uint8Array([0]));
  }
  const input = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    input.set(p, at);
    at += p.length;
  }
  return (await git(["--git-dir", dir, "mktree", "-z", "--missing"], undefined, input)).trim();
}

async function commit(dir: string, treeId: string): Promise<string> {
  return (await git([
    "-c",
    "user.name=t",
    "-c",
    "user.email=t@example.invalid",
    "--git-dir",
    dir,
    "commit-tree",
    "-m",
    "t",
    treeId,
  ])).trim();
}

/** What `git ls-tree -z --long` says about `dir` of `commit`, parsed here independently. */
async function lsTree(repo: string, commitId: string, dir: string): Promise<TreeEntry[]> {
  const out = await new Deno.Command("git", {
    args: ["--git-dir", repo, "ls-tree", "-z", "--long", commitId, "--", `${dir}/`],
    stdout: "piped",
  }).output();
  return splitNul(out.stdout).map((record) => {
    const tab = record.indexOf(9);
    const [mode = "", type = "", oid = "", size = "-"] = td.decode(record.subarray(0, tab)).trim()
      .split(/\s+/);
    return {
      mode,
      type,
      oid,
      size: size === "-" ? -1 : Number(size),
      ...decodePath(record.subarray(tab + 1)),
    };
  });
}

/** A plans directory with every kind of entry a listing must tell apart. */
async function awkwardCommit(dir: string): Promise<string> {
  const plan = await blob(dir, "kind: TalosUpgrade\n");
  const sig = await blob(dir, "-----BEGIN SSH SIGNATURE-----\n");
  const target = await blob(dir, "../elsewhere.yaml");
  const inner = await tree(dir, [{
    mode: "100644",
    type: "blob",
    oid: plan,
    name: te.encode("x"),
  }]);
  const plans = await tree(dir, [
    { mode: "100644", type: "blob", oid: plan, name: te.encode("a.yaml") },
    { mode: "100644", type: "blob", oid: sig, name: te.encode("a.yaml.sig") },
    { mode: "100755", type: "blob", oid: plan, name: te.encode("run.yaml") },
    { mode: "120000", type: "blob", oid: target, name: te.encode("link.yaml") },
    { mode: "040000", type: "tree", oid: inner, name: te.encode("dir.yaml") },
    // A submodule: its commit is not in this repository (as with a real gitlink).
    { mode: "160000", type: "commit", oid: plan.replace(/^./, "f"), name: te.encode("sub.yaml") },
    // Not UTF-8: "caf\xe9.yaml".
    {
      mode: "100644",
      type: "blob",
      oid: plan,
      name: new Uint8Array([...te.encode("caf"), 0xe9, ...te.encode(".yaml")]),
    },
    { mode: "100644", type: "blob", oid: plan, name: te.encode("spa ce\tand\nnewline.yaml") },
  ]);
  const root = await tree(dir, [
    { mode: "040000", type: "tree", oid: plans, name: te.encode("plans") },
    { mode: "100644", type: "blob", oid: plan, name: te.encode("README.md") },
  ]);
  return await commit(dir, root);
}

for (const format of ["sha1", "sha256"] as const) {
  Deno.test(`ObjectReader lists a directory exactly as ls-tree does (${format} repository)`, async () => {
    const repo = await bareRepo(format);
    try {
      const head = await awkwardCommit(repo.dir);
      const expected = await lsTree(repo.dir, head, "plans");
      ok(expected.length === 8, JSON.stringify(expected));
      const listed = await ObjectReader.using(repo.dir, (o) => o.list(head, "plans"));
      assertEquals(listed, expected);
      const root = await ObjectReader.using(repo.dir, (o) => o.list(head, ""));
      assertEquals(root?.map((e) => [e.path, e.type]), [["README.md", "blob"], ["plans", "tree"]]);
    } finally {
      await repo.close();
    }
  });
}

Deno.test("ObjectReader finds entries by path and never through a link, a file or a submodule", async () => {
  const repo = await bareRepo("sha1");
  try {
    const head = await awkwardCommit(repo.dir);
    const found = await ObjectReader.using(repo.dir, async (o) => ({
      plan: await o.entry(head, "plans/a.yaml"),
      link: await o.entry(head, "plans/link.yaml"),
      dir: await o.entry(head, "plans/dir.yaml"),
      inside: await o.entry(head, "plans/dir.yaml/x"),
      throughLink: await o.entry(head, "plans/link.yaml/x"),
      throughFile: await o.entry(head, "README.md/x"),
      throughSubmodule: await o.entry(head, "plans/sub.yaml/x"),
      missing: await o.entry(head, "plans/none.yaml"),
      missingDir: await o.entry(head, "nowhere/a.yaml"),
    }));
    assertEquals(found.plan?.size, "kind: TalosUpgrade\n".length);
    assertEquals([found.link?.mode, found.dir?.type, found.inside?.path], [
      "120000",
      "tree",
      "plans/dir.yaml/x",
    ]);
    assertEquals(
      [
        found.throughLink,
        found.throughFile,
        found.throughSubmodule,
        found.missing,
        found.missingDir,
      ],
      [undefined, undefined, undefined, undefined, undefined],
    );
  } finally {
    await repo.close();
  }
});

Deno.test("ObjectReader answers thousands of questions in one process without waiting on its own pipes", async () => {
  const repo = await bareRepo("sha1");
  try {
    // Each file 4 KiB, 3,000 of them: questions and answers both far past a pipe's buffer.
    const files = await Deno.makeTempDir({ prefix: "cairn-objects-files-" });
    const paths = [];
    for (let i = 0; i < 3000; i++) {
      paths.push(`${files}/${i}`);
      await Deno.writeTextFile(paths[i]!, `${String(i).padStart(6, "0")}\n`.repeat(585));
    }
    // Its answers are written while the paths are read: both ends at once, past the pipe's size.
    const hashing = new Deno.Command("git", {
      args: ["--git-dir", repo.dir, "hash-object", "-w", "--stdin-paths"],
      stdin: "piped",
      stdout: "piped",
    }).spawn();
    const writing = (async () => {
      const w = hashing.stdin.getWriter();
      await w.write(te.encode(paths.join("\n") + "\n"));
      await w.close();
    })();
    const [hashed] = await Promise.all([hashing.output(), writing]);
    const oids = td.decode(hashed.stdout).trim().split("\n");
    await Deno.remove(files, { recursive: true });
    const entries = oids.map((oid, i) => ({
      mode: "100644",
      type: "blob",
      oid,
      name: te.encode(`p${i}.yaml`),
    }));
    const plans = await tree(repo.dir, entries);
    const head = await commit(
      repo.dir,
      await tree(repo.dir, [{
        mode: "040000",
        type: "tree",
        oid: plans,
        name: te.encode("plans"),
      }]),
    );
    const { listed, bodies } = await ObjectReader.using(repo.dir, async (o) => {
      const listed = (await o.list(head, "plans"))!;
      return { listed, bodies: await o.contents(listed.map((e) => e.oid)) };
    });
    assertEquals(listed, await lsTree(repo.dir, head, "plans"));
    assertEquals(bodies.length, 3000);
    const at = listed.findIndex((e) => e.path === "plans/p1234.yaml");
    assertEquals(td.decode(bodies[at]!).slice(0, 7), "001234\n");
    ok(bodies.every((b) => b?.length === 7 * 585));
  } finally {
    await repo.close();
  }
});

Deno.test("ObjectReader: a missing commit is no commit, a missing object answers undefined, and only ids reach git", async () => {
  const repo = await bareRepo("sha1");
  try {
    const head = await awkwardCommit(repo.dir);
    const plan = await blob(repo.dir, "kind: TalosUpgrade\n");
    await ObjectReader.using(repo.dir, async (o) => {
      ok(await o.hasCommit(head));
      ok(!(await o.hasCommit("0".repeat(40))));
      // A blob id is not a commit.
      ok(!(await o.hasCommit(plan)));
      ok(!(await o.hasCommit("HEAD")));
      assertEquals(await o.contents(["1".repeat(40), plan]), [
        undefined,
        te.encode("kind: TalosUpgrade\n"),
      ]);
      assertEquals(await o.list("2".repeat(40), "plans"), undefined);
      // A name that would be another command of --batch-command is refused before it is sent.
      for (const bad of ["HEAD", `${plan}\ncontents ${plan}`, `${plan}:plans`, "flush"]) {
        await rejects(o.info([bad]), /not an object id/);
      }
      // The conversation is still in step after the refusals.
      assertEquals((await o.info([plan]))[0]?.type, "blob");
    });
  } finally {
    await repo.close();
  }
});

Deno.test("ObjectReader on something that is not a repository fails with git's own words", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cairn-objects-" });
  try {
    await rejects(
      ObjectReader.using(`${dir}/none`, (o) => o.hasCommit("0".repeat(40))),
      (e) =>
        e instanceof CairnError && e.reason === "GitCommandFailed" &&
        /git cat-file failed \(exit 128\).*not a git repository/i.test(e.message),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
