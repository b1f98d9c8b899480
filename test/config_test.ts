import {
  deepStrictEqual as assertEquals,
  ok as assert,
  throws as assertThrows,
} from "node:assert/strict";
import { CONFIG_FLAG_OPTIONS, loadConfig, redactedConfig, safeLoadConfig } from "../src/config.ts";
import { CairnError, formatProblem } from "../src/domain/errors.ts";

const BASE = [
  "remote: git://127.0.0.1:9418/plans.git",
  "allowedSignersPath: /etc/cairn/allowed_signers",
  "stateDir: /var/lib/cairn",
  "kubeconfigPath: /etc/cairn/kubeconfig",
  "talosconfigPath: /etc/cairn/talosconfig",
].join("\n") + "\n";

function file(text: string) {
  return { text, name: "cairn.yaml" };
}

function problems(input: Parameters<typeof safeLoadConfig>[0]): string[] {
  const r = safeLoadConfig(input);
  assert(!r.ok, "expected the config to be refused");
  for (const p of r.problems) assertEquals(p.reason, "ConfigInvalid");
  return r.problems.map(formatProblem);
}

Deno.test("loadConfig() applies documented defaults (reports on cairn-reports) and derives journalUrl", () => {
  const c = loadConfig({ file: file(BASE) });
  assertEquals(c.branch, "main");
  assertEquals(c.reportBranch, "cairn-reports", "reports stay off the watched branch by default");
  assertEquals(c.planBranchesGlob, "*");
  assertEquals(c.pollIntervalSeconds, 30);
  assertEquals(c.requiredApprovals, 1);
  assertEquals(c.settleFloorSeconds, 30);
  assertEquals(c.journalUrl, "file:/var/lib/cairn/journal.db");
  assertEquals(c.listen, { host: "127.0.0.1", port: 9470 });
  assertEquals(c.logLevel, "info");
  assertEquals(c.reportAuthor, { name: "cairn", email: "cairn@localhost" });
});

Deno.test("loadConfig() returns a deeply frozen config", () => {
  const c = loadConfig({ file: file(BASE) });
  assert(Object.isFrozen(c) && Object.isFrozen(c.listen) && Object.isFrozen(c.reportAuthor));
  assertThrows(() => {
    (c as { branch: string }).branch = "x";
  }, TypeError);
});

Deno.test("loadConfig() precedence is file < CAIRN_* env < flags", () => {
  const text = BASE + "pollIntervalSeconds: 10\nbranch: from-file\nlisten:\n  port: 1000\n";
  const fileOnly = loadConfig({ file: file(text) });
  assertEquals([fileOnly.pollIntervalSeconds, fileOnly.branch, fileOnly.listen.port], [
    10,
    "from-file",
    1000,
  ]);
  const env = {
    CAIRN_POLL_INTERVAL_SECONDS: "20",
    CAIRN_BRANCH: "from-env",
    CAIRN_LISTEN_PORT: "2000",
  };
  const withEnv = loadConfig({ file: file(text), env });
  assertEquals([withEnv.pollIntervalSeconds, withEnv.branch, withEnv.listen.port], [
    20,
    "from-env",
    2000,
  ]);
  assertEquals(withEnv.listen.host, "127.0.0.1"); // a nested override keeps its sibling
  const withFlags = loadConfig({
    file: file(text),
    env,
    flags: { "poll-interval-seconds": "5", "listen-port": "0", output: "json" },
  });
  assertEquals([withFlags.pollIntervalSeconds, withFlags.branch, withFlags.listen.port], [
    5,
    "from-env",
    0,
  ]);
  assertEquals(withFlags.reportBranch, "cairn-reports", "the report branch does not follow branch");
});

