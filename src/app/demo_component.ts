/**
 * `cairn demo --component rook-ceph`: the review → merge → observe loop of a protected
 * component bump on one machine. A generated home-ops GitOps repository (real git,
 * `sim/gitops/`) gets a Renovate-like Rook-Ceph minor bump on a branch; `cairn review`'s engine
 * judges the branch against the playbooks; a ComponentUpgrade plan binding the branch's base and
 * head commits, the pin files by digest and the cephcsi image the operator must roll out is
 * written on the branch and signed by the demo's throwaway keys (author and approver, trust root
 * outside the repository); the branch is merged; the in-process twin's Flux delivers the merge
 * and its Rook operator renders (or, with `staleOperator`, does not re-render) the CSI plugins;
 * cairn observes the delivery and the after-merge checks and commits the execution report.
 */
import { join } from "node:path";
import { parse } from "yaml";
import { gitCommitHistory } from "../adapters/git/commit_history.ts";
import { gitText } from "../adapters/git/run_git.ts";
import { openJournal } from "../adapters/journal/libsql_journal.ts";
import { workingTreeBoundFiles } from "../adapters/repo/bound_file_reader.ts";
import { sha256Hex } from "../domain/plan/digest.ts";
import { parsePlan } from "../domain/plan/parse.ts";
import { evaluatePolicy } from "../domain/trust/policy.ts";
import { parseAllowedSigners } from "../domain/trust/allowed_signers.ts";
import { renderReviewReport } from "../report/render_review.ts";
import { bundledCephcsi } from "../sim/gitops/upstream.ts";
import {
  checkoutBranch,
  commitFiles,
  initGitOpsRepo,
  initialState,
  renderBundledVersions,
  renderRepo,
  renovateBump,
  vtag,
} from "../sim/gitops/mod.ts";
import { startInprocTwin } from "../sim/inproc/cluster.ts";
import { ClusterDescriptionSchema } from "../sim/cluster_description.ts";
import { allowedSignersText, demoSigner } from "./demo_keys.ts";
import { counterIdSource } from "./inproc_rollout.ts";
import { componentExitCode, runComponentPlan } from "./component_run.ts";
import { fileTrustRoot } from "./reconcile_wiring.ts";
import { runReview } from "./review_run.ts";

export interface ComponentDemoOptions {
  readonly dir: string;
  /** cairn's own root (playbooks, policies). */
  readonly root: string;
  readonly component: string;
  /** The twin's Rook operator does not re-render the CSI plugins after its restart. */
  readonly staleOperator: boolean;
  readonly say: (line: string) => void;
}

export interface ComponentDemoResult {
  readonly dir: string;
  readonly repo: string;
  readonly reviewVerdict: string;
  readonly reviewPath: string;
  readonly plan: string;
  readonly merge: string;
  readonly end: string;
  readonly exitCode: 0 | 1;
  readonly reportPath: string;
  readonly reportVerdict: string;
  readonly virtualMs: number;
}

const AUTHOR = "alice@example.com";
const APPROVER = "bob@example.com";
const BRANCH = "renovate/rook-ceph-1.x";
const POLICY = "policies/home-ops.yaml";
const OPERATOR_PIN = "kubernetes/apps/rook-ceph/rook-ceph/app/ocirepository.yaml";
const CLUSTER_PIN = "kubernetes/apps/rook-ceph/rook-ceph/cluster/ocirepository.yaml";
/** The Rook line the twin's home-ops cluster runs (fixtures/clusters/home-ops.yaml). */
const TWIN_ROOK = { major: 1, minor: 20, patch: 2 };

