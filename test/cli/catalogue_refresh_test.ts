import { deepStrictEqual as assertEquals, ok as assert, rejects } from "node:assert/strict";
import { join } from "node:path";
import { command } from "../../src/cli/catalogue_refresh.ts";
import { parseCommandArgs } from "../../src/cli/command_args.ts";
import { hasRelease, latestPatch, parseCatalogue, supportRow } from "../../src/domain/catalogue.ts";
import { CairnError } from "../../src/domain/errors.ts";
import { parseVersion } from "../../src/domain/version.ts";

const RELEASES = [
  ...Array.from({ length: 10 }, (_, i) => ({
    tag_name: `v1.13.${i}`,
    published_at: `2026-0${Math.min(9, 4 + Math.floor(i / 3))}-1${i}T10:00:00Z`,
    prerelease: false,
  })),
  ...["v1.14.0", "v1.14.1", "v1.14.2"].map((t, i) => ({
    tag_name: t,
    published_at: `2026-10-0${i + 1}T09:00:00Z`,
    prerelease: false,
  })),
  { tag_name: "v1.15.0-alpha.0", published_at: "2026-11-01T00:00:00Z", prerelease: true },
  { tag_name: "v1.14.3", published_at: null, prerelease: false, draft: true },
];

const MATRIX = {
  talos: [
    { minor: "1.14", kubernetes: { min: "1.32", max: "1.37" } },
    { minor: "1.13", kubernetes: { min: "1.31", max: "1.36" } },
  ],
};

function serve(opts: { matrix?: unknown; failReleases?: boolean }) {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    const url = new URL(req.url);
    if (url.pathname === "/repos/siderolabs/talos/releases") {
      if (opts.failReleases) return new Response("rate limited", { status: 403 });
      // Two pages, linked the way GitHub does, to exercise pagination.
      const page = url.searchParams.get("page") ?? "1";
      const first = page === "1";
      const headers = first
        ? { link: `<${url.origin}${url.pathname}?per_page=100&page=2>; rel="next"` }
        : {};
      return Response.json(first ? RELEASES.slice(0, 8) : RELEASES.slice(8), { headers });
    }
    if (url.pathname === "/cairn/support-matrix.json") return Response.json(opts.matrix ?? MATRIX);
    return new Response("not found", { status: 404 });
  });
  return { base: `http://127.0.0.1:${server.addr.port}`, stop: () => server.shutdown() };
}

async function run(argv: string[], cwd: string) {
  let stdout = "";
  const io = {
    stdout: (t: string) => void (stdout += t),
    stderr: () => {},
    env: {},
    cwd,
    color: false,
    tty: false,
    signal: new AbortController().signal,
  };
  return { code: await command.run(parseCommandArgs(command, argv), io), stdout };
}

Deno.test("catalogue refresh writes a new dated snapshot the catalogue parser accepts", async () => {
  const dir = await Deno.makeTempDir();
  const http = serve({});
  try {
    const args = [
      "--base-url",
      http.base,
      "--out",
      "talos.yaml",
      "--snapshot-at",
      "2026-11-20T00:00:00Z",
    ];
    const r = await run([...args, "--output", "json"], dir);
    assertEquals(r.code, 0);
    const summary = JSON.parse(r.stdout);
    assertEquals([summary.minors, summary.releases, summary.skipped], [["1.13", "1.14"], 13, [
      "v1.15.0-alpha.0",
    ]]);
    const cat = await parseCatalogue(await Deno.readFile(join(dir, "talos.yaml")), "talos.yaml");
    assertEquals(cat.sha256, summary.sha256);
    assertEquals(cat.file.metadata.snapshotAt, "2026-11-20T00:00:00Z");
    assert(latestPatch(cat, parseVersion("v1.13.4"))?.patch === 9);
    assert(hasRelease(cat, parseVersion("v1.14.2")));
    assert(!hasRelease(cat, parseVersion("v1.14.3")), "drafts are not releases");
    assertEquals(supportRow(cat, parseVersion("v1.14.0"))?.kubernetes, {
      min: [1, 32],
      max: [1, 37],
    });
    assertEquals(cat.file.spec.minors[1]?.releases[2], {
      version: "v1.14.2",
      published: "2026-10-03",
    });
    // A refresh never overwrites an existing snapshot.
    await rejects(
      run(args, dir),
      (e: unknown) => e instanceof CairnError && e.reason === "ConfigInvalid",
    );
  } finally {
    await http.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("catalogue refresh refuses an unreadable releases API or support matrix", async () => {
  const dir = await Deno.makeTempDir();
  try {
    for (const opts of [{ failReleases: true }, { matrix: { talos: [{ minor: "1.13" }] } }]) {
      const http = serve(opts);
      try {
        await rejects(
          run(["--base-url", http.base, "--out", "x.yaml"], dir),
          (e: unknown) => e instanceof CairnError && e.reason === "CatalogueSourceUnreadable",
        );
      } finally {
        await http.stop();
      }
    }
    assertEquals([...Deno.readDirSync(dir)], [], "nothing is written on failure");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
