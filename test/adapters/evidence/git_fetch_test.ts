import { deepStrictEqual as assertEquals, ok as assert, rejects } from "node:assert/strict";
import { join } from "node:path";
import {
  cachePath,
  fetchPinnedFile,
  MAX_CACHED_BYTES,
  readCached,
  readProvenance,
  repoSlug,
  writeCached,
  writeProvenance,
} from "../../../src/adapters/evidence/git_fetch.ts";
import { classifyFetch } from "../../../src/domain/evidence/provenance.ts";
import { CairnError } from "../../../src/domain/errors.ts";
import { sha256Hex } from "../../../src/domain/plan/digest.ts";
import { buildUpstreamRepos, FIXTURES, LOGICAL } from "./upstream_repos.ts";
import { startSilentListener, within } from "../../_helpers/silent_listener.ts";

const UPGRADE = "cmd/talosctl/cmd/talos/upgrade.go";

Deno.test("fetchPinnedFile() returns the exact bytes of a path at a pinned commit", async () => {
  const root = await Deno.makeTempDir();
  try {
    const repos = await buildUpstreamRepos(root);
    const want = await Deno.readFile(join(FIXTURES, "upstream/talos", UPGRADE));
    const got = await fetchPinnedFile({
      repo: repos.urls.talos,
      revision: repos.talos[0],
      path: UPGRADE,
    });
    assertEquals(got.bytes, want);
    assertEquals(got.sha256, await sha256Hex(want));
    const later = await fetchPinnedFile({
      repo: repos.urls.talos,
      revision: repos.talos[1],
      path: UPGRADE,
    });
    assert(later.sha256 !== got.sha256, "the second commit changes the file");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("fetchPinnedFile() falls back to a full fetch when the server refuses SHA wants", async () => {
  const root = await Deno.makeTempDir();
  try {
    const repos = await buildUpstreamRepos(root, false);
    // Protocol v0 honours uploadpack.allowAnySHA1InWant strictly, so the shallow want is refused.
    const env = {
      GIT_CONFIG_COUNT: "1",
      GIT_CONFIG_KEY_0: "protocol.version",
      GIT_CONFIG_VALUE_0: "0",
    };
    const got = await fetchPinnedFile(
      { repo: repos.urls.talos, revision: repos.talos[0], path: UPGRADE },
      { env },
    );
    assertEquals(
      got.sha256,
      await sha256Hex(await Deno.readFile(join(FIXTURES, "upstream/talos", UPGRADE))),
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("fetchPinnedFile() fails with EvidenceFetchFailed for an unknown commit or path", async () => {
  const root = await Deno.makeTempDir();
  try {
    const repos = await buildUpstreamRepos(root);
    for (
      const f of [
        { repo: repos.urls.talos, revision: "0".repeat(40), path: UPGRADE },
        { repo: repos.urls.talos, revision: repos.talos[0], path: "no/such/file.go" },
      ]
    ) {
      await rejects(fetchPinnedFile(f), (e: unknown) => {
        assert(e instanceof CairnError && e.reason === "EvidenceFetchFailed", String(e));
        assert(!e.message.includes("cairn-evidence-"), e.message);
        return true;
      });
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("the cache keeps files at <cache>/<repo-slug>/<revision>/<path>", async () => {
  const cache = await Deno.makeTempDir();
  try {
    const f = {
      repo: "https://github.com/siderolabs/talos.git",
      revision: "a".repeat(40),
      path: "x/y.go",
    };
    assertEquals(repoSlug(f.repo), "github.com_siderolabs_talos.git");
    assertEquals(
      cachePath(cache, f),
      join(cache, "github.com_siderolabs_talos.git", "a".repeat(40), "x", "y.go"),
    );
    assertEquals(await readCached(cache, f), undefined);
    await writeCached(cache, f, new Uint8Array([1, 2, 3]));
    assertEquals(await readCached(cache, f), new Uint8Array([1, 2, 3]));
  } finally {
    await Deno.remove(cache, { recursive: true });
  }
});

/**
 * The argument-injection attack on the adapter itself, as if the manifest's URL check had been
 * bypassed: git must treat the hostile value as an operand (and refuse it), never run it.
 */
Deno.test("fetchPinnedFile() never runs a command from a hostile repo value (option or ext:: helper)", async () => {
  const root = await Deno.makeTempDir();
  try {
    const marker = join(root, "pwned");
    // A user's git configuration that enables the ext:: transport must not matter either.
    const env = {
      GIT_CONFIG_COUNT: "1",
      GIT_CONFIG_KEY_0: "protocol.ext.allow",
      GIT_CONFIG_VALUE_0: "always",
    };
    for (
      const repo of [
        `--upload-pack=touch ${marker}`,
        `--upload-pack=touch ${marker};`,
        `ext::sh -c touch% ${marker}`,
      ]
    ) {
      await rejects(
        fetchPinnedFile({ repo, revision: "0123456789".repeat(4), path: "x.go" }, { env }),
        (e: unknown) => e instanceof CairnError && e.reason === "EvidenceFetchFailed",
        repo,
      );
      assert(!(await exists(marker)), `git ran a command from repo ${JSON.stringify(repo)}`);
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("fetchPinnedFile() refuses a revision that is not a full commit id before running git", async () => {
  await rejects(
    fetchPinnedFile({ repo: "file:///nonexistent", revision: "--all", path: "x" }),
    (e: unknown) =>
      e instanceof CairnError && e.reason === "EvidenceFetchFailed" && /40-hex/.test(e.message),
  );
});

Deno.test("fetchPinnedFile() kills a git call that outlives its deadline: a silent upstream is unread, not a hang", async () => {
  const silent = startSilentListener();
  try {
    for (const scheme of ["git", "https"]) {
      const started = Date.now();
      // A deadline that kills git but not its transport helper would hang here: fail instead.
      await rejects(
        within(
          10_000,
          fetchPinnedFile(
            {
              repo: `${scheme}://127.0.0.1:${silent.port}/talos.git`,
              revision: "a".repeat(40),
              path: "x",
            },
            { callTimeoutMs: 1_000 },
          ),
        ),
        (e: unknown) =>
          e instanceof CairnError && e.reason === "EvidenceFetchTimedOut" &&
          /no answer within 1 s/.test(e.message),
        scheme,
      );
      const took = Date.now() - started;
      assert(took < 8_000, `${scheme}: took ${took} ms`);
    }
    assert(silent.accepted() >= 2, "git reached the silent upstream");
  } finally {
    await silent.close();
  }
});

Deno.test("fetchPinnedFile() keeps to the fetch budget: a call gets at most the time left, none starts after it", async () => {
  const silent = startSilentListener();
  try {
    const repo = `git://127.0.0.1:${silent.port}/talos.git`;
    const f = { repo, revision: "a".repeat(40), path: "x" };
    const started = Date.now();
    await rejects(
      within(10_000, fetchPinnedFile(f, { callTimeoutMs: 60_000, deadlineMs: Date.now() + 1_000 })),
      (e: unknown) => e instanceof CairnError && e.reason === "EvidenceFetchTimedOut",
    );
    assert(Date.now() - started < 8_000, `took ${Date.now() - started} ms`);
    const before = silent.accepted();
    await rejects(
      fetchPinnedFile(f, { deadlineMs: Date.now() - 1 }),
      (e: unknown) =>
        e instanceof CairnError && e.reason === "EvidenceFetchTimedOut" &&
        /budget was spent/.test(e.message),
    );
    assertEquals(silent.accepted(), before, "no git call starts once the budget is spent");
  } finally {
    await silent.close();
  }
});

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}

Deno.test("fetchPinnedFile() reports the URL git really fetched from: an insteadOf rewrite to a local repository is a local stand-in", async () => {
  const root = await Deno.makeTempDir();
  try {
    const repos = await buildUpstreamRepos(root);
    const f = { repo: repos.urls.talos, revision: repos.talos[0], path: UPGRADE };
    const direct = await fetchPinnedFile(f);
    assertEquals(direct.fetchedFrom, repos.urls.talos);
    const logical = { ...f, repo: LOGICAL.talos };
    const rewritten = await fetchPinnedFile(logical, { env: repos.gitEnv });
    assertEquals(rewritten.fetchedFrom, repos.urls.talos);
    assertEquals(rewritten.sha256, direct.sha256, "the same bytes");
    assertEquals(classifyFetch(LOGICAL.talos, f.revision, rewritten.fetchedFrom), {
      kind: "local-stand-in",
      repository: LOGICAL.talos,
      revision: f.revision,
    });
    // Recorded beside the cache entry and read back; no record reads as unrecorded, never fetched.
    const cache = join(root, "cache");
    assertEquals(await readProvenance(cache, logical), { kind: "unrecorded" });
    await writeProvenance(
      cache,
      logical,
      classifyFetch(LOGICAL.talos, f.revision, repos.urls.talos),
    );
    assertEquals((await readProvenance(cache, logical)).kind, "local-stand-in");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("the evidence cache never follows a link: a planted entry or directory link is refused, neither read nor written through", async () => {
  const root = await Deno.makeTempDir();
  try {
    const cache = join(root, "cache");
    const outside = join(root, "outside");
    await Deno.mkdir(outside);
    const f = {
      repo: "https://github.com/siderolabs/talos.git",
      revision: "a".repeat(40),
      path: "x/y.go",
    };
    const unsafe = (e: unknown) => e instanceof CairnError && e.reason === "EvidenceCacheUnsafe";
    // The entry itself is a link to /dev/zero: refused, not read forever.
    await Deno.mkdir(join(cache, "github.com_siderolabs_talos.git", "a".repeat(40), "x"), {
      recursive: true,
    });
    await Deno.symlink("/dev/zero", cachePath(cache, f));
    await rejects(readCached(cache, f), unsafe);
    await rejects(writeCached(cache, f, new Uint8Array([1])), unsafe);
    // A directory on the way is a link out of the cache: the write does not land outside.
    await Deno.remove(join(cache, "github.com_siderolabs_talos.git"), { recursive: true });
    await Deno.symlink(outside, join(cache, "github.com_siderolabs_talos.git"));
    await rejects(writeCached(cache, f, new TextEncoder().encode("pwned")), unsafe);
    await rejects(readCached(cache, f), unsafe);
    assertEquals([...Deno.readDirSync(outside)], [], "nothing was written through the link");
    // An oversized entry is refused on its size.
    await Deno.remove(join(cache, "github.com_siderolabs_talos.git"));
    await writeCached(cache, f, new Uint8Array(MAX_CACHED_BYTES + 1));
    await rejects(readCached(cache, f), unsafe);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