/** Runs the loop; the directory is kept (repository, review, report, journal). */
export async function runComponentDemo(o: ComponentDemoOptions): Promise<ComponentDemoResult> {
  if (o.component !== "rook-ceph") {
    throw new RangeError(`the component demo knows rook-ceph only, not ${o.component}`);
  }
  const repo = join(o.dir, "home-ops");
  const start = initialState({ seed: 4 });
  const state = { ...start, versions: { ...start.versions, "rook-ceph/rook": TWIN_ROOK } };
  const base = await initGitOpsRepo(repo, {
    ...renderRepo(state),
    [POLICY]: await Deno.readTextFile(join(o.root, POLICY)),
  });
  o.say(
    `GitOps repository ${repo}: home-ops with Rook ${vtag(TWIN_ROOK)} on main (${
      base.slice(0, 12)
    })`,
  );
  const bump = renovateBump(state, "rook-ceph/rook", "minor");
  await checkoutBranch(repo, BRANCH, "main");
  const files: Record<string, string> = {
    ...renderRepo(bump.state),
    [POLICY]: await Deno.readTextFile(join(o.root, POLICY)),
  };
  const head = await commitFiles(repo, files, bump.message);
  o.say(`Renovate-like branch ${BRANCH}: ${bump.message} (${head.slice(0, 12)})`);

  // Review the branch with the playbooks and the bundled-versions snapshot.
  const bundledFile = join(o.dir, "bundled-versions.yaml");
  await Deno.writeTextFile(bundledFile, renderBundledVersions());
  const review = await runReview({ repo, base: "main", head: BRANCH, bundledFile });
  const reviewPath = join(o.dir, "review.md");
  await Deno.writeTextFile(reviewPath, renderReviewReport(review));
  const reviewVerdict = String(review.result.verdict);
  o.say(`Review of ${BRANCH}: ${reviewVerdict} (${reviewPath})`);

  // The plan, written and signed on the branch: base/head, pins by digest, what must roll out.
  const signers = [await demoSigner(AUTHOR), await demoSigner(APPROVER)];
  const trustPath = join(o.dir, "allowed_signers");
  await Deno.writeTextFile(trustPath, allowedSignersText(signers));
  const to = vtag(bump.to);
  const cephcsi = bundledCephcsi(bump.to);
  const planName = `rook-ceph-${to}`;
  const planPath = `plans/${planName}.yaml`;
  const enc = new TextEncoder();
  const planText = componentPlanText({
    name: planName,
    from: vtag(bump.from),
    to,
    base,
    head,
    policySha: await sha256Hex(enc.encode(files[POLICY]!)),
    pins: [
      { path: OPERATOR_PIN, sha256: await sha256Hex(enc.encode(files[OPERATOR_PIN]!)) },
      { path: CLUSTER_PIN, sha256: await sha256Hex(enc.encode(files[CLUSTER_PIN]!)) },
    ],
    image: `quay.io/cephcsi/cephcsi:${cephcsi}`,
  });
  const planBytes = enc.encode(planText);
  let sigs = "";
  for (const s of signers) sigs += await s.sign(planBytes);
  await commitFiles(repo, {
    ...files,
    [planPath]: planText,
    [`${planPath}.sig`]: sigs,
  }, `Plan ${planName}`);
  o.say(`Plan ${planPath} on ${BRANCH}, signed by ${AUTHOR} and ${APPROVER}`);

  // Merge, as the pull request would be.
  await gitText([
    "-c",
    "user.name=Alice",
    "-c",
    `user.email=${AUTHOR}`,
    "-c",
    "commit.gpgsign=false",
    "checkout",
    "-q",
    "main",
  ], { cwd: repo });
  await gitText([
    "-c",
    "user.name=Alice",
    "-c",
    `user.email=${AUTHOR}`,
    "-c",
    "commit.gpgsign=false",
    "merge",
    "-q",
    "--no-ff",
    "-m",
    `Merge ${BRANCH}`,
    BRANCH,
  ], { cwd: repo });
  const merge = (await gitText(["rev-parse", "HEAD"], { cwd: repo })).trim();
  o.say(`Merged ${BRANCH} into main (${merge.slice(0, 12)}); Flux delivers it on the twin`);

  // The approval, as the reconciler judges it: author plus one approver under the trust root.
  const approval = await evaluatePolicy({
    plan: planBytes,
    signatures: sigs,
    signers: parseAllowedSigners(await Deno.readTextFile(trustPath), trustPath),
    author: AUTHOR,
    requiredApprovals: 1,
    atMs: Date.now(),
  });
  if (!approval.ok) throw new Error(`the demo plan is not approved: ${approval.summary}`);

  const twin = startInprocTwin({
    description: ClusterDescriptionSchema.parse(
      parse(await Deno.readTextFile(join(o.root, "fixtures/clusters/home-ops.yaml"))),
    ),
    gitops: { rookRerendersOnRestart: !o.staleOperator },
  });
  const started = twin.clock.now();
  const journal = await openJournal({
    url: `file:${join(o.dir, "journal.db")}`,
    ids: counterIdSource(),
    nowMs: started,
  });
  try {
    twin.gitops.merge({ commit: merge, ociTags: await ociTags(repo) });
    const parsed = await parsePlan(planBytes, { file: planPath });
    const r = await runComponentPlan({
      journal,
      cluster: { kube: twin.kube, talos: twin.talos },
      parsed,
      bytes: planBytes,
      signatures: sigs,
      requiredApprovals: 1,
      files: workingTreeBoundFiles(join(repo, planPath)),
      trust: fileTrustRoot(trustPath),
      owner: "ctl_demo",
      approver: approval.approvers.join(","),
      firstSeenCommit: merge,
      merged: { commit: merge, history: gitCommitHistory(repo) },
      root: o.root,
      clock: twin.clock,
      timeoutClock: twin.timeoutClock,
      callTimeoutMs: (ms) => ms,
      pollIntervalMs: 10_000,
      roundIntervalMs: 30_000,
    });
    const reportRel = `reports/${planName}/execution.md`;
    await Deno.mkdir(join(repo, "reports", planName), { recursive: true });
    await Deno.writeTextFile(join(repo, reportRel), r.report + "\n");
    await gitText([
      "-c",
      "user.name=cairn",
      "-c",
      "user.email=cairn@localhost",
      "-c",
      "commit.gpgsign=false",
      "add",
      "--",
      reportRel,
    ], { cwd: repo });
    await gitText([
      "-c",
      "user.name=cairn",
      "-c",
      "user.email=cairn@localhost",
      "-c",
      "commit.gpgsign=false",
      "commit",
      "-q",
      "-m",
      `cairn: execution report of ${planName}`,
    ], {
      cwd: repo,
    });
    for (const e of twin.gitops.events) o.say(`  twin: ${e}`);
    return {
      dir: o.dir,
      repo,
      reviewVerdict,
      reviewPath,
      plan: planPath,
      merge,
      end: r.outcome.end,
      exitCode: componentExitCode(r.outcome.end),
      reportPath: join(repo, reportRel),
      reportVerdict: /\*\*Verdict: ([A-Z][A-Z ,-]*[A-Z])/.exec(r.report)?.[1] ?? "missing",
      virtualMs: twin.clock.now() - started,
    };
  } finally {
    await journal.close();
    twin.stop();
  }
}

