import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { completeRows, type RowResult } from "../../../src/domain/safeguards/result.ts";
import { judgePlanChecks } from "../../../src/domain/safeguards/judge_plan.ts";
import { INSTALLER_UNRESOLVED } from "../../../src/domain/safeguards/judge_installer.ts";

const planRows = judgePlanChecks("TalosUpgrade", new Set());
const row = (rows: readonly RowResult[], id: RowResult["id"]) => rows.find((r) => r.id === id)!;

Deno.test("row 3 (installer resolved to a registry digest) never passes on plan checks alone: it follows row 10's registry resolution", () => {
  // Plan checks see only the reference's shape; with no resolution recorded row 3 is not a pass.
  const unresolved = completeRows(planRows, [{
    id: "InstallerImageExists",
    ...INSTALLER_UNRESOLVED,
  }]);
  assertEquals(row(unresolved, "InstallerDigestResolved").verdict, "not-evaluated");
  assert(/registry resolution did not pass.*installer not resolved/.test(
    row(unresolved, "InstallerDigestResolved").evidence,
  ));

  const mismatch = completeRows(planRows, [{
    id: "InstallerImageExists",
    verdict: "fail",
    evidence: "hop 0: x resolved to sha256:b, not the pinned sha256:a",
    reason: "InstallerDigestMismatch",
  }]);
  assertEquals(
    [
      row(mismatch, "InstallerDigestResolved").verdict,
      row(mismatch, "InstallerDigestResolved").reason,
    ],
    ["fail", "InstallerDigestMismatch"],
  );

  const resolved = completeRows(planRows, [{
    id: "InstallerImageExists",
    verdict: "pass",
    evidence: "hop 0: x resolved to the pinned sha256:a",
  }]);
  assertEquals(row(resolved, "InstallerDigestResolved").verdict, "pass");
  assert(row(resolved, "InstallerDigestResolved").evidence.includes("resolved at the registry"));

  // A plan-check failure is not hidden by a passing resolution.
  const badShape = completeRows(
    judgePlanChecks("TalosUpgrade", new Set(["InstallerImageMismatch"])),
    [
      { id: "InstallerImageExists", verdict: "pass", evidence: "resolved" },
    ],
  );
  assertEquals(row(badShape, "InstallerDigestResolved").verdict, "fail");
});
