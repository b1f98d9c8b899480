import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { repoUrlProblem } from "../../../src/domain/evidence/repo_url.ts";

Deno.test("repoUrlProblem() accepts the forms a user pins upstream files with", () => {
  for (
    const url of [
      "https://github.com/siderolabs/talos.git",
      "https://git.example.invalid:8443/fluxcd/pkg",
      "ssh://git@github.com/siderolabs/talos.git",
      "ssh://git@[2001:db8::1]:2222/org/repo.git",
      "git://127.0.0.1:9418/talos.git",
      "file:///var/tmp/upstream/talos.git",
      "git@github.com:siderolabs/talos.git",
    ]
  ) assertEquals(repoUrlProblem(url), undefined, url);
});

Deno.test("repoUrlProblem() refuses option-like, helper, control-character and credential forms", () => {
  const cases: [string, RegExp][] = [
    ["--upload-pack=touch /tmp/pwned", /starts with '-'/],
    ["-c core.sshCommand=sh", /starts with '-'/],
    ["ext::sh -c touch% /tmp/pwned", /whitespace|remote helper/],
    ["ext::sh", /remote helper/],
    ["fd::3", /remote helper/],
    ["https://github.com/x.git\n--upload-pack=x", /control character/],
    ["https://github.com/\u0000x.git", /control character/],
    ["https://github.com/\u001b[31mx.git", /control character/],
    ["ssh://-oProxyCommand=touch%20x/repo", /host starting with .-.|malformed host|well-formed/],
    ["https://user:hunter2@github.com/org/repo.git", /password/],
    ["http://github.com/org/repo.git", /scheme http:/],
    ["ftp://example.com/repo", /scheme ftp:/],
    ["/srv/git/repo.git", /not a URL/],
    ["../repo.git", /not a URL/],
    ["git@github.com:-oProxyCommand=x", /path starting with '-'/],
    ["-oProxyCommand=x@host:path", /starts with '-'/],
    ["file://remote-host/srv/repo.git", /local path/],
    ["https://github.com/org/repo.git?upload-pack=x", /query/],
    ["https://github.com/org/$(id).git", /characters outside/],
    ["", /empty/],
    ["https://" + "a".repeat(3000), /longer than/],
  ];
  for (const [url, want] of cases) {
    const why = repoUrlProblem(url);
    assert(why !== undefined && want.test(why), `${JSON.stringify(url)} -> ${why}`);
  }
});