/** `namespace/name` → tag of every Rook OCIRepository in the merged tree (kustomize namespace). */
async function ociTags(repo: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const path of [OPERATOR_PIN, CLUSTER_PIN]) {
    const doc = parse(await Deno.readTextFile(join(repo, path))) as {
      metadata: { name: string };
      spec: { ref: { tag: string } };
    };
    out[`rook-ceph/${doc.metadata.name}`] = doc.spec.ref.tag;
  }
  return out;
}

function componentPlanText(d: {
  name: string;
  from: string;
  to: string;
  base: string;
  head: string;
  policySha: string;
  pins: { path: string; sha256: string }[];
  image: string;
}): string {
  const expires = new Date(Date.UTC(2027, 0, 31)).toISOString().replace(/\.000Z$/, "Z");
  return [
    `# ComponentUpgrade of rook-ceph from ${d.from} to ${d.to}, from branch ${BRANCH}.`,
    "# cairn observes the delivery after merge; it does not mutate the component.",
    "apiVersion: cairn.dev/v1alpha1",
    "kind: ComponentUpgrade",
    "metadata:",
    `  name: ${d.name}`,
    "  cluster: home-ops",
    `  author: ${AUTHOR}`,
    `  expires: ${expires}`,
    "spec:",
    "  healthPolicy:",
    `    path: ${POLICY}`,
    `    sha256: ${d.policySha}`,
    "  retry:",
    "    maxAttempts: 3",
    "  component: rook-ceph",
    "  flux: {kind: HelmRelease, namespace: rook-ceph, name: rook-ceph}",
    `  from: ${d.from}`,
    `  to: ${d.to}`,
    "  change:",
    `    base: "${d.base}"`,
    `    head: "${d.head}"`,
    "    pins:",
    ...d.pins.map((p) => `      - {path: ${p.path}, sha256: "${p.sha256}"}`),
    "  delivery:",
    "    source: {kind: OCIRepository, namespace: rook-ceph, name: rook-ceph}",
    "    images:",
    "      - namespace: rook-ceph",
    "        selector: app.kubernetes.io/part-of=ceph-csi",
    "        container: csi-rbdplugin",
    `        image: ${d.image}`,
    "        renderedBy: the rook-ceph operator (its bundled ceph-csi-operator's defaults)",
    "  phases:",
    "    deadlines:",
    "      rollout: { transportSeconds: 60, verificationSeconds: 1200 }",
    "",
  ].join("\n");
}
