import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { gitOpsTree } from "../../../src/adapters/git/gitops_tree.ts";
import { initialState, renderRepo } from "../../../src/sim/gitops/mod.ts";
import { GitOpsRepo } from "../../_helpers/gitops_review.ts";

Deno.test("the git tree reads committed files, says missing for absent ones, and never reads one over the cap", async () => {
  const state = initialState({ seed: 2 });
  await using repo = await GitOpsRepo.create(state);
  const files = renderRepo(state);
  const small = ".mise.toml";
  const big = "kubernetes/apps/rook-ceph/rook-ceph/cluster/helmrelease.yaml";
  const cap = files[small]!.length + 1;
  const tree = gitOpsTree(repo.dir, cap);
  const got = await tree.readFiles(repo.main, [small, big, "no/such/file.yaml"]);
  assertEquals(got.get(small), { kind: "text", text: files[small] });
  assertEquals(got.get(big), {
    kind: "unreadable",
    why: `file is ${new TextEncoder().encode(files[big]!).length} bytes; the limit is ${cap}`,
  });
  assertEquals(got.get("no/such/file.yaml"), { kind: "missing" });
  assertEquals(await tree.changedPaths(repo.main, repo.main), []);
});
