import { deepStrictEqual as assertEquals, ok as assert, rejects } from "node:assert/strict";
import { join } from "node:path";
import {
  cachePath,
  fetchPinnedFile,
  readCached,
  repoSlug,
  writeCached,
} from "../../../src/adapters/evidence/git_fetch.ts";
import { CairnError } from "../../../src/domain/errors.ts";
import { sha256Hex } from "../../../src/domain/plan/digest.ts";
import { buildUpstreamRepos, FIXTURES } from "./upstream_repos.ts";

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
