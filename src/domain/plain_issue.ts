/**
 * zod's issue wording ("Invalid input: expected string, received undefined", "Too small:
 * expected string to have >=1 characters") is for developers. Users of cairn see this instead:
 * "missing field", "expected a string", "must not be empty". The field's path is reported
 * beside the message by the caller.
 */
import type { z } from "zod";

const ARTICLE: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "a whole number",
  boolean: "true or false",
  object: "a mapping",
  array: "a list",
  bigint: "a whole number",
  date: "a date",
};

/**
 * A plain union (`string | string[]`): when every form failed on the value's type, say what the
 * forms are ("expected a string or a list"), or that the field is missing.
 */
function unionMessage(issue: z.core.$ZodIssue): string {
  const branches = (issue as { errors?: readonly (readonly z.core.$ZodIssue[])[] }).errors ?? [];
  const typeIssues = branches.map((b) =>
    b.find((i) => i.code === "invalid_type" && i.path.length === 0)
  );
  if (branches.length === 0 || typeIssues.some((i) => i === undefined)) {
    return "matches none of the forms allowed here";
  }
  if (typeIssues.every((i) => /received undefined$/.test(i!.message))) {
    const field = issue.path.at(-1);
    return field === undefined ? "missing value" : `missing field "${String(field)}"`;
  }
  const expected = typeIssues.map((i) => {
    const e = (i as { expected?: string }).expected ?? "value";
    return ARTICLE[e] ?? e;
  });
  return `expected ${[...new Set(expected)].join(" or ")}`;
}

const items = (n: number) => `${n} ${n === 1 ? "item" : "items"}`;

/** The user-facing wording of one zod issue. */
export function plainIssueMessage(issue: z.core.$ZodIssue): string {
  // A message the schema set itself ("not a valid branch glob") is already cairn's wording.
  if (!/^(Invalid|Too small|Too big|Unrecognized)/.test(issue.message)) return issue.message;
  switch (issue.code) {
    case "invalid_type":
      if (/received undefined$/.test(issue.message)) {
        const field = issue.path.at(-1);
        return field === undefined ? "missing value" : `missing field "${String(field)}"`;
      }
      return `expected ${ARTICLE[issue.expected] ?? issue.expected}`;
    case "invalid_value":
      return issue.values.length === 1
        ? `expected ${JSON.stringify(issue.values[0])}`
        : `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
    case "too_small":
      if (issue.origin === "string" && Number(issue.minimum) === 1) return "must not be empty";
      if (issue.origin === "array") return `needs at least ${items(Number(issue.minimum))}`;
      if (issue.origin === "string") return `must be at least ${issue.minimum} characters`;
      return `must be at least ${issue.minimum}`;
    case "too_big":
      if (issue.origin === "array") return `takes at most ${items(Number(issue.maximum))}`;
      if (issue.origin === "string") return `must be at most ${issue.maximum} characters`;
      return `must be at most ${issue.maximum}`;
    case "invalid_format":
      return `is not a valid ${issue.format}`;
    case "unrecognized_keys":
      return `unknown field(s) ${issue.keys.map((k) => `"${k}"`).join(", ")}`;
    case "invalid_union": {
      // A discriminated union (a plan's kind) names the field that selected no branch.
      const { discriminator: field, options } = issue as {
        discriminator?: unknown;
        options?: unknown;
      };
      if (typeof field !== "string") return unionMessage(issue);
      // zod names the values the union knows: say them, so a typo is fixed in one go.
      const known = Array.isArray(options) && options.length > 0
        ? `; expected one of ${options.map((v) => JSON.stringify(v)).join(", ")}`
        : "";
      return `not a known ${field}${known}`;
    }
    default:
      return "invalid value";
  }
}
