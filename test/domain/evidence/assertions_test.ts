import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import {
  checkContains,
  checkIndependent,
  checkOrder,
  syntheticOrderSource,
} from "../../../src/domain/evidence/assertions.ts";
import {
  findFunctionBody,
  maskCommentsAndStrings,
} from "../../../src/domain/evidence/source_scan.ts";

const GO = `package x

// drain() in a comment
func (c *Client) upgrade(ctx context.Context, opts struct{ a int }) (err error) {
	s := "drain() in a string } {"
	c.pull(ctx)
	install(ctx)
	drain(ctx)
	return nil
}

func other() { drain(); pull() }
`;

Deno.test("checkOrder() finds first calls inside the function body only", () => {
  assert(checkOrder(GO, "upgrade", ["pull", "install", "drain"]).holds);
  const reversed = checkOrder(GO, "upgrade", ["drain", "pull"]);
  assertEquals(reversed.holds, false);
  assert(reversed.message.includes("does not follow"), reversed.message);
  assertEquals(checkOrder(GO, "other", ["pull", "drain"]).holds, false);
});

Deno.test("checkOrder() ignores calls named in comments and strings", () => {
  const src = `func f() {\n\t// b()\n\tx := "b()"\n\ta()\n\tb()\n}\n`;
  assert(checkOrder(src, "f", ["a", "b"]).holds);
});

Deno.test("checkOrder() reports a missing function or call", () => {
  assertEquals(checkOrder(GO, "nope", ["a", "b"]).message, "function nope not found");
  assertEquals(
    checkOrder(GO, "upgrade", ["pull", "reboot"]).message,
    "call reboot not found in upgrade",
  );
});

Deno.test("findFunctionBody() matches braces past literal braces and parameter struct braces", () => {
  const masked = maskCommentsAndStrings(GO);
  const body = findFunctionBody(masked, "upgrade")!;
  assertEquals(body.dialect, "go");
  assert(GO.slice(body.open, body.close + 1).trimEnd().endsWith("return nil\n}"));
  const js = "function run(a) {\n  if (a) { go(); }\n}\n";
  assertEquals(findFunctionBody(js, "run")?.dialect, "js");
});

Deno.test("checkIndependent() passes when the option is used outside every if on the flag", () => {
  const src = `func up(o Opts) {
	if o.PrePull {
		prePull(o)
	}
	if o.DryRun {
		return nil
	}
}`;
  assert(checkIndependent(src, "up", "PrePull", "DryRun").holds);
});

Deno.test("checkIndependent() fails when every use sits under the flag, including else branches", () => {
  const guarded = `func up(o Opts) {
	if !o.DryRun {
		prePull(o.PrePull)
	} else if x {
		other(o.PrePull)
	} else {
		more(o.PrePull)
	}
}`;
  const r = checkIndependent(guarded, "up", "PrePull", "DryRun");
  assertEquals(r.holds, false);
  assert(r.message.includes("conditioned on DryRun"), r.message);
  const js = `function up(o) {\n  if (o.dryRun) pull(o.prePull);\n}\n`;
  assertEquals(checkIndependent(js, "up", "prePull", "dryRun").holds, false);
  assertEquals(checkIndependent(guarded, "up", "Missing", "DryRun").holds, false);
});

Deno.test("checkIndependent() does not mistake a longer identifier for the flag", () => {
  const src =
    `func Apply(o Opts) {\n\tif o.ForceOwnership {\n\t\tuse(client.ForceOwnership)\n\t}\n}`;
  assert(checkIndependent(src, "Apply", "client.ForceOwnership", "Force").holds);
});

Deno.test("syntheticOrderSource() yields a file the order checker rejects when reversed", () => {
  const calls = ["pullImage", "upgradeInternal", "drainNodes"];
  for (const go of [true, false]) {
    const synthetic = syntheticOrderSource("f", [...calls].reverse(), go);
    assertEquals(checkOrder(synthetic, "f", calls).holds, false);
    assert(checkOrder(syntheticOrderSource("f", calls, go), "f", calls).holds);
  }
});

Deno.test("checkContains() reports the line of the text", () => {
  assertEquals(checkContains("a\nb\nneedle\n", "needle"), {
    holds: true,
    message: "found at line 3",
  });
  assertEquals(checkContains("a", "needle").holds, false);
});
