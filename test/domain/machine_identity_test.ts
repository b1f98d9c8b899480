/** The pure identity comparison: both sides read, the same machine, the committed machine. */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import {
  type IdentityObservation,
  identityRecord,
  judgeIdentity,
  normalizeUuid,
  parseIdentityRecord,
  uuidFromNode,
  uuidFromSystemInformation,
} from "../../src/domain/machine_identity.ts";

const A = "5b6f3c1e-2d4a-4f00-9b1c-0a1b2c3d4e5f";
const B = "8e7d6c5b-4a39-4281-a7f6-e5d4c3b2a190";

function obs(kube: string | Error, talos: string | Error): IdentityObservation {
  const reading = (v: string | Error) =>
    v instanceof Error ? { ok: false as const, error: v.message } : { ok: true as const, uuid: v };
  return { node: "worker-1", address: "10.5.0.6", kube: reading(kube), talos: reading(talos) };
}

const committed = { node: "worker-1", address: "10.5.0.6", machineUuid: A };

Deno.test("judgeIdentity() binds the machine both sides name", () => {
  assertEquals(judgeIdentity(obs(A, A)), { ok: true, identity: committed });
  assertEquals(judgeIdentity(obs(A, A), committed).ok, true);
});

Deno.test("judgeIdentity() refuses when the address reaches another machine than the Node", () => {
  const v = judgeIdentity(obs(A, B));
  assertEquals(v.ok ? "" : v.reason, "MachineIdentityMismatch");
  assertEquals(v.ok ? "" : v.detail.includes(`Talos at 10.5.0.6 is machine ${B}`), true);
  // Even when the Talos side matches what was committed, the Node disagreeing is a mismatch.
  const w = judgeIdentity(obs(B, A), committed);
  assertEquals(w.ok ? "" : w.reason, "MachineIdentityMismatch");
});

Deno.test("judgeIdentity() refuses a machine both sides agree on when it is not the committed one", () => {
  const v = judgeIdentity(obs(B, B), committed);
  assertEquals(v.ok ? "" : v.reason, "MachineIdentityMismatch");
  assertEquals(v.ok ? "" : v.detail.includes(`commitment bound machine ${A}`), true);
  const moved = judgeIdentity(obs(A, A), { ...committed, address: "10.5.0.7" });
  assertEquals(moved.ok ? "" : moved.reason, "MachineIdentityMismatch");
});

Deno.test("judgeIdentity() calls a side it could not read unreadable, never a match or a mismatch", () => {
  for (const o of [obs(new Error("timeout"), A), obs(A, new Error("unavailable"))]) {
    const v = judgeIdentity(o, committed);
    assertEquals(v.ok ? "" : v.reason, "MachineIdentityUnreadable");
  }
  const both = judgeIdentity(obs(new Error("x"), new Error("y")));
  assertEquals(both.ok ? "" : both.detail, "Kubernetes Node worker-1: x; Talos at 10.5.0.6: y");
});

Deno.test("UUID readings: case-insensitive, and placeholder UUIDs identify nothing", () => {
  assertEquals(normalizeUuid(A.toUpperCase()), A);
  assertEquals(uuidFromNode(""), { ok: false, error: 'Node reports no usable systemUUID ("")' });
  assertEquals(uuidFromNode("00000000-0000-0000-0000-000000000000").ok, false);
  assertEquals(uuidFromNode("FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF").ok, false);
  assertEquals(uuidFromSystemInformation(`manufacturer: x\nuuid: ${A.toUpperCase()}\n`), {
    ok: true,
    uuid: A,
  });
  assertEquals(uuidFromSystemInformation("manufacturer: x\n").ok, false);
  assertEquals(uuidFromSystemInformation(": : :").ok, false);
});

Deno.test("identity records read back as written, and nothing else reads as one", () => {
  assertEquals(parseIdentityRecord(identityRecord(committed)), committed);
  assertEquals(parseIdentityRecord(`machine=${A} node=worker-1`), undefined);
  assertEquals(parseIdentityRecord("machine=not-a-uuid node=a address=b"), undefined);
});
