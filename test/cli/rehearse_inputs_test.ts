import { deepStrictEqual as assertEquals, ok as assert, rejects } from "node:assert/strict";
import { isAbsolute } from "node:path";
import { type CommandIO } from "../../src/cli/command.ts";
import { parseCommandArgs } from "../../src/cli/command_args.ts";
import { command as rehearse, DEFAULT_CLUSTER_PATH } from "../../src/cli/rehearse.ts";
import { CairnError } from "../../src/domain/errors.ts";
import { makePlanRepo } from "../_helpers/plan_repo.ts";

function io(cwd: string): CommandIO {
  return {
    stdout: () => {},
    stderr: () => {},
    env: {},
    cwd,
    color: false,
    tty: false,
    signal: new AbortController().signal,
  };
}

Deno.test("cairn rehearse: the default cluster description ships with cairn (found from any working directory)", async () => {
  assert(isAbsolute(DEFAULT_CLUSTER_PATH), DEFAULT_CLUSTER_PATH);
  assert((await Deno.stat(DEFAULT_CLUSTER_PATH)).isFile);
});

Deno.test("cairn rehearse: a missing --cluster file is a FileUnreadable naming it, before any twin starts", async () => {
  const dir = await makePlanRepo("cairn-cli-rehearse-inputs-");
  const journal = await Deno.makeTempDir({ prefix: "cairn-cli-rehearse-journal-" });
  try {
    const argv = [
      "plans/talos-v1.14.2.yaml",
      "--cluster",
      "nope.yaml",
      "--journal",
      `file:${journal}/j.db`,
    ];
    await rejects(rehearse.run(parseCommandArgs(rehearse, argv), io(dir)), (e: unknown) => {
      assert(e instanceof CairnError, String(e));
      assertEquals(e.reason, "FileUnreadable");
      assert(e.message.includes(`${dir}/nope.yaml`) && e.message.includes("--cluster"), e.message);
      return true;
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(journal, { recursive: true });
  }
});

Deno.test("cairn rehearse: a fault preset for another plan kind is a usage error before any twin starts", async () => {
  const dir = await makePlanRepo("cairn-cli-rehearse-kind-");
  try {
    // A missing --cluster too: were the kind not checked first, that error would come instead.
    const argv = [
      "plans/talos-v1.14.2.yaml",
      "--fault",
      "gitops-field-manager",
      "--cluster",
      "nope.yaml",
    ];
    await rejects(rehearse.run(parseCommandArgs(rehearse, argv), io(dir)), (e: unknown) => {
      assert(e instanceof Error && e.message.includes("rehearses a KubernetesUpgrade"), String(e));
      return true;
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
