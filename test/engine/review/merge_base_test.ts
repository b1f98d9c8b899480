import { deepStrictEqual as assertEquals } from "node:assert/strict";
import {
  checkoutBranch,
  commitFiles,
  initialState,
  renderRepo,
  renovateBump,
} from "../../../src/sim/gitops/mod.ts";
import { GitOpsRepo } from "../../_helpers/gitops_review.ts";

Deno.test("a branch is compared with its merge base: main moving on after the branch was cut is not the branch's change", async () => {
  const base = initialState({ seed: 4 });
  await using repo = await GitOpsRepo.create(base);
  const certManager = renovateBump(base, "cert-manager/chart", "patch");
  const head = await repo.branch("renovate/cert-manager", certManager.state, certManager.message);
  // main takes a Talos patch after the branch was cut.
  await checkoutBranch(repo.dir, "main-later", repo.main);
  const talos = renovateBump(base, "talos/talos", "patch");
  await commitFiles(repo.dir, renderRepo(talos.state), talos.message);
  const r = await repo.review(head, "main-later");
  assertEquals(r.comparedWith, repo.main);
  assertEquals(r.result.components.map((c) => c.name), ["cert-manager"]);
  assertEquals(r.result.verdict, "clean");
});
