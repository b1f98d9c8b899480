import { deepStrictEqual as assertEquals, throws } from "node:assert/strict";
import {
  matchesSelector,
  parseFieldSelector,
  parseLabelSelector,
  SelectorError,
} from "../../../src/sim/kube/selectors.ts";

Deno.test("parseLabelSelector() evaluates =, !=, in, notin, exists and !exists", () => {
  const sel = parseLabelSelector("app=web,tier!=db,env in (prod, staging),!legacy,team");
  assertEquals(sel({ app: "web", env: "prod", team: "a" }), true);
  assertEquals(sel({ app: "web", env: "dev", team: "a" }), false);
  assertEquals(sel({ app: "web", env: "prod", team: "a", legacy: "" }), false);
  assertEquals(sel({ app: "web", env: "prod", team: "a", tier: "db" }), false);
  assertEquals(sel({ app: "web", env: "prod" }), false);
  assertEquals(parseLabelSelector("")({}), true);
  assertEquals(parseLabelSelector("x notin (a)")({}), true);
});

Deno.test("matchesSelector() treats a null selector as nothing and {} as everything", () => {
  assertEquals(matchesSelector(undefined, { a: "1" }), false);
  assertEquals(matchesSelector({}, { a: "1" }), true);
  const sel = {
    matchLabels: { app: "pg" },
    matchExpressions: [{ key: "role", operator: "In", values: ["primary"] }],
  };
  assertEquals(matchesSelector(sel, { app: "pg", role: "primary" }), true);
  assertEquals(matchesSelector(sel, { app: "pg", role: "replica" }), false);
  assertEquals(matchesSelector({ matchExpressions: [{ key: "x", operator: "Bogus" }] }, {}), false);
});

Deno.test("parseFieldSelector() matches spec.nodeName and rejects malformed terms", () => {
  const onNode = parseFieldSelector("spec.nodeName=w-1,status.phase!=Failed");
  assertEquals(onNode({ spec: { nodeName: "w-1" }, status: { phase: "Running" } }), true);
  assertEquals(onNode({ spec: { nodeName: "w-2" }, status: { phase: "Running" } }), false);
  assertEquals(onNode({ spec: { nodeName: "w-1" }, status: { phase: "Failed" } }), false);
  throws(() => parseFieldSelector("spec.nodeName"), SelectorError);
});
