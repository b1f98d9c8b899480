import {
  deepStrictEqual as assertEquals,
  notDeepStrictEqual,
  ok as assert,
} from "node:assert/strict";
import { loadPlaybooks } from "../../../src/app/playbooks.ts";
import { holds, selectValue } from "../../../src/domain/playbook/select.ts";
import {
  checkoutBranch,
  commitFiles,
  dropDeviation,
  initGitOpsRepo,
  initialState,
  PRIMARY_PIN_SET,
  renderRepo,
  renovateBump,
} from "../../../src/sim/gitops/mod.ts";

const playbooks = await loadPlaybooks();

Deno.test("the same seed renders the same repository; another seed other versions", () => {
  const a = renderRepo(initialState({ seed: 7 }));
  const b = renderRepo(initialState({ seed: 7 }));
  assertEquals(a, b);
  notDeepStrictEqual(renderRepo(initialState({ seed: 8 })), a);
  for (const path of [".mise.toml", ".renovaterc.json5", "talos/talconfig.yaml"]) {
    assert(path in a, path);
  }
});

Deno.test("every pin of every playbook is found in a generated repository, one version per pin set", () => {
  const files = renderRepo(initialState({ seed: 3 }));
  for (const p of playbooks) {
    assert(PRIMARY_PIN_SET[p.metadata.name], `no primary pin set for ${p.metadata.name}`);
    for (const set of p.spec.pinSets) {
      const seen = new Set<string>();
      for (const pin of set.pins) {
        const text = files[pin.file];
        assert(text !== undefined, `${p.metadata.name}: ${pin.file} not generated`);
        const got = selectValue(text, pin.select);
        assert(
          got.kind === "found",
          `${p.metadata.name}/${set.id}/${pin.id}: ${JSON.stringify(got)}`,
        );
        seen.add(got.text!.replace(/^v/, ""));
      }
      if (set.sameVersion) assertEquals(seen.size, 1, `${p.metadata.name}/${set.id}: ${[...seen]}`);
    }
  }
});

Deno.test("every deviation holds in a generated repository, and stops holding once dropped", () => {
  const base = initialState({ seed: 5 });
  const files = renderRepo(base);
  for (const p of playbooks) {
    for (const d of p.spec.deviations) {
      const id = `${p.metadata.name}/${d.id}`;
      const kept = selectValue(files[d.file] ?? "", d.select);
      if (d.absent) assert(kept.kind === "absent", `${id}: ${JSON.stringify(kept)}`);
      else if (d.present) assert(kept.kind === "found", `${id}: ${JSON.stringify(kept)}`);
      else {assert(
          kept.kind === "found" && holds(kept.value, d.expected),
          `${id}: ${JSON.stringify(kept)}`,
        );}
      const droppedFiles = renderRepo(dropDeviation(base, id));
      const gone = selectValue(droppedFiles[d.file] ?? "", d.select);
      const stillHolds = d.absent
        ? gone.kind === "absent"
        : d.present
        ? gone.kind === "found"
        : gone.kind === "found" && holds(gone.value, d.expected);
      assert(!stillHolds, `${id} still holds after being dropped`);
    }
  }
});

Deno.test("a Renovate bump moves only its pin set's files", () => {
  const base = initialState({ seed: 1 });
  const bumped = renovateBump(base, "rook-ceph/rook", "patch");
  const a = renderRepo(base), b = renderRepo(bumped.state);
  const changed = Object.keys(b).filter((k) => a[k] !== b[k]).sort();
  assertEquals(changed, [
    "kubernetes/apps/rook-ceph/rook-ceph/app/ocirepository.yaml",
    "kubernetes/apps/rook-ceph/rook-ceph/cluster/ocirepository.yaml",
  ]);
  assert(
    /^fix\(rook-ceph\): update rook group \( v1\.20\.\d → v1\.20\.\d \)$/.test(bumped.message),
  );
});

Deno.test("committed to real git, the same states give the same commit ids", async () => {
  const ids: string[][] = [];
  for (let run = 0; run < 2; run++) {
    const dir = await Deno.makeTempDir({ prefix: "cairn-gitops-" });
    try {
      const base = initialState({ seed: 11 });
      const first = await initGitOpsRepo(dir, renderRepo(base));
      await checkoutBranch(dir, "renovate/talos", first);
      const next = renovateBump(base, "talos/talos", "patch");
      const second = await commitFiles(dir, renderRepo(next.state), next.message);
      ids.push([first, second]);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  }
  assertEquals(ids[0], ids[1]);
  assert(/^[0-9a-f]{40}$/.test(ids[0]![1]!));
});
