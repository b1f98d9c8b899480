import { resolve } from "node:path";
import {
  type Command,
  type CommandIO,
  EXIT,
  OUTPUT_OPTION,
  UsageError,
  wantsJson,
} from "./command.ts";

async function run(args: Parameters<Command["run"]>[0], io: CommandIO): Promise<number> {
  const repo = args.values["repo"] as string | undefined;
  const base = args.values["base"] as string | undefined;
  const head = args.values["head"] as string | undefined;
  if (!repo || !base || !head) throw new UsageError("--repo, --base and --head are required");
  const playbooks = args.values["playbooks"] as string | undefined;
  const bundled = args.values["bundled"] as string | undefined;
  const { runReview } = await import("../app/review_run.ts");
  const { renderReviewReport } = await import("../report/render_review.ts");
  const review = await runReview({
    repo: resolve(io.cwd, repo),
    base,
    head,
    ...(playbooks ? { playbooksDir: resolve(io.cwd, playbooks) } : {}),
    ...(bundled ? { bundledFile: resolve(io.cwd, bundled) } : {}),
  });
  io.stdout(wantsJson(args) ? JSON.stringify(review, null, 2) + "\n" : renderReviewReport(review));
  return review.result.verdict === "findings" ? EXIT.refused : EXIT.ok;
}

export const command: Command = {
  path: ["review"],
  summary: "Review a bump of protected components on a branch against the upgrade playbooks",
  usage: "--repo DIR --base REF --head REF [--bundled FILE] [--playbooks DIR] [--output json]",
  help: `
Reads the change between the merge base of BASE and HEAD and HEAD in the git repository DIR
(committed content only, never the working tree), finds the protected components it touches
(the playbooks in playbooks/, one per component) and judges it against them:

  PinSetPartial           some pins of a set moved, others stayed (3 of the 5 Talos pins)
  PinSetDisagrees         the pins of a set now carry different versions
  DeviationDropped        a deliberate deviation the base has is gone (drivers.rbd.name, …)
  DeviationMissing        a deviation the playbook expects is absent on both commits
  CompanionMoves          a second component rides along (Ceph in the Rook cluster chart,
                          cephcsi in the Rook operator chart, Flux in the manifests artifact)
  CompanionMajorJump      it moves more majors than one upgrade may
  CompanionVersionUnknown its version at a tag is not in the bundled-versions snapshot
  CompanionEditMissing    an edit that must ride in the same change did not (talhelper)
  RollbackAcrossOneWay    a pin goes back across a one-way minor or major
  ReviewFileUnreadable    a judged file cannot be read on one side; nothing is concluded

The report (markdown, or JSON with --output json) names every file and line it judged, the
playbook's required actions, what to read before merging, the after-merge checks and the
rollback caveats.

Options:
  --repo DIR        the GitOps repository (a git working copy or bare repository)
  --base REF        the branch the change goes into (e.g. main)
  --head REF        the branch or commit to review
  --bundled FILE    bundled-versions snapshot (kind BundledVersions): what a chart or artifact
                    carries at a tag; default: catalogue/bundled-versions.yaml at BASE, as the
                    reconciler reads it; without one every riding companion is unknown
  --playbooks DIR   playbooks to use instead of the shipped ones
  --output json     print the review as JSON

Exit codes: 0 no finding (clean, or no protected component touched); 1 at least one finding,
or the input was refused (unknown revision ReviewRefUnknown, invalid playbook or snapshot);
2 usage error; 3 internal error.
`,
  options: {
    ...OUTPUT_OPTION,
    repo: { type: "string" },
    base: { type: "string" },
    head: { type: "string" },
    bundled: { type: "string" },
    playbooks: { type: "string" },
  },
  run,
};
