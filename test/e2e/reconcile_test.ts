import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { generateKey, signBytes } from "../../src/adapters/ssh/ssh_keygen.ts";
import { git } from "../_helpers/git_daemon.ts";
import { type ReconcileWorld, startReconcileWorld } from "../_helpers/reconcile_world.ts";
import { ROOT } from "../_helpers/twin_world.ts";
import { checkMarkdown } from "../report/_markdown_check.ts";

const PLAN = "talos-v1.14.2";
/** The plan branch's preview (each branch has its own file; `/` is encoded as `~`). */
const PREVIEW = `reports/${PLAN}/preview/plan~${PLAN}.md`;
/** The preview of the plan as merged on the watched branch (written when it is refused). */
const MAIN_PREVIEW = `reports/${PLAN}/preview/main.md`;
const EXECUTION = `reports/${PLAN}/execution.md`;

/** One reconcile pass, waited to its end (executions and report commits included). */
async function reconcile(w: ReconcileWorld): Promise<void> {
  await w.reconciler.cycle();
  await w.reconciler.settled();
}

/** A second plan with its own name (same upgrade), so refusals are about signatures only. */
function renamed(text: string, name: string): string {
  return text.replace(`name: ${PLAN}`, `name: ${name}`);
}

async function cairnCommits(w: ReconcileWorld): Promise<string[]> {
  const log = await git(["--git-dir", w.bare, "log", "--format=%an|%s", w.reportBranch]);
  return log.split("\n").filter((l) => l.startsWith("cairn|"));
}

/** Every tuple of the bound manifest with matching hashes, every assertion and control passing. */
function assertEvidenceShown(report: string): void {
  // The hashes match, and the report says the bytes came from local stand-ins for the upstreams.
  assert(
    report.includes(
      "3 of 3 pinned sources match their recorded SHA-256; the bytes came: 3 from local " +
        "stand-ins, none from the named upstreams.",
    ),
    "tuples and their provenance",
  );
  assertEquals(
    report.match(/\| local stand-in: a repository on this machine replaced /g)?.length,
    3,
  );
  for (const sha of [EVIDENCE_SHA.upgrade, EVIDENCE_SHA.k8s, EVIDENCE_SHA.ssa]) {
    assert(report.includes(`| \`${sha}\` | \`${sha}\` | pass |`), `expected = actual ${sha}`);
  }
  for (
    const name of [
      "install-precedes-drain",
      "reboot-follows-drain",
      "prepull-independent-of-dry-run",
      "force-ownership-independent-of-force",
      "apply-forces-ownership",
      "control reversed-phase-order",
      "control corrupted-cache",
    ]
  ) assert(report.includes(`| ${name} | pass |`), name);
}

const EVIDENCE_SHA = {
  upgrade: "26f6262e00db2bbfa22eac39350cdb4da92e6cb6ebb0f6e629759466abc05037",
  k8s: "ce008ddb0ccc3154e0096f6c61edbb13e1fc3ce5bf20d86bdd43546b67e8f7b1",
  ssa: "7492ed05676073e8a6b8aa952f5922c123ad244bb596216088defb4588079df8",
};