Deno.test("loadConfig() works from env and flags alone, without a file", () => {
  const c = loadConfig({
    env: {
      CAIRN_REMOTE: "https://git.example.com/plans.git",
      CAIRN_ALLOWED_SIGNERS_PATH: "/etc/cairn/allowed_signers",
      CAIRN_STATE_DIR: "/srv/cairn",
      CAIRN_KUBECONFIG: "kc",
      HOME: "/root",
    },
    flags: { talosconfig: "tc", "report-branch": "reports", journal: "file:/tmp/j.db" },
  });
  assertEquals([c.remote, c.reportBranch, c.journalUrl], [
    "https://git.example.com/plans.git",
    "reports",
    "file:/tmp/j.db",
  ]);
});

Deno.test("safeLoadConfig() locates file problems at file:line:column", () => {
  const text = BASE + "pollIntervalSeconds: soon\nlisten:\n  port: 70000\n  hots: x\n";
  assertEquals(problems({ file: file(text) }), [
    "cairn.yaml:6:22: ConfigInvalid: expected a number (at pollIntervalSeconds)",
    "cairn.yaml:8:9: ConfigInvalid: must be at most 65535 (at listen.port)",
    'cairn.yaml:9:3: ConfigInvalid: Unknown field "hots"; unknown fields are refused (at listen.hots)',
  ]);
});

Deno.test("safeLoadConfig() reports YAML syntax errors and duplicate keys as located ConfigInvalid", () => {
  const [syntax] = problems({ file: file("remote: [unclosed\n") });
  assert(syntax!.startsWith("cairn.yaml:"), syntax);
  const [dup] = problems({ file: file(BASE + "branch: a\nbranch: b\n") });
  assert(dup!.startsWith("cairn.yaml:7:1: ConfigInvalid"), dup);
  const [notMap] = problems({ file: file("- a\n- b\n") });
  assertEquals(notMap, "cairn.yaml:1:1: ConfigInvalid: The config file must be a mapping");
});

Deno.test("safeLoadConfig() names the env variable or flag a bad value came from", () => {
  const ps = problems({
    file: file(BASE),
    env: { CAIRN_REQUIRED_APPROVALS: "two", CAIRN_LOG_LEVEL: "loud" },
    flags: { "settle-floor-seconds": "10" },
  });
  assertEquals(ps.length, 3);
  assert(ps[0]!.includes("CAIRN_REQUIRED_APPROVALS (environment): expected a whole number"), ps[0]);
  assert(
    ps.some((p) => p.startsWith("ConfigInvalid: --settle-floor-seconds: must be at least 30")),
    ps.join("\n"),
  );
  assert(
    ps.some((p) => p.startsWith("ConfigInvalid: CAIRN_LOG_LEVEL (environment):")),
    ps.join("\n"),
  );
});

Deno.test("safeLoadConfig() refuses a settle floor under 30 seconds, wherever it is set", () => {
  const [p] = problems({ file: file(BASE + "settleFloorSeconds: 29\n") });
  assertEquals(
    p,
    "cairn.yaml:6:21: ConfigInvalid: must be at least 30 (at settleFloorSeconds)",
  );
  assertEquals(
    loadConfig({ file: file(BASE + "settleFloorSeconds: 30\n") }).settleFloorSeconds,
    30,
  );
  assertEquals(problems({ file: file(BASE), env: { CAIRN_SETTLE_FLOOR_SECONDS: "0" } }).length, 1);
});

Deno.test("safeLoadConfig() requires allowedSignersPath, as an absolute path outside the repository and stateDir", () => {
  const without = BASE.replace(/^allowedSignersPath:.*\n/m, "");
  assertEquals(problems({ file: file(without) }), [
    'cairn.yaml:1:1: ConfigInvalid: missing field "allowedSignersPath" (at allowedSignersPath)',
  ]);
  const relative = problems({
    file: file(without),
    flags: { "allowed-signers": "allowed_signers" },
  });
  assert(relative[0]!.includes("--allowed-signers: must be an absolute path"), relative[0]);
  const inState = problems({
    file: file(without),
    env: { CAIRN_ALLOWED_SIGNERS_PATH: "/var/lib/cairn/../cairn/repo/allowed_signers" },
  });
  assert(inState[0]!.includes("must not be inside /var/lib/cairn"), inState[0]);
  const inRepo = problems({
    file: file(without.replace(/^remote:.*$/m, "remote: file:///srv/plans.git")),
    flags: { "allowed-signers": "/srv/plans.git/.cairn/allowed_signers" },
  });
  assert(inRepo[0]!.includes("must not be inside /srv/plans.git"), inRepo[0]);
});

