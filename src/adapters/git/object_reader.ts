/**
 * Reads of the cache repository through one `git cat-file --batch-command` process per call
 * (issue 18): a plan listing took three git processes (`cat-file -e`, `ls-tree`, `cat-file
 * --batch`) and a bound file three more, each a fork and exec of about 12–25 ms on the webhook's
 * way to the first intent. Here one process answers every question of a call: whether the commit
 * is there, its trees (read and parsed here, so no path ever goes onto git's line-based input),
 * each blob's type and size before its bytes, then the bytes.
 *
 * Only hexadecimal object ids and `<id>^{commit}`/`<id>^{tree}` are ever written to git's stdin
 * (ids are checked first), so no input can be read as another command.
 */
import { decodePath, type TreeEntry } from "./git_parse.ts";
import { converseWithGit, type GitConversation } from "./run_git.ts";

/** A full object id, SHA-1 or SHA-256, in lowercase hex. */
export const OBJECT_ID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;
const encoder = new TextEncoder();

/** An object's header as `cat-file` reports it. */
export interface ObjectInfo {
  readonly oid: string;
  readonly type: string;
  readonly size: number;
}

/** The questions one call asks; each is answered in order by the same git process. */
export class ObjectReader {
  readonly #io: GitConversation;
  readonly #trees = new Map<string, readonly TreeEntry[]>();

  private constructor(io: GitConversation) {
    this.#io = io;
  }

  /** Runs `use` with a reader on `gitDir`; the git process ends with it. */
  static async using<T>(
    gitDir: string,
    use: (reader: ObjectReader) => Promise<T>,
  ): Promise<T> {
    return await converseWithGit(
      ["cat-file", "--batch-command"],
      { gitDir },
      (io) => use(new ObjectReader(io)),
    );
  }

  /** Headers of several objects (undefined: missing), asked all at once. */
  async info(names: readonly string[]): Promise<(ObjectInfo | undefined)[]> {
    names.forEach(checkName);
    if (names.length === 0) return [];
    const sent = this.#send(names.map((n) => `info ${n}\n`).join(""));
    const headers: (ObjectInfo | undefined)[] = [];
    for (let i = 0; i < names.length; i++) headers.push(await this.#header());
    await sent;
    return headers;
  }

  /** Contents of several objects by id (undefined: missing), asked all at once. */
  async contents(oids: readonly string[]): Promise<(Uint8Array | undefined)[]> {
    oids.forEach(checkName);
    if (oids.length === 0) return [];
    const sent = this.#send(oids.map((o) => `contents ${o}\n`).join(""));
    const bodies: (Uint8Array | undefined)[] = [];
    for (let i = 0; i < oids.length; i++) {
      const header = await this.#header();
      if (!header) {
        bodies.push(undefined);
        continue;
      }
      bodies.push(await this.#io.out.bytes(header.size));
      await this.#io.out.bytes(1); // the LF after the contents
    }
    await sent;
    return bodies;
  }

  /** Whether `commit` is a commit in the repository. */
  async hasCommit(commit: string): Promise<boolean> {
    if (!OBJECT_ID.test(commit)) return false;
    const [info] = await this.info([`${commit}^{commit}`]);
    return info?.type === "commit";
  }

  /**
   * The entries of the tree at `dir` (`""`: the root) of `commit`, with paths from the root as
   * `ls-tree` prints them and blob sizes filled in for the entries `sized` keeps; undefined when
   * `dir` is not a directory there (missing, a file, a link, a submodule).
   */
  async list(
    commit: string,
    dir: string,
    sized: (entry: TreeEntry) => boolean = () => true,
  ): Promise<TreeEntry[] | undefined> {
    let entries = await this.#tree(`${commit}^{tree}`, "");
    if (!entries) return undefined;
    for (const part of dir === "" ? [] : dir.split("/")) {
      const sub = entries.find((e) => e.utf8 && baseName(e.path) === part);
      if (!sub || sub.type !== "tree") return undefined;
      entries = await this.#tree(sub.oid, sub.path);
      if (!entries) return undefined;
    }
    const wanted = entries.filter((e) => e.type === "blob" && sized(e));
    const infos = await this.info(wanted.map((e) => e.oid));
    const sizes = new Map(wanted.map((e, i) => [e.oid, infos[i]?.size ?? -1]));
    return entries.map((e) => (sizes.has(e.oid) ? { ...e, size: sizes.get(e.oid)! } : e));
  }

  /** The entry at `path` of `commit` (its blob size filled in), undefined when there is none. */
  async entry(commit: string, path: string): Promise<TreeEntry | undefined> {
    const slash = path.lastIndexOf("/");
    const dir = slash < 0 ? "" : path.slice(0, slash);
    const entries = await this.list(commit, dir, (e) => e.path === path);
    return entries?.find((e) => e.utf8 && e.path === path);
  }

  /**
   * Writes questions without waiting for the pipe to take them: git answers while it reads, and a
   * large request must not wait on git while git waits on us to read its answers. When git is gone
   * the answers fail first; the write's own failure is then no news (and never left unhandled).
   */
  #send(text: string): Promise<void> {
    const sent = this.#io.write(encoder.encode(text));
    sent.catch(() => {});
    return sent;
  }

  async #header(): Promise<ObjectInfo | undefined> {
    const line = await this.#io.out.line();
    if (line === undefined) throw new Error("git cat-file ended before answering");
    const [oid = "", type = "", size] = line.split(" ");
    // `<name> missing` and `<name> ambiguous` carry two words; a header carries three.
    if (size === undefined) return undefined;
    return { oid, type, size: Number(size) };
  }