Deno.test("reconcile over git daemon: preview on a branch, execution after merge, refusals reported", async (t) => {
  const w = await startReconcileWorld();
  try {
    await t.step(
      "a signed plan pushed on a branch gets a READY preview on the report branch",
      async () => {
        await w.wt.checkout(`plan/${PLAN}`, true);
        await w.wt.commit({
          [`plans/${PLAN}.yaml`]: w.planText,
          [`plans/${PLAN}.yaml.sig`]: await w.sign(w.planText, ["alice", "bob"]),
        }, `Plan ${PLAN}`);
        await w.wt.push(`plan/${PLAN}`);
        await w.tc.control.resetStats();
        await reconcile(w);
        // The preview phase read the live cluster and wrote nothing to it.
        const stats = await w.tc.control.stats();
        const kube = stats.kube as { mutating: number; total: number };
        assertEquals([stats.talos.totalMutating, kube.mutating], [0, 0], "zero writes");
        assert(stats.talos.totalCalls >= 7 && kube.total > 7, "the preview read the cluster");
        const preview = await w.reportAt(PREVIEW);
        assert(preview, "no preview on main");
        // Every P-placed row passed, rows 17 and 18 from their readers; the installer was
        // resolved at the twin's registry (row 10 passes).
        const verdict = preview.split("\n").find((l) => l.startsWith("**Verdict:")) ?? "";
        assert(verdict.startsWith("**Verdict: READY FOR APPROVAL"), verdict);
        assert(/\| 10 \| Installer image exists[^|]*\| P\/E \| pass \|/.test(preview), "row 10");
        assert(preview.includes(`on \`plan/${PLAN}\``));
        assertEquals(checkMarkdown(preview), []);
        for (const node of ["worker-1", "worker-4", "cp-3"]) {
          assert(preview.includes(`| drain planning ${node} | pass | drain plan ok`), node);
          assert(preview.includes(`| ${node} runs the first hop's source version | pass |`));
        }
        assert(/\| `preview-1` \| preflight \| cluster \| [^|]+ \| pass \|/.test(preview), "round");
        assert(preview.includes("The preview made no writes to the cluster"));
        assertEvidenceShown(preview);
        assertEquals(await w.journal.listOperations(), [], "a preview must not execute");
        assertEquals(await w.reportAt(EXECUTION), undefined);
      },
    );

    await t.step(
      "merging executes the plan on the twin and commits a completed execution report",
      async () => {
        await w.wt.pull("main");
        const merge = await w.wt.merge(`plan/${PLAN}`);
        await w.wt.push("main");
        await reconcile(w);
        const report = await w.reportAt(EXECUTION);
        assert(report, "no execution report");
        assert(report.includes("**Verdict: COMPLETED"), report.slice(0, 4000));
        assert(report.includes(`\`${merge}\` on \`main\``), "report names the merge commit");
        assertEvidenceShown(report);
        const chain = await w.journal.verifyChain();
        assert(chain.ok && report.includes(chain.head), "report carries the journal head");
        assertEquals(checkMarkdown(report), []);
        const ops = await w.journal.listOperations();
        assertEquals(ops.map((o) => o.state), Array(7).fill("completed"));
        const execCommits = (await cairnCommits(w)).filter((c) => c.includes("execution of"));
        // Milestones only: start, one per node done, the end — never one per health round.
        assert(execCommits.length >= 2 && execCommits.length <= 9, execCommits.join("\n"));
      },
    );

    await t.step(
      "changing the merged plan (even re-signed) is refused with PlanChangedAfterApproval",
      async () => {
        await w.wt.pull("main");
        const changed = w.planText.replace("one node\n", "one node (edited)\n");
        assert(changed !== w.planText);
        await w.wt.commit({
          [`plans/${PLAN}.yaml`]: changed,
          [`plans/${PLAN}.yaml.sig`]: await w.sign(changed, ["alice", "bob"]),
        }, "Edit the approved plan");
        await w.wt.push("main");
        const before = await w.journal.listOperations();
        await reconcile(w);
        const preview = await w.reportAt(MAIN_PREVIEW) ?? "";
        assert(preview.includes("**Verdict: REFUSED"), preview.slice(0, 300));
        assert(preview.includes("PlanChangedAfterApproval"));
        // The plan branch's own preview is a different file and was left as it was.
        assert((await w.reportAt(PREVIEW))?.includes(`on \`plan/${PLAN}\``), "branch preview kept");
        assertEquals(await w.journal.listOperations(), before, "nothing executed");
        assert((await w.reportAt(EXECUTION))?.includes("**Verdict: COMPLETED"), "history kept");
      },
    );

    await t.step(
      "an unsigned and an under-approved merged plan are not executed; reports say why",
      async () => {
        await w.wt.pull("main");
        const unsigned = renamed(w.planText, "talos-unsigned");
        const alone = renamed(w.planText, "talos-alone");
        // Approved by a key the trust root does not list: its refusal names the trust root.
        const stranger = renamed(w.planText, "talos-stranger");
        const mallory = join(w.dir, "mallory");
        await generateKey("ed25519", mallory, "mallory@example.com");
        const strangerSig = await w.sign(stranger, ["alice"]) +
          await signBytes(new TextEncoder().encode(stranger), { key: mallory });
        await w.wt.commit({
          "plans/talos-unsigned.yaml": unsigned,
          "plans/talos-alone.yaml": alone,
          "plans/talos-alone.yaml.sig": await w.sign(alone, ["alice"]),
          "plans/talos-stranger.yaml": stranger,
          "plans/talos-stranger.yaml.sig": strangerSig,
        }, "Three plans that lack approval");
        await w.wt.push("main");
        const before = await w.journal.listOperations();
        await reconcile(w);
        const a = await w.reportAt("reports/talos-unsigned/preview/main.md") ?? "";
        assert(a.includes("**Verdict: REFUSED") && a.includes("SignatureMissing"), a);
        const b = await w.reportAt("reports/talos-alone/preview/main.md") ?? "";
        assert(b.includes("**Verdict: REFUSED") && b.includes("ApprovalsInsufficient"), b);
        const c = await w.reportAt("reports/talos-stranger/preview/main.md") ?? "";
        assert(c.includes("**Verdict: REFUSED") && c.includes("SignerNotTrusted"), c);
        assertEquals(checkMarkdown(a), []);
        assertEquals(await w.journal.listOperations(), before);
        assertEquals(await w.reportAt("reports/talos-unsigned/execution.md"), undefined);
        const exported = await w.journal.exportAll();
        assertEquals((exported["plan_names"] as { name: string }[]).map((p) => p.name), [PLAN]);
      },
    );

    await t.step("two plans merged in order run one at a time in merge order", async () => {
      await w.wt.pull("main");
      const first = renamed(w.planText, "talos-first");
      const second = renamed(w.planText, "talos-second");
      for (const [name, text] of [["talos-first", first], ["talos-second", second]] as const) {
        await w.wt.checkout(`plan/${name}`, true);
        await w.wt.commit({
          [`plans/${name}.yaml`]: text,
          [`plans/${name}.yaml.sig`]: await w.sign(text, ["alice", "carol"]),
        }, `Plan ${name}`);
        await w.wt.checkout("main");
        await w.wt.merge(`plan/${name}`);
      }
      await w.wt.push("main");
      await reconcile(w);
      // The cluster already runs v1.14.2: each halts at its first node, which shows the order.
      const subjects = (await cairnCommits(w)).reverse().map((c) => c.split("|")[1]!)
        .filter((c) => c.includes("talos-first") || c.includes("talos-second"));
      const lastFirst = subjects.findLastIndex((c) => c.includes("talos-first"));
      const firstSecond = subjects.findIndex((c) => c.includes("talos-second"));
      assert(lastFirst >= 0 && firstSecond > lastFirst, subjects.join("\n"));
      for (const name of ["talos-first", "talos-second"]) {
        const r = await w.reportAt(`reports/${name}/execution.md`) ?? "";
        assert(r.includes("TargetReachedOutOfBand"), r.slice(0, 600));
      }
    });

    await t.step(
      "two branches changing the same plan each get their own preview; neither overwrites the other",
      async () => {
        const name = "talos-shared";
        const text = renamed(w.planText, name);
        const variants = {
          "plan/shared-a": text.replace("one node\n", "one node (variant a)\n"),
          "plan/shared-b": text.replace("one node\n", "one node (variant b)\n"),
        };
        for (const [branch, body] of Object.entries(variants)) {
          assert(body !== text, branch);
          await w.wt.checkout("main");
          await w.wt.pull("main");
          await w.wt.checkout(branch, true);
          await w.wt.commit({
            [`plans/${name}.yaml`]: body,
            [`plans/${name}.yaml.sig`]: await w.sign(body, ["alice", "bob"]),
          }, `Plan ${name} on ${branch}`);
          await w.wt.push(branch);
        }
        await reconcile(w);
        for (const branch of Object.keys(variants)) {
          const path = `reports/${name}/preview/${branch.replace("/", "~")}.md`;
          const preview = await w.reportAt(path) ?? "";
          assert(preview.includes(`on \`${branch}\``), `${path}: ${preview.slice(0, 300)}`);
          assertEquals(checkMarkdown(preview), []);
        }
        await w.wt.checkout("main");
      },
    );

    await t.step(
      "reports go to the reports branch only, and no committed file names a host path",
      async () => {
        const onMain = (await git(["--git-dir", w.bare, "log", "--format=%an", "main"]))
          .split("\n");
        assert(!onMain.includes("cairn"), "no report commit on the watched branch");
        const files = await w.committedFiles();
        assert([...files.keys()].some((k) => k.startsWith(`${w.reportBranch}:reports/`)));
        const hostPaths = [
          w.dir,
          w.trustPath,
          w.evidenceCache,
          "/work/",
          "/tmp/",
          "/home/",
          "/root/",
        ];
        for (const [where, text] of files) {
          for (const p of hostPaths) assert(!text.includes(p), `${where} names ${p}`);
        }
        // The trust root is named by what it is, not where it lives.
        const preview = files.get(`${w.reportBranch}:reports/talos-stranger/preview/main.md`) ?? "";
        assert(
          /the configured trust root \(allowed\\?_signers, 3 principals, sha256 [0-9a-f]{16}…\)/
            .test(preview),
          preview,
        );
      },
    );
  } finally {
    await w.stop();
  }
});