Deno.test("safeLoadConfig() refuses remotes that would run commands or carry a password", () => {
  for (
    const remote of [
      "ext::sh -c touch% /tmp/pwned",
      "--upload-pack=touch /tmp/x",
      "https://u:pw@h/r.git",
    ]
  ) {
    const ps = problems({ file: file(BASE), flags: { remote } });
    assert(ps[0]!.includes("--remote:"), ps[0]);
    assert(!ps.join("").includes("pw@"), "the password must not be echoed");
  }
  assertEquals(
    loadConfig({ file: file(BASE), flags: { remote: "ssh://git@h/r.git" } }).remote,
    "ssh://git@h/r.git",
  );
});

Deno.test("safeLoadConfig() refuses branch names git would read as options or that are not refs", () => {
  for (const branch of ["-x", "a..b", "a/", "x.lock", "a b"]) {
    assertEquals(problems({ file: file(BASE), flags: { branch } }).length, 1, branch);
  }
});

Deno.test("loadConfig() throws CairnError with ConfigInvalid and a count of further problems", () => {
  const e = assertThrowsCairn(() => loadConfig({ file: file("branch: main\n") }));
  assertEquals(e.reason, "ConfigInvalid");
  assert(/\(and \d+ more\)$/.test(e.message), e.message);
});

Deno.test("redactedConfig() hides URL credentials and CONFIG_FLAG_OPTIONS covers --config", () => {
  const c = loadConfig({
    file: file(BASE),
    flags: { journal: "libsql://db.example.com?authToken=abc123" },
  });
  const r = redactedConfig(c);
  assertEquals(r["journalUrl"], "libsql://db.example.com?authToken=***");
  assert(!JSON.stringify(r).includes("abc123"));
  assertEquals(CONFIG_FLAG_OPTIONS["config"], { type: "string" });
  assertEquals(CONFIG_FLAG_OPTIONS["settle-floor-seconds"], { type: "string" });
});

function assertThrowsCairn(fn: () => unknown): CairnError {
  try {
    fn();
  } catch (e) {
    if (e instanceof CairnError) return e;
    throw e;
  }
  throw new Error("expected a CairnError");
}

Deno.test("config problems never use zod's wording and come all at once", () => {
  const text = "remote: 5\nbranch: ''\nlogLevel: loud\nlisten:\n  port: 'x'\n";
  const ps = problems({ file: file(text) });
  assert(ps.length >= 4, ps.join("\n"));
  for (const p of ps) {
    assert(!/Invalid input|received|Too small|Too big|Invalid option/.test(p), p);
  }
  assert(ps.some((p) => p.includes("expected a string (at remote)")), ps.join("\n"));
  assert(ps.some((p) => p.includes("not a valid branch name (at branch)")), ps.join("\n"));
  assert(ps.some((p) => p.includes('missing field "allowedSignersPath"')), ps.join("\n"));
});

Deno.test("kubeconfigPath (a file or a list) is said plainly when missing or of another type", () => {
  const base = BASE.split("\n").filter((l) => !/^kubeconfigPath:/.test(l)).join("\n");
  const missing = problems({ file: file(base) });
  assert(missing.some((p) => p.includes('missing field "kubeconfigPath"')), missing.join("\n"));
  const wrong = problems({ file: file(`${base}\nkubeconfigPath: 5\n`) });
  assert(
    wrong.some((p) => p.includes("expected a string or a list (at kubeconfigPath)")),
    wrong.join("\n"),
  );
  const list = loadConfig({ file: file(`${base}\nkubeconfigPath: [/k/a, /k/b]\n`) });
  assertEquals(list.kubeconfigPath, ["/k/a", "/k/b"]);
});

