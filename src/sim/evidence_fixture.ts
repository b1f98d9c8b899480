/**
 * The synthetic "upstream" repositories behind the sample evidence manifest
 * (`evidence/upgrade-order.yaml`): the files of fixtures/evidence/upstream committed into local
 * bare Git repositories with fixed author/committer identities and dates, so the commit ids are
 * the same on every machine (the manifest pins them). The manifest names logical https URLs;
 * `gitEnv` maps them to the bare repositories with git `insteadOf` (GIT_CONFIG_* variables), so
 * a fetch with that environment reaches only the local files. Used by the evidence tests, the
 * reconcile end-to-end world and `cairn demo`.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** fixtures/evidence of this checkout. */
export const EVIDENCE_FIXTURES = fileURLToPath(
  new URL("../../fixtures/evidence/", import.meta.url),
);

/** The manifest's logical URL for each upstream, rewritten to file:// with git `insteadOf`. */
export const LOGICAL_UPSTREAMS = {
  talos: "https://git.example.invalid/siderolabs/talos.git",
  ssa: "https://git.example.invalid/fluxcd/pkg.git",
} as const;

/** The built repositories. */
export interface UpstreamRepos {
  readonly root: string;
  /** file:// URLs of the bare repositories. */
  readonly urls: { readonly talos: string; readonly ssa: string };
  /** Commit ids: talos[0] is pinned, talos[1] reverses the phase order (the tampered revision). */
  readonly talos: readonly [string, string];
  readonly ssa: string;
  /** Environment that maps the logical URLs to the bare repositories (git `insteadOf`). */
  readonly gitEnv: Record<string, string>;
}

const IDENTITY = {
  GIT_AUTHOR_NAME: "Upstream Fixture",
  GIT_AUTHOR_EMAIL: "fixture@example.invalid",
  GIT_AUTHOR_DATE: "2026-10-19T12:00:00Z",
  GIT_COMMITTER_NAME: "Upstream Fixture",
  GIT_COMMITTER_EMAIL: "fixture@example.invalid",
  GIT_COMMITTER_DATE: "2026-10-19T12:00:00Z",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
};

/** Runs git with the fixture identity (and no user or system config); returns trimmed stdout. */
export async function fixtureGit(args: string[], cwd?: string): Promise<string> {
  const out = await new Deno.Command("git", {
    args: ["-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", ...args],
    env: IDENTITY,
    ...(cwd ? { cwd } : {}),
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(`git ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
  return new TextDecoder().decode(out.stdout).trim();
}

async function copyTree(from: string, to: string): Promise<void> {
  for await (const e of Deno.readDir(from)) {
    const src = join(from, e.name);
    const dst = join(to, e.name);
    if (e.isDirectory) {
      await Deno.mkdir(dst, { recursive: true });
      await copyTree(src, dst);
    } else await Deno.copyFile(src, dst);
  }
}

async function commitAll(work: string, message: string): Promise<string> {
  await fixtureGit(["add", "-A"], work);
  await fixtureGit(["commit", "-q", "-m", message], work);
  return await fixtureGit(["rev-parse", "HEAD"], work);
}

async function toBare(work: string, bare: string, allowSha: boolean): Promise<string> {
  await fixtureGit(["clone", "-q", "--bare", "--", work, bare]);
  if (allowSha) await fixtureGit(["config", "uploadpack.allowAnySHA1InWant", "true"], bare);
  return `file://${bare}`;
}

/** The phase order reversed: drain first, then pull and install. */
function reversePhases(text: string): string {
  return text.replace("c.pullImage(ctx, opts.Image)", 'drainNodes(ctx, c, "")')
    .replace(
      'drainNodes(ctx, c, "drainNodes(fake) inside a string")',
      "c.pullImage(ctx, opts.Image)",
    );
}

async function buildOne(root: string, name: string, fixture: string): Promise<string> {
  const work = join(root, `work-${name}`);
  await Deno.mkdir(work, { recursive: true });
  await fixtureGit(["init", "-q", "--", work]);
  await copyTree(join(EVIDENCE_FIXTURES, "upstream", fixture), work);
  return work;
}

/**
 * Builds both bare repositories under `root`. `allowSha: false` makes the server refuse SHA
 * wants (the fetcher then falls back to a full fetch).
 */
export async function buildUpstreamRepos(root: string, allowSha = true): Promise<UpstreamRepos> {
  const talosWork = await buildOne(root, "talos", "talos");
  const pinned = await commitAll(talosWork, "pinned upgrade order");
  const upgrade = join(talosWork, "cmd/talosctl/cmd/talos/upgrade.go");
  await Deno.writeTextFile(upgrade, reversePhases(await Deno.readTextFile(upgrade)));
  const tampered = await commitAll(talosWork, "drain before install");
  const ssaWork = await buildOne(root, "ssa", "ssa");
  const ssa = await commitAll(ssaWork, "apply forces ownership");
  const urls = {
    talos: await toBare(talosWork, join(root, "talos.git"), allowSha),
    ssa: await toBare(ssaWork, join(root, "pkg.git"), allowSha),
  };
  const gitEnv = {
    GIT_CONFIG_COUNT: "2",
    GIT_CONFIG_KEY_0: `url.${urls.talos}.insteadOf`,
    GIT_CONFIG_VALUE_0: LOGICAL_UPSTREAMS.talos,
    GIT_CONFIG_KEY_1: `url.${urls.ssa}.insteadOf`,
    GIT_CONFIG_VALUE_1: LOGICAL_UPSTREAMS.ssa,
  };
  return { root, urls, talos: [pinned, tampered], ssa, gitEnv };
}
