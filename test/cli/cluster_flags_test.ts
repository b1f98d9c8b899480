/**
 * KUBECONFIG / TALOSCONFIG and --context are honoured where --kubeconfig / --talosconfig are
 * accepted, flags first; one name per concept (--now on every plan command).
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { clusterFlags } from "../../src/cli/cluster_flags.ts";
import type { CommandIO } from "../../src/cli/command.ts";
import { runCli } from "../_helpers/cli_run.ts";

function io(env: Record<string, string>): CommandIO {
  return {
    stdout: () => {},
    stderr: () => {},
    env,
    cwd: "/srv/repo",
    color: false,
    tty: false,
    signal: new AbortController().signal,
  };
}

const args = (values: Record<string, string>) => ({ values, positionals: [] });

Deno.test("KUBECONFIG and TALOSCONFIG are read when no flag is given", () => {
  assertEquals(clusterFlags(args({}), io({ KUBECONFIG: "kc:other", TALOSCONFIG: "/t/tc" })), {
    kubeconfig: ["/srv/repo/kc", "/srv/repo/other"],
    talosconfig: "/t/tc",
  });
});

Deno.test("flags win over KUBECONFIG / TALOSCONFIG; --context and --talos-context pass on", () => {
  const f = clusterFlags(
    args({ kubeconfig: "/f/kc", talosconfig: "/f/tc", context: "admin@b", "talos-context": "b" }),
    io({ KUBECONFIG: "/e/kc", TALOSCONFIG: "/e/tc" }),
  );
  assertEquals(f, {
    kubeconfig: "/f/kc",
    talosconfig: "/f/tc",
    kubeContext: "admin@b",
    talosContext: "b",
  });
});

for (const cmd of [["apply"], ["plan", "preview"], ["recover"]]) {
  Deno.test(`cairn ${cmd.join(" ")} accepts --context and documents KUBECONFIG`, async () => {
    const r = await runCli([...cmd, "--help"]);
    assertEquals(r.code, 0);
    assert(r.stdout.includes("$KUBECONFIG") && r.stdout.includes("--context"), r.stdout);
  });
}

Deno.test("without flag or variable the usage error names both ways to give the file", async () => {
  const r = await runCli(["plan", "preview", "plans/none.yaml"], {});
  assertEquals(r.code, 2);
  assert(r.stderr.includes("--kubeconfig K is required (or set KUBECONFIG)"), r.stderr);
});

Deno.test("plan verify takes --now like plan check and plan sign; --at warns and still works", async () => {
  const now = await runCli(["plan", "verify", "x.yaml", "--allowed-signers", "s", "--now", "bad"]);
  assert(now.stderr.includes("--now must be an RFC 3339 time"), now.stderr);
  const at = await runCli(["plan", "verify", "x.yaml", "--allowed-signers", "s", "--at", "bad"]);
  assert(at.stderr.includes("--at is deprecated; use --now"), at.stderr);
  assert(at.stderr.includes("--now must be an RFC 3339 time"), at.stderr);
});

Deno.test("KUBECONFIG reaches the Kubernetes client, with no dependency deprecation noise", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const missing = `${dir}/no-such-kubeconfig`;
    const out = await new Deno.Command("./cairn", {
      args: ["plan", "preview", "plans/cilium-1.18.2.yaml", "--talosconfig", `${dir}/tc`],
      cwd: new URL("../../", import.meta.url),
      env: { KUBECONFIG: missing },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assertEquals(out.code, 1, stderr);
    assert(stderr.startsWith(`KubeconfigInvalid: cannot load kubeconfig ${missing}`), stderr);
    assert(!stderr.includes("DeprecationWarning"), stderr);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a KUBECONFIG list reaches the client whole: a missing first file is skipped", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const bad = `${dir}/second`;
    // The second file is the one read; its YAML error must be reported by path and line only.
    await Deno.writeTextFile(bad, "users:\n- name: u\n  user: {token: FAKETOKEN-x}\n\t oops: 1\n");
    const out = await new Deno.Command("./cairn", {
      args: ["plan", "preview", "plans/cilium-1.18.2.yaml", "--talosconfig", `${dir}/tc`],
      cwd: new URL("../../", import.meta.url),
      env: { KUBECONFIG: `${dir}/first-missing:${bad}` },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assertEquals(out.code, 1, stderr);
    assert(
      stderr.startsWith(`KubeconfigInvalid: cannot load kubeconfig ${bad}: not valid YAML`),
      stderr,
    );
    assert(!stderr.includes("FAKETOKEN"), stderr);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cairn apply names every missing input at once and takes CAIRN_JOURNAL like the journal commands", async () => {
  const none = await runCli(["apply", "plans/talos-v1.14.2.yaml"]);
  assertEquals(none.code, 2);
  assert(
    none.stderr.includes(
      "--kubeconfig K is required (or set KUBECONFIG); --talosconfig T is required (or set " +
        "TALOSCONFIG); --journal URL is required (or set CAIRN_JOURNAL); --allowed-signers F " +
        "is required",
    ),
    none.stderr,
  );
  const env = await runCli(["apply", "plans/talos-v1.14.2.yaml"], {
    KUBECONFIG: "/k/kc",
    TALOSCONFIG: "/t/tc",
    CAIRN_JOURNAL: "file:/j/journal.db",
  });
  assertEquals(env.code, 2);
  assert(env.stderr.includes("UsageInvalid: --allowed-signers F is required\n"), env.stderr);
});
