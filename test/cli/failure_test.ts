/** Expected environment failures read as one line naming what is wrong, not a stack trace. */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { describeFailure, listenFailure } from "../../src/cli/failure.ts";
import { CairnError } from "../../src/domain/errors.ts";

function addrInUse(port: number): unknown {
  try {
    Deno.listen({ hostname: "127.0.0.1", port }).close();
  } catch (e) {
    return e;
  }
  throw new Error("second listen on the same port succeeded");
}

Deno.test("a port in use is PortInUse naming host:port and where to change it", () => {
  const holder = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const { port } = holder.addr as Deno.NetAddr;
    const e = listenFailure(addrInUse(port), { host: "127.0.0.1", port });
    assert(e instanceof CairnError);
    assertEquals(e.reason, "PortInUse");
    assert(e.message.startsWith(`127.0.0.1:${port} is already in use`), e.message);
    assert(e.message.includes("--listen-port"), e.message);
  } finally {
    holder.close();
  }
});

Deno.test("an unexpected error stays an internal error (a bug is not disguised)", () => {
  const bug = new TypeError("x is undefined");
  assertEquals(describeFailure(bug), undefined);
  assertEquals(listenFailure(bug, { host: "h", port: 1 }), bug);
});

Deno.test("sim serve with a missing cluster file is one FileUnreadable line, no twin stack", async () => {
  const { runCli } = await import("../_helpers/cli_run.ts");
  const r = await runCli(["sim", "serve", "--cluster", "no-such-cluster.yaml"]);
  assertEquals(r.code, 1);
  assert(r.stderr.startsWith("FileUnreadable: cannot read cluster description "), r.stderr);
  assertEquals(r.stderr.trim().split("\n").length, 1, r.stderr);
});