Deno.test("a stop between node steps leaves a reported, resumable execution; a restart finishes it", async () => {
  let stopOnFirstNode: () => void = () => {};
  const w = await startReconcileWorld({
    wrapJournal: (j) =>
      new Proxy(j, {
        get(target, prop) {
          const v = Reflect.get(target, prop, target);
          if (prop !== "transition" || typeof v !== "function") {
            return typeof v === "function" ? v.bind(target) : v;
          }
          return async (input: { to: string }) => {
            const out = await v.call(target, input);
            if (input.to === "completed") stopOnFirstNode();
            return out;
          };
        },
      }),
  });
  try {
    stopOnFirstNode = () => w.stopper.abort();
    await w.wt.pull("main");
    await w.wt.commit({
      [`plans/${PLAN}.yaml`]: w.planText,
      [`plans/${PLAN}.yaml.sig`]: await w.sign(w.planText, ["alice", "bob"]),
    }, "Plan merged directly");
    await w.wt.push("main");
    await w.reconciler.run(); // first cycle picks the plan up; returns once stopped and settled
    const ops = await w.journal.listOperations();
    assertEquals(ops.map((o) => [o.machine, o.state]), [["worker-1", "completed"]]);
    const stopped = await w.reportAt(EXECUTION) ?? "";
    assert(stopped.includes("**Verdict: RUNNING"), stopped.slice(0, 400));
    assert(stopped.includes("`Stopped`"), "the report says why it is not finished");
    assertEquals(checkMarkdown(stopped), []);

    stopOnFirstNode = () => {};
    const restarted = await w.makeReconciler(new AbortController().signal);
    await restarted.cycle();
    await restarted.settled();
    const after = await w.journal.listOperations();
    assertEquals(after.length, 7, "worker-1 is not run again");
    assert(after.every((o) => o.state === "completed"));
    assert((await w.reportAt(EXECUTION))?.includes("**Verdict: COMPLETED"));
  } finally {
    await w.stop();
  }
});

