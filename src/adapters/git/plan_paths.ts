/**
 * Path safety for names that come from the watched repository. A plan name becomes part of
 * paths cairn reads (`plans/<name>.yaml`) and writes (`reports/<name>/…`), so anything that
 * could escape the directory, hide (leading dot), or confuse a reader is refused with a reason.
 */

/** Longest plan name accepted. */
export const PLAN_NAME_MAX = 100;

/** Either the name is safe, or why it is not. */
export type NameCheck = { readonly ok: true } | { readonly ok: false; readonly why: string };

const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
// Control characters are exactly what this module hunts for.
// deno-lint-ignore no-control-regex
const CONTROL = new RegExp("[\\u0000-\\u001f\\u007f]");
// deno-lint-ignore no-control-regex
const CONTROL_ALL = new RegExp("[\\u0000-\\u001f\\u007f]", "g");

/** Checks a plan name (the file name without `.yaml`). */
export function checkPlanName(name: string): NameCheck {
  if (name.length === 0) return bad("the name is empty");
  if (name.length > PLAN_NAME_MAX) {
    return bad(`the name is longer than ${PLAN_NAME_MAX} characters`);
  }
  if (CONTROL.test(name)) return bad("the name contains a control character");
  if (name.includes("/") || name.includes("\\")) return bad("the name contains a path separator");
  if (name.startsWith(".")) return bad("the name starts with a dot");
  if (name.includes("..")) return bad("the name contains '..'");
  if (!SAFE_NAME.test(name)) {
    return bad("the name may only hold letters, digits, '.', '_' and '-'");
  }
  return { ok: true };
}

/** Checks a repository-relative path given to a read (no absolute, parent or empty parts). */
export function checkRepoPath(path: string): NameCheck {
  if (path.length === 0 || path.length > 4096) return bad("the path is empty or too long");
  if (path.startsWith("/")) return bad("the path is absolute");
  if (CONTROL.test(path)) return bad("the path contains a control character");
  if (path.split("/").some((p) => p === "" || p === "." || p === "..")) {
    return bad("the path has an empty, '.' or '..' component");
  }
  return { ok: true };
}

/** `plans/<name>.yaml`. */
export function planPath(name: string): string {
  return `plans/${name}.yaml`;
}

/** `reports/<plan>/execution.md`. */
export function executionReportPath(plan: string): string {
  return `reports/${plan}/execution.md`;
}

/** `reports/<plan>/preview/<encoded branch>.md`; undefined when the branch cannot be encoded. */
export function previewReportPath(plan: string, branch: string): string | undefined {
  const file = branchFileName(branch);
  return file === undefined ? undefined : `reports/${plan}/preview/${file}.md`;
}

/** Longest encoded branch name used as a file name (well under common 255-byte limits). */
export const BRANCH_FILE_MAX = 160;

/**
 * A branch name as one file name, injectively, so two branches never share a preview file:
 * letters, digits, `.` and `-` stay; `/` becomes `~` (which Git forbids in ref names, so it
 * cannot come from anything else); every other byte (including `_`, the escape itself) becomes
 * `_xx` (UTF-8, hex). A leading `.` is escaped so the file never hides. Names that `..`, markdown
 * or control characters would make dangerous come out as inert text. Too long: undefined.
 */
export function branchFileName(branch: string): string | undefined {
  if (branch.length === 0) return undefined;
  let out = "";
  for (const byte of new TextEncoder().encode(branch)) {
    const c = String.fromCharCode(byte);
    if (byte === 0x2f) out += "~";
    else if (/^[A-Za-z0-9-]$/.test(c) || (c === "." && out.length > 0)) out += c;
    else out += `_${byte.toString(16).padStart(2, "0")}`;
  }
  return out.length <= BRANCH_FILE_MAX ? out : undefined;
}

/** Shows a raw path with control characters visible, for messages. */
export function showPath(path: string): string {
  return path.replace(
    CONTROL_ALL,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

function bad(why: string): NameCheck {
  return { ok: false, why };
}