  /** A tree object read and parsed; entries' paths are `prefix/name`. */
  async #tree(name: string, prefix: string): Promise<readonly TreeEntry[] | undefined> {
    const known = this.#trees.get(name);
    if (known) return known;
    const [info] = await this.info([name]);
    if (!info || info.type !== "tree") return undefined;
    const [body] = await this.contents([info.oid]);
    if (!body) return undefined;
    const entries = parseTree(body, info.oid.length / 2, prefix);
    this.#trees.set(name, entries);
    return entries;
  }
}

/**
 * Parses a tree object: entries of `<octal mode> SP <name> NUL <raw id>`. Sizes are -1 here (a
 * tree does not record them); types follow from the modes, as `ls-tree` derives them.
 */
export function parseTree(body: Uint8Array, idBytes: number, prefix: string): TreeEntry[] {
  const entries: TreeEntry[] = [];
  let pos = 0;
  while (pos < body.length) {
    const space = body.indexOf(32, pos);
    const nul = body.indexOf(0, space + 1);
    if (space < 0 || nul < 0 || nul + 1 + idBytes > body.length) {
      throw new Error("malformed tree object");
    }
    const mode = new TextDecoder().decode(body.subarray(pos, space));
    const { path: name, utf8 } = decodePath(body.subarray(space + 1, nul));
    const oid = hex(body.subarray(nul + 1, nul + 1 + idBytes));
    pos = nul + 1 + idBytes;
    const type = mode === "40000" ? "tree" : mode === "160000" ? "commit" : "blob";
    entries.push({
      // ls-tree prints a tree's mode with its leading zero.
      mode: mode === "40000" ? "040000" : mode,
      type,
      oid,
      size: -1,
      path: prefix === "" ? name : `${prefix}/${name}`,
      utf8,
    });
  }
  return entries;
}

function baseName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

function hex(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += b.toString(16).padStart(2, "0");
  return s;
}

/** Only ids, optionally peeled: nothing else may reach git's command input. */
function checkName(name: string): void {
  const id = name.replace(/\^\{(?:commit|tree)\}$/, "");
  if (!OBJECT_ID.test(id)) {
    throw new Error(`not an object id: ${JSON.stringify(name.slice(0, 80))}`);
  }
}
