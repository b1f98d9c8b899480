import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import {
  classifyFetch,
  parseProvenance,
  provenanceSummary,
  provenanceText,
} from "../../../src/domain/evidence/provenance.ts";

const REPO = "https://github.com/siderolabs/talos.git";
const REV = "9".repeat(40);

Deno.test("classifyFetch() says fetched only when git fetched from the named repository itself", () => {
  assertEquals(classifyFetch(REPO, REV, REPO).kind, "fetched");
  for (
    const local of ["/tmp/x/talos.git", "file:///srv/talos.git", "./talos.git", "C:\\r\\t.git"]
  ) {
    assertEquals(classifyFetch(REPO, REV, local).kind, "local-stand-in", local);
  }
  assertEquals(classifyFetch(REPO, REV, "https://mirror.example/talos.git"), {
    kind: "mirror",
    repository: REPO,
    revision: REV,
    fetchedFrom: "https://mirror.example/talos.git",
  });
});

Deno.test("a local stand-in's text names the upstream it replaced and never the local path", () => {
  const t = provenanceText(classifyFetch(REPO, REV, "/home/someone/talos.git"));
  assert(t.startsWith("local stand-in") && t.includes(REPO) && !t.includes("/home/someone"), t);
});

Deno.test("parseProvenance() reads anything unrecognised as unrecorded, never as fetched", () => {
  for (
    const raw of [null, 1, "fetched", {}, { kind: "fetched" }, {
      kind: "x",
      repository: REPO,
      revision: REV,
    }, { kind: "mirror", repository: REPO, revision: REV }]
  ) {
    assertEquals(parseProvenance(raw), { kind: "unrecorded" }, JSON.stringify(raw));
  }
  assertEquals(
    parseProvenance({ kind: "fetched", repository: REPO, revision: REV }).kind,
    "fetched",
  );
});

Deno.test("provenanceSummary() is silent only when every source came from its named upstream", () => {
  assertEquals(provenanceSummary(["fetched", "fetched"]), "");
  const s = provenanceSummary(["local-stand-in", "local-stand-in", "local-stand-in"]);
  assert(s.includes("3 from local stand-ins") && s.includes("none from the named upstreams"), s);
  assert(
    provenanceSummary(["fetched", "unrecorded"]).includes(
      "1 from cache entries of unrecorded origin",
    ),
  );
});
