import { deepStrictEqual as assertEquals, ok as assert, rejects } from "node:assert/strict";
import { generateKey } from "../../src/adapters/ssh/ssh_keygen.ts";
import {
  type Command,
  type CommandIO,
  parseCommandArgs,
  UsageError,
} from "../../src/cli/command.ts";
import { command as sign } from "../../src/cli/plan_sign.ts";
import { command as verify } from "../../src/cli/plan_verify.ts";

const PLAN = `apiVersion: cairn.dev/v1
kind: TalosUpgrade
metadata:
  name: talos-v1.14.2
  author: alice@example.com
spec:
  cluster: home-ops
`;

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  const io: CommandIO = {
    stdout: (t) => void out.push(t),
    stderr: (t) => void err.push(t),
    env: {},
    cwd: ".",
    color: false,
    tty: false,
    signal: new AbortController().signal,
  };
  return { io, out: () => out.join(""), err: () => err.join("") };
}

async function runCmd(cmd: Command, argv: string[]) {
  const c = capture();
  const code = await cmd.run(parseCommandArgs(cmd, argv), c.io);
  return { code, stdout: c.out() };
}

Deno.test("cairn plan sign + plan verify: author and approver signatures satisfy the policy; edits break it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cairn-cli-sign-" });
  try {
    const [alice, bob] = await Promise.all([
      generateKey("ed25519", `${dir}/alice`),
      generateKey("ecdsa-p384", `${dir}/bob`),
    ]);
    const plan = `${dir}/talos-v1.14.2.yaml`;
    const signers = `${dir}/allowed_signers`;
    await Deno.writeTextFile(plan, PLAN);
    await Deno.writeTextFile(
      signers,
      `alice@example.com namespaces="cairn-plan" ${alice}\n` +
        `bob@example.com valid-after="20260101Z" ${bob}\n`,
    );
    const verifyArgv = [plan, "--allowed-signers", signers, "--at", "2026-03-01T12:00:00Z"];

    const none = await runCmd(verify, [...verifyArgv, "--output", "json"]);
    assertEquals([none.code, JSON.parse(none.stdout).reasons], [1, ["SignatureMissing"]]);

    assertEquals((await runCmd(sign, [plan, "--key", `${dir}/alice`])).code, 0);
    const authorOnly = await runCmd(verify, [...verifyArgv, "--output", "json"]);
    assertEquals([authorOnly.code, JSON.parse(authorOnly.stdout).reasons], [1, [
      "ApprovalsInsufficient",
    ]]);
    assertEquals((await runCmd(verify, [...verifyArgv, "--approvals", "0"])).code, 0);

    assertEquals((await runCmd(sign, [plan, "--key", `${dir}/bob`, "--hash", "sha256"])).code, 0);
    const both = await runCmd(verify, verifyArgv);
    assertEquals(both.code, 0, both.stdout);
    assert(
      /1\s+alice@example\.com\s+ED25519\s+SHA256:\S+\s+ok \(author\)/.test(both.stdout),
      both.stdout,
    );
    assert(/2\s+bob@example\.com\s+ECDSA-P384\s+SHA256:\S+\s+ok \(approver\)/.test(both.stdout));
    assert(both.stdout.includes("verdict: ok"));

    const early = await runCmd(verify, [
      ...verifyArgv.slice(0, 3),
      "--at",
      "2025-12-31T23:00:00Z",
      "-o",
      "json",
    ]);
    assertEquals([early.code, JSON.parse(early.stdout).reasons], [1, [
      "SignerOutsideValidity",
      "ApprovalsInsufficient",
    ]]);

    await Deno.writeTextFile(plan, PLAN.replace("home-ops", "home-0ps"));
    const edited = await runCmd(verify, [...verifyArgv, "--output", "json"]);
    const v = JSON.parse(edited.stdout);
    assertEquals(edited.code, 1);
    assertEquals(v.reasons, [
      "SignatureInvalid",
      "AuthorSignatureMissing",
      "ApprovalsInsufficient",
    ]);
    assertEquals(v.signatures.map((s: { reason: string }) => s.reason), [
      "SignatureInvalid",
      "SignatureInvalid",
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cairn plan verify exits 1 naming file:line:column for a malformed allowed_signers line", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cairn-cli-verify-" });
  try {
    await Deno.writeTextFile(`${dir}/p.yaml`, PLAN);
    await Deno.writeTextFile(
      `${dir}/allowed_signers`,
      '# ok\nbob@example.com valid-afte="2026" ssh-ed25519 AAAA\n',
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        "src/main.ts",
        "plan",
        "verify",
        `${dir}/p.yaml`,
        "--allowed-signers",
        `${dir}/allowed_signers`,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assertEquals(out.code, 1, stderr);
    assert(
      stderr.includes(
        `${dir}/allowed_signers:2:17: AllowedSignersInvalid: unknown option 'valid-afte'`,
      ),
      stderr,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cairn plan sign and verify refuse malformed command lines", async () => {
  await rejects(runCmd(sign, ["p.yaml"]), UsageError);
  await rejects(runCmd(sign, ["p.yaml", "--key", "k", "--hash", "sha1"]), UsageError);
  await rejects(runCmd(verify, ["p.yaml"]), UsageError);
  await rejects(
    runCmd(verify, ["p.yaml", "--allowed-signers", "a", "--approvals", "-1"]),
    UsageError,
  );
  await rejects(
    runCmd(verify, ["p.yaml", "--allowed-signers", "a", "--at", "yesterday"]),
    UsageError,
  );
});
