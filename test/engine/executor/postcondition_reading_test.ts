/**
 * What a completion read records about the bound postconditions: the executor's typed fact that
 * the journal's `failed` guard rests on (a value read and different contradicts; a value not read
 * never does).
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import type { TalosHop } from "../../../src/domain/plan/schema.ts";
import { postconditionReading } from "../../../src/engine/executor/verify_phase.ts";

const SCHEMATIC = "30684e2ddd0b9d61be817efe9f71ba839dc0e7610d8bc111fe7f70c6b29db08b";
const hop = {
  from: "v1.13.9",
  to: "v1.14.2",
  rpcPath: "lifecycle",
  installer: { image: "factory.talos.dev/x", schematic: SCHEMATIC },
} as TalosHop;

Deno.test("postconditionReading(): every bound value read and equal is established", () => {
  assertEquals(
    postconditionReading({ version: "v1.14.2", schematic: SCHEMATIC }, hop, "pass"),
    "established",
  );
});

Deno.test("postconditionReading(): a value read and different contradicts, whatever else was unreadable", () => {
  assertEquals(
    postconditionReading({ version: "v1.13.9", schematic: undefined }, hop, "unreadable"),
    "contradicted",
  );
  assertEquals(
    postconditionReading({ version: "v1.14.2", schematic: "f".repeat(64) }, hop, "pass"),
    "contradicted",
  );
  // A bound health check that was read and failed contradicts the postconditions.
  assertEquals(
    postconditionReading({ version: undefined, schematic: SCHEMATIC }, hop, "fail"),
    "contradicted",
  );
});

Deno.test("postconditionReading(): nothing read differs but something was not read: unreadable", () => {
  assertEquals(
    postconditionReading({ version: undefined, schematic: SCHEMATIC }, hop, "pass"),
    "unreadable",
  );
  assertEquals(
    postconditionReading({ version: "v1.14.2", schematic: undefined }, hop, "pass"),
    "unreadable",
  );
  assertEquals(
    postconditionReading({ version: "v1.14.2", schematic: SCHEMATIC }, hop, "unreadable"),
    "unreadable",
  );
});
