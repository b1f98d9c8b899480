/** Runs one cairn command line in-process (through dispatch) and captures what it printed. */
import { fileURLToPath as fromFileUrl } from "node:url";
import { dispatch } from "../../src/cli/dispatch.ts";

export const ROOT = fromFileUrl(new URL("../../", import.meta.url));

export async function runCli(argv: string[], env: Record<string, string> = {}) {
  let stdout = "";
  let stderr = "";
  const code = await dispatch(argv, {
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
    env,
    cwd: ROOT,
    color: false,
    tty: false,
    signal: new AbortController().signal,
  });
  return { code, stdout, stderr };
}