Deno.test("reports the remote did not take are kept and pushed when it returns (the stop report included)", async () => {
  let onFirstNode: () => Promise<void> = async () => {};
  const w = await startReconcileWorld({
    wrapJournal: (j) =>
      new Proxy(j, {
        get(target, prop) {
          const v = Reflect.get(target, prop, target);
          if (prop !== "transition" || typeof v !== "function") {
            return typeof v === "function" ? v.bind(target) : v;
          }
          return async (input: { to: string }) => {
            const out = await v.call(target, input);
            if (input.to === "completed") await onFirstNode();
            return out;
          };
        },
      }),
  });
  const away = `${w.bare}.away`;
  try {
    await w.wt.pull("main");
    await w.wt.commit({
      [`plans/${PLAN}.yaml`]: w.planText,
      [`plans/${PLAN}.yaml.sig`]: await w.sign(w.planText, ["alice", "bob"]),
    }, "Plan merged directly");
    await w.wt.push("main");
    // The remote goes away after the first node, then the controller is stopped: the node's
    // milestone and the stop report cannot be pushed.
    onFirstNode = async () => {
      onFirstNode = async () => {};
      await Deno.rename(w.bare, away);
      w.stopper.abort();
    };
    await w.reconciler.run();
    const pending = JSON.parse(
      await Deno.readTextFile(join(w.dir, "state", "pending-reports", "pending.json")),
    ) as { documents: { kind: string; markdown: string }[] };
    assertEquals(pending.documents.map((d) => d.kind), ["execution"]);
    assert(pending.documents[0]!.markdown.includes("`Stopped`"), "the stop report is kept");
    const before = await git(["--git-dir", away, "show", `${w.reportBranch}:${EXECUTION}`]);
    assert(!before.includes("`Stopped`"), "the remote never saw the stop report");

    // The remote returns; the next start pushes the kept report before anything newer.
    await Deno.rename(away, w.bare);
    const restarted = await w.makeReconciler(new AbortController().signal);
    await restarted.cycle();
    await restarted.settled();
    const log = (await git([
      "--git-dir",
      w.bare,
      "log",
      "--reverse",
      "--format=%H %s",
      w.reportBranch,
    ])).split("\n");
    const kept = log.find((l) => l.includes("kept while the remote was unreachable"));
    assert(kept, log.join("\n"));
    const replayed = await git(["--git-dir", w.bare, "show", `${kept.split(" ")[0]}:${EXECUTION}`]);
    assert(replayed.includes("`Stopped`"), replayed.slice(0, 600));
    assert((await w.reportAt(EXECUTION))?.includes("**Verdict: COMPLETED"), "then the rest ran");
    await Deno.stat(join(w.dir, "state", "pending-reports", "pending.json")).then(
      () => assert(false, "the queue is emptied once pushed"),
      (e) => assert(e instanceof Deno.errors.NotFound),
    );
  } finally {
    await Deno.rename(away, w.bare).catch(() => {});
    await w.stop();
  }
});