Deno.test("KUBECONFIG and TALOSCONFIG fill in for CAIRN_KUBECONFIG / CAIRN_TALOSCONFIG", () => {
  const base = BASE.split("\n").filter((l) => !/^(kubeconfigPath|talosconfigPath):/.test(l))
    .join("\n");
  const c = loadConfig({
    file: file(base),
    env: { KUBECONFIG: "/k/one:/k/two", TALOSCONFIG: "/t/cfg", CAIRN_JOURNAL: "file:/j.db" },
  });
  assertEquals([c.kubeconfigPath, c.talosconfigPath, c.journalUrl], [
    ["/k/one", "/k/two"], // merged where it is read, as kubectl merges KUBECONFIG
    "/t/cfg",
    "file:/j.db",
  ]);
  const flagWins = loadConfig({
    file: file(base),
    env: { KUBECONFIG: "/k/one", CAIRN_TALOSCONFIG: "/t/cairn", TALOSCONFIG: "/t/cfg" },
    flags: { kubeconfig: "/k/flag" },
  });
  assertEquals([flagWins.kubeconfigPath, flagWins.talosconfigPath], ["/k/flag", "/t/cairn"]);
});

Deno.test("reconcile takes --context / --talos-context like the other cluster commands", () => {
  const c = loadConfig({
    file: file(BASE),
    env: { CAIRN_TALOS_CONTEXT: "home" },
    flags: { context: "admin@home" },
  });
  assertEquals([c.kubeContext, c.talosContext], ["admin@home", "home"]);
  assertEquals(loadConfig({ file: file(BASE) }).kubeContext, undefined);
});

Deno.test("operating settings: default windows, Alertmanager and notifications are checked where written", () => {
  const ok = loadConfig({
    file: file(
      BASE + "maintenanceWindows:\n" +
        '  - { start: "0 2 * * 6", durationMinutes: 240, timeZone: Europe/Berlin }\n' +
        "alertmanagerUrl: http://alertmanager.monitoring:9093\n" +
        "notifications:\n  - url: https://chat.example/hook\n",
    ),
  });
  assertEquals(ok.maintenanceWindows?.[0]?.timeZone, "Europe/Berlin");
  assertEquals(ok.notifications, [{ url: "https://chat.example/hook", format: "json" }]);
  const bad = problems({
    file: file(
      BASE + "maintenanceWindows:\n" +
        '  - { start: "0 2 * *", durationMinutes: 240, timeZone: Europe/Berlin }\n' +
        "alertmanagerUrl: http://user:pw@am:9093\n",
    ),
  });
  assertEquals(bad.length, 2, bad.join("\n"));
  assert(
    bad[0]!.includes("must have five fields") && bad[0]!.includes("maintenanceWindows[0]"),
    bad[0],
  );
  assert(bad[1]!.includes("without credentials") && !bad[1]!.includes("pw"), bad[1]);
});

Deno.test("registryMirrors: a registry host to the base URL serving it; a bad host or URL is refused where written", () => {
  const ok = loadConfig({
    file: file(BASE + "registryMirrors:\n  factory.talos.dev: http://127.0.0.1:5000\n"),
  });
  assertEquals(ok.registryMirrors, { "factory.talos.dev": "http://127.0.0.1:5000" });
  const bad = problems({
    file: file(
      BASE + "registryMirrors:\n  factory.talos.dev: ftp://mirror\n  'not a host': https://m\n",
    ),
  });
  assertEquals(bad.length, 2, bad.join("\n"));
  assert(bad.some((p) => p.includes("registryMirrors") && p.includes("http(s) URL")), bad.join());
  // The key is named where it is written (zod reports a record key as "invalid value").
  assert(bad.some((p) => p.includes("cairn.yaml:8:") && p.includes("not a host")), bad.join());
});
