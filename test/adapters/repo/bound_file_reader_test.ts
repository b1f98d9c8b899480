import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { findRepositoryRoot, readBoundFile } from "../../../src/adapters/repo/bound_file_reader.ts";
import type { BoundFileRead } from "../../../src/ports/dispatch.ts";
import { within } from "../../_helpers/silent_listener.ts";

/** A repository (`.git` directory) with `plans/p.yaml` and a policy at the root. */
async function repo(): Promise<{ root: string; plan: string; outside: string }> {
  const outside = await Deno.makeTempDir({ prefix: "cairn-outside-" });
  const root = join(outside, "repo");
  await Deno.mkdir(join(root, ".git"), { recursive: true });
  await Deno.mkdir(join(root, "plans"));
  await Deno.mkdir(join(root, "policies"));
  await Deno.writeTextFile(join(root, "plans", "p.yaml"), "kind: TalosUpgrade\n");
  await Deno.writeTextFile(join(root, "policies", "home.yaml"), "cluster: home-ops\n");
  await Deno.writeTextFile(join(outside, "secret.yaml"), "token: hunter2\n");
  return { root, plan: join(root, "plans", "p.yaml"), outside };
}

function refusedWith(r: BoundFileRead, reason: string): boolean {
  return r.status === "refused" && r.reason === reason;
}

Deno.test("readBoundFile() reads a repository-relative file found from the plan's directory upwards", async () => {
  const r = await repo();
  try {
    assertEquals(await findRepositoryRoot(join(r.root, "plans")), r.root);
    const got = await readBoundFile(r.plan, "policies/home.yaml");
    assert(got.status === "read");
    assertEquals(new TextDecoder().decode(got.bytes), "cluster: home-ops\n");
    const missing = await readBoundFile(r.plan, "policies/none.yaml");
    assertEquals(missing.status, "missing");
  } finally {
    await Deno.remove(r.outside, { recursive: true });
  }
});

Deno.test("readBoundFile() never looks above the repository root", async () => {
  const r = await repo();
  try {
    // secret.yaml exists one level above the root: the upward search must not reach it.
    const got = await readBoundFile(r.plan, "secret.yaml");
    assertEquals(got.status, "missing");
    for (const bad of ["../secret.yaml", "../../secret.yaml", "/etc/passwd", "a/../../x"]) {
      assert(refusedWith(await readBoundFile(r.plan, bad), "BoundPathInvalid"), bad);
    }
  } finally {
    await Deno.remove(r.outside, { recursive: true });
  }
});

Deno.test("readBoundFile() refuses a symlink anywhere on the path, never following it", async () => {
  const r = await repo();
  try {
    await Deno.symlink("/dev/zero", join(r.root, "policies", "zero.yaml"));
    await Deno.symlink(join(r.outside, "secret.yaml"), join(r.root, "policies", "out.yaml"));
    await Deno.symlink(r.outside, join(r.root, "linked"));
    await Deno.symlink("home.yaml", join(r.root, "policies", "inside.yaml"));
    for (const path of ["policies/zero.yaml", "policies/out.yaml", "linked/secret.yaml"]) {
      const got = await readBoundFile(r.plan, path);
      assert(refusedWith(got, "BoundPathSymlink"), `${path}: ${JSON.stringify(got)}`);
    }
    // Even a link that stays inside the repository is refused: bound files are plain files.
    assert(refusedWith(await readBoundFile(r.plan, "policies/inside.yaml"), "BoundPathSymlink"));
  } finally {
    await Deno.remove(r.outside, { recursive: true });
  }
});

Deno.test("readBoundFile() refuses FIFOs and directories without opening them", async () => {
  const r = await repo();
  try {
    const fifo = join(r.root, "policies", "fifo.yaml");
    const mk = await new Deno.Command("mkfifo", { args: [fifo] }).output();
    assert(mk.success, "mkfifo");
    // Opening a FIFO with no writer blocks forever: the refusal must come from lstat alone.
    const got = await within(5_000, readBoundFile(r.plan, "policies/fifo.yaml"));
    assert(refusedWith(got, "BoundFileNotRegular"), JSON.stringify(got));
    assert(got.status === "refused" && /FIFO/.test(got.detail));
    assert(refusedWith(await readBoundFile(r.plan, "policies"), "BoundFileNotRegular"));
  } finally {
    await Deno.remove(r.outside, { recursive: true });
  }
});

Deno.test("readBoundFile() refuses a file over the cap before reading it", async () => {
  const r = await repo();
  try {
    await Deno.writeFile(join(r.root, "policies", "big.yaml"), new Uint8Array(2 * 1024 * 1024));
    const got = await readBoundFile(r.plan, "policies/big.yaml");
    assert(refusedWith(got, "BoundFileTooLarge"), JSON.stringify(got));
    // The refusal names the size the file system reports: it came before any byte was read.
    assert(got.status === "refused" && /it is 2097152 bytes/.test(got.detail), got.status);
    const small = await readBoundFile(r.plan, "policies/home.yaml", { maxBytes: 4 });
    assert(refusedWith(small, "BoundFileTooLarge"));
    const exact = await readBoundFile(r.plan, "policies/home.yaml", { maxBytes: 18 });
    assertEquals(exact.status, "read");
  } finally {
    await Deno.remove(r.outside, { recursive: true });
  }
});

Deno.test("findRepositoryRoot() outside git: the working directory holding the plan, else the plans/ parent", async () => {
  const base = await Deno.makeTempDir({ prefix: "cairn-nogit-" });
  try {
    const deep = join(base, "fixtures", "plans", "invalid");
    await Deno.mkdir(deep, { recursive: true });
    assertEquals(await findRepositoryRoot(deep, base), base);
    assertEquals(await findRepositoryRoot(deep, join(base, "elsewhere")), deep);
    await Deno.mkdir(join(base, "plans"));
    assertEquals(await findRepositoryRoot(join(base, "plans")), base);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});
