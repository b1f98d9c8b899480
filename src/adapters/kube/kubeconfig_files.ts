/**
 * Reads a kubeconfig the way kubectl does (client-go `clientcmd` loading rules), so a user's
 * `KUBECONFIG=a:b` means here what it means to kubectl:
 *
 * - one explicit file (`--kubeconfig F`): that file alone; a missing file is an error;
 * - a `KUBECONFIG` list: every listed file that exists, merged. The first file to set a cluster,
 *   user or context name wins with its whole entry (a later entry of that name is dropped, even
 *   its fields the first one lacks); `current-context` comes from the first file that sets it;
 *   missing files are skipped; a list of which none exists is an error.
 *
 * A name repeated inside one file is refused (client-go's conversion refuses it too).
 *
 * Relative paths inside a file (`certificate-authority`, `client-certificate`, `client-key`,
 * `tokenFile`, an exec `command` containing a slash) resolve against that file's directory, as
 * client-go's `ResolveLocalPaths` does, before the files are merged.
 *
 * client-node's own multi-file loader (`loadFromDefault`) is not used: it throws on a name two
 * files share and lets the last file's `current-context` win, both unlike kubectl.
 *
 * Errors name the file and a line:column, never the file's text: a kubeconfig's lines are bearer
 * tokens and private keys.
 */
import { readFile } from "node:fs/promises";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { parse } from "yaml";
import { CairnError } from "../../domain/errors.ts";
import { yamlErrorSummary } from "../../domain/yaml_error_summary.ts";

/** One explicit file (`--kubeconfig`), or the files a `KUBECONFIG` list names, in order. */
export type KubeconfigFiles = string | readonly string[];

/** A kubeconfig file's path and text. */
export interface KubeconfigText {
  readonly path: string;
  readonly text: string;
}

type R = Record<string, unknown>;
const isRecord = (v: unknown): v is R => typeof v === "object" && v !== null && !Array.isArray(v);

/** The three named lists of a kubeconfig, with the key of each entry's body. */
const LISTS = [["clusters", "cluster"], ["users", "user"], ["contexts", "context"]] as const;

function invalid(path: string, message: string): CairnError {
  return new CairnError({
    reason: "KubeconfigInvalid",
    message: `cannot load kubeconfig ${path}: ${message}`,
  });
}

/** `v` resolved against `base` when it is a non-empty relative path (client-go's ResolvePaths). */
function resolved(v: unknown, base: string): unknown {
  return typeof v === "string" && v !== "" && !isAbsolute(v) ? join(base, v) : v;
}

/** One entry's body with its file references made absolute against the file's directory. */
function withAbsolutePaths(list: string, body: R, base: string): R {
  const keys = list === "clusters"
    ? ["certificate-authority"]
    : list === "users"
    ? ["client-certificate", "client-key", "tokenFile"]
    : [];
  const out: R = { ...body };
  for (const k of keys) {
    if (k in body) out[k] = resolved(body[k], base);
  }
  const exec = body["exec"];
  // A bare command name is looked up on PATH, so only a command with a slash is a path.
  if (
    list === "users" && isRecord(exec) && typeof exec["command"] === "string" &&
    exec["command"].includes("/")
  ) {
    out["exec"] = { ...exec, command: resolved(exec["command"], base) };
  }
  return out;
}

function parsed(file: KubeconfigText): R {
  let doc: unknown;
  try {
    // Warnings off: the parser prints a warning with the offending line (an `!`-leading
    // password read as a tag) to stderr.
    doc = parse(file.text, { logLevel: "error" });
  } catch (e) {
    throw invalid(file.path, `not valid YAML: ${yamlErrorSummary(e)}`);
  }
  if (doc === null || doc === undefined) return {};
  if (!isRecord(doc)) throw invalid(file.path, "not a YAML mapping");
  return doc;
}

/**
 * The merged kubeconfig of `files` (in priority order), kubectl's rules; pure. Each file's
 * relative paths are resolved against its own directory first.
 */
export function mergeKubeconfigs(files: readonly KubeconfigText[]): R {
  const merged: Record<string, R[]> = { clusters: [], users: [], contexts: [] };
  const seen: Record<string, Set<string>> = {
    clusters: new Set(),
    users: new Set(),
    contexts: new Set(),
  };
  let currentContext: string | undefined;
  for (const file of files) {
    const doc = parsed(file);
    const base = dirname(resolve(file.path));
    for (const [list, bodyKey] of LISTS) {
      const entries = doc[list] ?? [];
      if (!Array.isArray(entries)) throw invalid(file.path, `${list} is not a list`);
      const inFile = new Set<string>();
      entries.forEach((entry: unknown, i) => {
        if (!isRecord(entry) || typeof entry["name"] !== "string" || entry["name"] === "") {
          throw invalid(file.path, `${list}[${i}] has no name`);
        }
        const name = entry["name"];
        // One file naming an entry twice is refused, as client-go's conversion refuses it (which
        // of the two was meant is not knowable); the message names the entry, never its body.
        if (inFile.has(name)) throw invalid(file.path, `${list}[${i}]: duplicate name "${name}"`);
        inFile.add(name);
        // The first file to set a name wins, with its whole entry (clientcmd's merge).
        if (seen[list]!.has(name)) return;
        seen[list]!.add(name);
        const body = entry[bodyKey];
        merged[list]!.push({
          ...entry,
          ...(isRecord(body) ? { [bodyKey]: withAbsolutePaths(list, body, base) } : {}),
        });
      });
    }
    const cc = doc["current-context"];
    if (currentContext === undefined && typeof cc === "string" && cc !== "") currentContext = cc;
  }
  return {
    apiVersion: "v1",
    kind: "Config",
    ...merged,
    ...(currentContext !== undefined ? { "current-context": currentContext } : {}),
  };
}

async function readIfPresent(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (e) {
    if ((e as { code?: string }).code === "ENOENT") return undefined;
    throw invalid(path, `cannot read: ${(e as { code?: string }).code ?? "error"}`);
  }
}

/** The files' merged kubeconfig as JSON (which client-node's `loadFromString` reads). */
export async function readKubeconfigFiles(files: KubeconfigFiles): Promise<string> {
  const explicit = typeof files === "string";
  const paths = explicit ? [files] : files.filter((p) => p !== "");
  const texts: KubeconfigText[] = [];
  for (const path of paths) {
    const text = await readIfPresent(path);
    if (text !== undefined) texts.push({ path, text });
    else if (explicit) throw invalid(path, "no such file");
  }
  if (texts.length === 0) {
    const why = paths.length === 1 ? "no such file" : "none of the KUBECONFIG files exists";
    throw invalid(paths.join(":"), why);
  }
  return JSON.stringify(mergeKubeconfigs(texts));
}
