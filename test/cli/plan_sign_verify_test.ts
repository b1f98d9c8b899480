import { deepStrictEqual as assertEquals, ok as assert, rejects } from "node:assert/strict";
import { generateKey } from "../../src/adapters/ssh/ssh_keygen.ts";
import { splitArmoredSignatures } from "../../src/domain/trust/sshsig.ts";
import { type Command, type CommandIO, UsageError } from "../../src/cli/command.ts";
import { parseCommandArgs } from "../../src/cli/command_args.ts";
import { command as sign } from "../../src/cli/plan_sign.ts";
import { command as verify } from "../../src/cli/plan_verify.ts";
import { makePlanRepo, PLAN_REPO_NOW } from "../_helpers/plan_repo.ts";
import { CairnError } from "../../src/domain/errors.ts";

const PLAN = `apiVersion: cairn.dev/v1
kind: TalosUpgrade
metadata:
  name: talos-v1.14.2
  author: alice@example.com
spec:
  cluster: home-ops
`;

function capture(cwd = ".") {
  const out: string[] = [];
  const err: string[] = [];
  const io: CommandIO = {
    stdout: (t) => void out.push(t),
    stderr: (t) => void err.push(t),
    env: {},
    cwd,
    color: false,
    tty: false,
    signal: new AbortController().signal,
  };
  return { io, out: () => out.join(""), err: () => err.join("") };
}

async function runCmd(cmd: Command, argv: string[], cwd = ".") {
  const c = capture(cwd);
  const code = await cmd.run(parseCommandArgs(cmd, argv), c.io);
  return { code, stdout: c.out(), stderr: c.err() };
}

/** Signs with `plan sign` as of a time the example plan is valid at. */
function signAt(argv: string[], cwd = ".") {
  return runCmd(sign, [...argv, "--now", PLAN_REPO_NOW], cwd);
}

