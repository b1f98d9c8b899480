import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { createHash } from "node:crypto";

const DIGEST = new URL("../../../src/domain/plan/digest.ts", import.meta.url).href;
const DIGEST_SYNC = new URL("../../../src/domain/plan/digest_sync.ts", import.meta.url).href;

/** Inputs of every awkward length around a block, and views into a larger buffer. */
function inputs(): Uint8Array[] {
  const big = new Uint8Array(300);
  for (let i = 0; i < big.length; i++) big[i] = (i * 131 + 7) & 0xff;
  const out: Uint8Array[] = [];
  for (const n of [0, 1, 55, 56, 63, 64, 65, 119, 128, 200]) {
    out.push(big.slice(0, n), big.subarray(17, 17 + n));
  }
  return out;
}

/** sha256Hex of each input in a fresh process that loads `modules` first (in that order). */
async function inFreshProcess(modules: string[]): Promise<string[]> {
  const code = `${
    modules.map((m, i) => `const m${i} = await import(${JSON.stringify(m)});`).join("")
  }
    const big = new Uint8Array(300);
    for (let i = 0; i < big.length; i++) big[i] = (i * 131 + 7) & 0xff;
    const out = [];
    for (const n of [0, 1, 55, 56, 63, 64, 65, 119, 128, 200]) {
      out.push(await m0.sha256Hex(big.slice(0, n)), await m0.sha256Hex(big.subarray(17, 17 + n)));
    }
    console.log(JSON.stringify(out));`;
  const r = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--quiet", code],
    stdout: "piped",
    stderr: "piped",
  }).output();
  ok(r.success, new TextDecoder().decode(r.stderr));
  return JSON.parse(new TextDecoder().decode(r.stdout));
}

Deno.test("sha256Hex gives node:crypto's digest through WebCrypto and through digest_sync", async () => {
  const want = inputs().map((b) => createHash("sha256").update(b).digest("hex"));
  assertEquals(await inFreshProcess([DIGEST]), want, "WebCrypto (digest_sync not loaded)");
  assertEquals(await inFreshProcess([DIGEST, DIGEST_SYNC]), want, "node:crypto (loaded)");
  const { sha256HexSync } = await import(DIGEST_SYNC);
  assertEquals(inputs().map(sha256HexSync), want);
});