Deno.test("./cairn demo completes and prints the report path; the report renders", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cairn-demo-test-" });
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--quiet", "-A", join(ROOT, "src/main.ts"), "demo", "--dir", dir],
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(out.stdout);
    if (out.code !== 0) {
      // A red demo must say why: the loop's warnings and the report's non-passing rows.
      const why = await demoDiagnostics(dir);
      assertEquals(out.code, 0, `${stdout}\n${new TextDecoder().decode(out.stderr)}\n${why}`);
    }
    assert(stdout.includes(`Execution report: ${EXECUTION}`), stdout);
    assert(stdout.includes("Nodes completed:  7 of 7"), stdout);
    // Off a terminal the execution's progress is one JSON line per phase on stderr: every node,
    // what it waits for, in the twin's (virtual) elapsed time, never decreasing.
    const phases = new TextDecoder().decode(out.stderr).split("\n")
      .filter((l) => l.startsWith('{"event":"phase"')).map((l) => JSON.parse(l));
    assertEquals(new Set(phases.map((p) => p.node)).size, 7);
    assert(phases.every((p) => p.total === 7 && Number.isFinite(p.elapsedMs)));
    assert(phases.every((p, i) => i === 0 || p.elapsedMs >= phases[i - 1].elapsedMs));
    assert(
      phases.some((p) => p.node === "worker-1" && p.phase === "drain" && p.waiting),
      JSON.stringify(phases.slice(0, 10)),
    );
    // Every applicable row passed, rows 17 and 18 by their readers: COMPLETED, not "NOT VERIFIED".
    assert(stdout.includes("Report verdict:   COMPLETED\n"), stdout);
    assert(stdout.includes("(verdict READY FOR APPROVAL)"), stdout);
    const report = await Deno.readTextFile(join(dir, "execution.md"));
    assertEquals(
      report,
      await git(["--git-dir", join(dir, "remote.git"), "show", `main:${EXECUTION}`]) + "\n",
    );
    assert(report.includes("```mermaid\ngantt\n"));
    assertEvidenceShown(report);
    const preview = await git(["--git-dir", join(dir, "remote.git"), "show", `main:${PREVIEW}`]);
    assertEvidenceShown(preview);
    assert(preview.includes("| drain planning worker-1 | pass |"), "live drain planning");
    assert(/\n\| Node \| Role \| State \|/.test(report), "node table present");
    assertEquals(checkMarkdown(report), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** What a failed demo run left behind: the loop's non-info log lines and the report's halts. */
async function demoDiagnostics(dir: string): Promise<string> {
  const read = (f: string) => Deno.readTextFile(join(dir, f)).catch((e) => `(${f}: ${e})`);
  const log = (await read("reconcile.log")).split("\n");
  const notable = log.filter((l) => !l.includes('"level":"info"') || l.includes("halt"));
  const report = (await read("execution.md")).split("\n");
  const rows = report.filter((l) =>
    /unresolved|not committed|halt|Unreadable|Refused|fail|hold/i.test(l)
  );
  return [
    "--- reconcile.log (not info) and its last 8 lines ---",
    ...notable.slice(-40),
    ...log.slice(-8),
    "--- execution.md lines naming a halt ---",
    ...rows.slice(0, 40),
  ].join("\n");
}