Deno.test("cairn plan sign + plan verify: author and approver signatures satisfy the policy; edits break it", async () => {
  const dir = await makePlanRepo("cairn-cli-sign-");
  try {
    const [alice, bob] = await Promise.all([
      generateKey("ed25519", `${dir}/alice`),
      generateKey("ecdsa-p384", `${dir}/bob`),
    ]);
    const plan = `${dir}/plans/talos-v1.14.2.yaml`;
    const signers = `${dir}/allowed_signers`;
    const original = await Deno.readTextFile(plan);
    await Deno.writeTextFile(
      signers,
      `alice@example.com namespaces="cairn-plan" ${alice}\n` +
        `bob@example.com valid-after="20260101Z" ${bob}\n`,
    );
    const verifyArgv = [plan, "--allowed-signers", signers, "--at", "2026-03-01T12:00:00Z"];

    const none = await runCmd(verify, [...verifyArgv, "--output", "json"]);
    assertEquals([none.code, JSON.parse(none.stdout).reasons], [1, ["SignatureMissing"]]);

    assertEquals((await signAt([plan, "--key", `${dir}/alice`])).code, 0);
    const authorOnly = await runCmd(verify, [...verifyArgv, "--output", "json"]);
    assertEquals([authorOnly.code, JSON.parse(authorOnly.stdout).reasons], [1, [
      "ApprovalsInsufficient",
    ]]);
    assertEquals((await runCmd(verify, [...verifyArgv, "--approvals", "0"])).code, 0);

    assertEquals((await signAt([plan, "--key", `${dir}/bob`, "--hash", "sha256"])).code, 0);
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

    await Deno.writeTextFile(plan, original.replace("cluster: home-ops", "cluster: home-0ps"));
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

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

Deno.test("cairn plan sign refuses a plan that fails plan check, and a file that is not a plan, writing nothing", async () => {
  const dir = await makePlanRepo("cairn-cli-sign-refuse-");
  try {
    await generateKey("ed25519", `${dir}/alice`);
    const plan = `${dir}/plans/talos-v1.14.2.yaml`;
    const text = await Deno.readTextFile(plan);
    // A skipped minor: the same refusal, at the same place, as `cairn plan check`.
    await Deno.writeTextFile(plan, text.replace("from: v1.13.9", "from: v1.12.9"));
    const bad = await signAt([plan, "--key", `${dir}/alice`]);
    assertEquals(bad.code, 1);
    assert(/talos-v1\.14\.2\.yaml:\d+:\d+: \w+: /.test(bad.stderr), bad.stderr);
    assert(bad.stderr.includes("refused to sign"), bad.stderr);
    assertEquals(await exists(`${plan}.sig`), false);

    // An expired plan fails plan check too (checked as of --now).
    await Deno.writeTextFile(plan, text);
    const late = await runCmd(sign, [
      plan,
      "--key",
      `${dir}/alice`,
      "--now",
      "2099-01-01T00:00:00Z",
    ]);
    assertEquals(late.code, 1);
    assertEquals(await exists(`${plan}.sig`), false);

    await Deno.writeTextFile(`${dir}/README.md`, "# not a plan\n\nJust prose.\n");
    const readme = await signAt([`${dir}/README.md`, "--key", `${dir}/alice`]);
    assertEquals(readme.code, 1);
    assert(readme.stderr.includes("README.md:"), readme.stderr);
    assertEquals(await exists(`${dir}/README.md.sig`), false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cairn plan sign never duplicates a signer: same key is idempotent, another key appends, a stale one is replaced", async () => {
  const dir = await makePlanRepo("cairn-cli-sign-once-");
  try {
    const [alice, bob] = await Promise.all([
      generateKey("ed25519", `${dir}/alice`),
      generateKey("rsa", `${dir}/bob`),
    ]);
    const plan = `${dir}/plans/talos-v1.14.2.yaml`;
    const sig = `${plan}.sig`;
    const blocks = async () => splitArmoredSignatures(await Deno.readTextFile(sig)).length;
    await Deno.writeTextFile(
      `${dir}/allowed_signers`,
      `alice@example.com ${alice}\nbob@example.com ${bob}\n`,
    );
    const verifyArgv = [plan, "--allowed-signers", `${dir}/allowed_signers`, "--at", PLAN_REPO_NOW];

    const first = await signAt([plan, "--key", `${dir}/alice`, "-o", "json"]);
    assertEquals([first.code, JSON.parse(first.stdout).action], [0, "appended"]);
    const bytes = await Deno.readTextFile(sig);
    const again = await signAt([plan, "--key", `${dir}/alice`]);
    assertEquals(again.code, 0);
    assert(again.stdout.includes("already signed by SHA256:"), again.stdout);
    assertEquals(await Deno.readTextFile(sig), bytes);

    const other = await signAt([plan, "--key", `${dir}/bob`, "-o", "json"]);
    assertEquals([other.code, JSON.parse(other.stdout).action], [0, "appended"]);
    assertEquals(await blocks(), 2);
    assertEquals((await runCmd(verify, verifyArgv)).code, 0);

    // The plan changes (still valid): alice signs the new bytes, her old block is replaced,
    // bob's (now invalid) block stays for `plan verify` to report until bob signs again.
    const text = await Deno.readTextFile(plan);
    await Deno.writeTextFile(plan, text.replace("maxAttempts: 3", "maxAttempts: 2"));
    const resigned = await signAt([plan, "--key", `${dir}/alice`, "-o", "json"]);
    assertEquals([resigned.code, JSON.parse(resigned.stdout).action], [0, "replaced"]);
    assertEquals(await blocks(), 2);
    const v = JSON.parse((await runCmd(verify, [...verifyArgv, "-o", "json"])).stdout);
    assertEquals(v.signatures.map((s: { reason?: string }) => s.reason ?? "ok").sort(), [
      "SignatureInvalid",
      "ok",
    ]);
    assertEquals((await signAt([plan, "--key", `${dir}/bob`])).code, 0);
    assertEquals(await blocks(), 2);
    assertEquals((await runCmd(verify, verifyArgv)).code, 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cairn plan verify and plan sign refuse a plan or .sig that is a link to /dev/zero or oversized, unread", async () => {
  const dir = await makePlanRepo("cairn-cli-verify-zero-");
  try {
    const plan = `${dir}/plans/talos-v1.14.2.yaml`;
    await Deno.writeTextFile(`${dir}/allowed_signers`, "");
    const verifyArgv = (p: string) => [p, "--allowed-signers", `${dir}/allowed_signers`];
    const refusedAs = (reason: string, says: RegExp) => (e: unknown) => {
      assert(e instanceof CairnError, String(e));
      assertEquals(e.reason, reason);
      assert(says.test(e.message), e.message);
      return true;
    };
    // An oversized regular .sig first: a reader without the cap returns instead of refusing (and
    // never reaches the /dev/zero link below, which it would read until memory ran out).
    await Deno.writeFile(`${plan}.sig`, new Uint8Array(2 * 1024 * 1024));
    await rejects(runCmd(verify, verifyArgv(plan)), refusedAs("FileUnreadable", /over the cap/));
    // A signature file committed as a link to /dev/zero: read unbounded, it exhausts memory.
    await Deno.remove(`${plan}.sig`);
    await Deno.symlink("/dev/zero", `${plan}.sig`);
    await rejects(
      runCmd(verify, verifyArgv(plan)),
      refusedAs("FileUnreadable", /signature file .*symbolic link/),
    );
    await Deno.remove(`${plan}.sig`);
    // The plan itself as a link to /dev/zero, for verify and for sign.
    const zero = `${dir}/plans/zero.yaml`;
    await Deno.symlink("/dev/zero", zero);
    await rejects(
      runCmd(verify, verifyArgv(zero)),
      refusedAs("FileUnreadable", /plan file .*symbolic link/),
    );
    await rejects(
      signAt([zero, "--key", `${dir}/nokey`]),
      refusedAs("FileUnreadable", /plan file .*symbolic link/),
    );
    assert(!(await exists(`${zero}.sig`)));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cairn plan verify reads allowed_signers through a link (a mounted Secret) but never a device or more than the cap", async () => {
  const dir = await makePlanRepo("cairn-cli-verify-signers-");
  try {
    const plan = `${dir}/plans/talos-v1.14.2.yaml`;
    const refusedAs = (says: RegExp) => (e: unknown) => {
      assert(e instanceof CairnError, String(e));
      assertEquals(e.reason, "FileUnreadable");
      assert(says.test(e.message), e.message);
      return true;
    };
    // Oversized first: a reader without the cap returns instead of refusing (and never reaches
    // the /dev/zero link below, which it would read until memory ran out).
    await Deno.writeFile(`${dir}/big`, new Uint8Array(2 * 1024 * 1024));
    await rejects(
      runCmd(verify, [plan, "--allowed-signers", `${dir}/big`]),
      refusedAs(/over the cap/),
    );
    await Deno.symlink("/dev/zero", `${dir}/zero`);
    await rejects(
      runCmd(verify, [plan, "--allowed-signers", `${dir}/zero`]),
      refusedAs(/not a regular file/),
    );
    // A link to a regular file is followed: the verdict is about the (empty) trust root.
    await Deno.writeTextFile(`${dir}/signers`, "");
    await Deno.symlink(`${dir}/signers`, `${dir}/linked`);
    const linked = await runCmd(verify, [plan, "--allowed-signers", `${dir}/linked`]);
    assertEquals(linked.code, 1);
    assert(/SignatureMissing/.test(linked.stdout), linked.stdout);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
