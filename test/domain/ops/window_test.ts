import { deepStrictEqual as assertEquals } from "node:assert/strict";
import {
  admitCommitment,
  nextWindow,
  type WindowDecision,
  windowProblem,
  type WindowSpec,
  windowStarts,
} from "../../../src/domain/ops/window.ts";

function held(d: WindowDecision) {
  if (d.admit) throw new Error("expected a hold");
  return d;
}

const iso = (ms: number) => new Date(ms).toISOString();
const at = (s: string) => Date.parse(s);

Deno.test("a Saturday 02:00 Berlin window opens at 01:00Z in winter and 00:00Z in summer", () => {
  const w: WindowSpec = { start: "0 2 * * 6", durationMinutes: 240, timeZone: "Europe/Berlin" };
  assertEquals(windowStarts(w, at("2026-01-01T00:00:00Z"), at("2026-01-11T00:00:00Z")).map(iso), [
    "2026-01-03T01:00:00.000Z",
    "2026-01-10T01:00:00.000Z",
  ]);
  assertEquals(windowStarts(w, at("2026-07-01T00:00:00Z"), at("2026-07-05T00:00:00Z")).map(iso), [
    "2026-07-04T00:00:00.000Z",
  ]);
});

Deno.test("a start inside the spring-forward gap does not happen; a fall-back start opens once, first", () => {
  // Europe/Berlin: 2026-03-29 02:00 → 03:00 (02:30 never exists); 2026-10-25 03:00 → 02:00.
  const gap: WindowSpec = { start: "30 2 * * *", durationMinutes: 60, timeZone: "Europe/Berlin" };
  assertEquals(
    windowStarts(gap, at("2026-03-28T00:00:00Z"), at("2026-03-30T23:00:00Z")).map(iso),
    ["2026-03-28T01:30:00.000Z", "2026-03-30T00:30:00.000Z"],
  );
  assertEquals(
    windowStarts(gap, at("2026-10-25T00:00:00Z"), at("2026-10-25T12:00:00Z")).map(iso),
    ["2026-10-25T00:30:00.000Z"],
  );
});

Deno.test("commitment: admitted with room, held when the step would overrun, held outside, next window named", () => {
  const w: WindowSpec = { start: "0 22 * * *", durationMinutes: 120, timeZone: "America/New_York" };
  // 22:00 EST = 03:00Z next day (January).
  const open = at("2026-01-06T03:00:00Z");
  const ok = admitCommitment([w], open + 10 * 60_000, 30 * 60_000);
  assertEquals(ok, { admit: true, closesAtMs: at("2026-01-06T05:00:00Z") });
  const late = held(admitCommitment([w], at("2026-01-06T04:45:00Z"), 30 * 60_000));
  assertEquals(late.why, "too-short");
  assertEquals(late.next?.opensAtMs, at("2026-01-07T03:00:00Z"));
  const closed = held(admitCommitment([w], at("2026-01-06T12:00:00Z"), 30 * 60_000));
  assertEquals(closed.why, "closed");
  assertEquals(iso(closed.next!.opensAtMs), "2026-01-07T03:00:00.000Z");
  assertEquals(admitCommitment([], 0, 1e9), { admit: true });
  assertEquals(nextWindow([w], at("2026-01-06T04:00:00Z"))?.opensAtMs, open);
});

Deno.test("a step longer than every window is never admitted and has no next window", () => {
  const w: WindowSpec = { start: "0 1 * * *", durationMinutes: 30, timeZone: "UTC" };
  const d = admitCommitment([w], at("2026-01-06T01:05:00Z"), 3600_000);
  assertEquals(d, {
    admit: false,
    why: "too-short",
    current: { opensAtMs: at("2026-01-06T01:00:00Z"), closesAtMs: at("2026-01-06T01:30:00Z") },
  });
});

Deno.test("bad window specs are named in plain words", () => {
  assertEquals(
    windowProblem({ start: "0 2 * *", durationMinutes: 10, timeZone: "UTC" }),
    'start "0 2 * *" must have five fields (minute hour day-of-month month day-of-week)',
  );
  assertEquals(
    windowProblem({ start: "0 25 * * *", durationMinutes: 10, timeZone: "UTC" }),
    'hour field "25" is out of 0-23',
  );
  assertEquals(
    windowProblem({ start: "0 2 * * *", durationMinutes: 10, timeZone: "Mars/Olympus" }),
    'unknown time zone "Mars/Olympus"',
  );
  assertEquals(
    windowProblem({ start: "*/15 1-3 1,15 * 1-5", durationMinutes: 10, timeZone: "Asia/Kolkata" }),
    undefined,
  );
});
