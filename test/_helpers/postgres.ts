/**
 * A throwaway PostgreSQL server on loopback for tests and benchmarks: Debian's own binaries
 * (`/usr/lib/postgresql/<NN>/bin`, which Debian keeps off PATH), `initdb` into a temporary
 * directory and `postgres` on a free port, its socket directory inside that temporary directory,
 * trust authentication on 127.0.0.1 only. PostgreSQL refuses to run as root, so under root both
 * run as the `postgres` user (`runuser`) on a data directory that user owns.
 *
 * The server runs under a small shell watchdog that shuts it down (fast shutdown) as soon as its
 * stdin closes: `stop()` closes it and waits, and if the test process dies first the kernel
 * closes it, so a crashed or killed test run never leaves a server behind.
 */
import pg from "pg";

/** A running server. */
export interface PostgresServer {
  readonly port: number;
  /** The URL of database `db` on this server (superuser `cairn`, no password). */
  url(db?: string): string;
  /** Creates a new database (empty, or a copy of database `template`) and returns its URL. */
  newDatabase(prefix?: string, template?: string): Promise<string>;
  /** Stops the server (fast shutdown) and removes its directory. Idempotent. */
  stop(): Promise<void>;
}

export interface PostgresOptions {
  /**
   * Durable as a production server would be (fsync, synchronous commit): benchmarks. Tests do
   * not need the disk flushes and run without them.
   */
  readonly durable?: boolean;
}

const SUPERUSER = "cairn";

/** Finds Debian's PostgreSQL binary directory (the newest version), or one on PATH. */
export async function postgresBinDir(): Promise<string> {
  const versions: number[] = [];
  try {
    for await (const e of Deno.readDir("/usr/lib/postgresql")) {
      if (e.isDirectory && /^\d+$/.test(e.name)) versions.push(Number(e.name));
    }
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  for (const v of versions.sort((a, b) => b - a)) {
    const dir = `/usr/lib/postgresql/${v}/bin`;
    if (await isFile(`${dir}/initdb`) && await isFile(`${dir}/postgres`)) return dir;
  }
  for (const p of (Deno.env.get("PATH") ?? "").split(":")) {
    if (p && await isFile(`${p}/initdb`) && await isFile(`${p}/postgres`)) return p;
  }
  throw new Error(
    "PostgreSQL server binaries not found (looked in /usr/lib/postgresql/*/bin and PATH); " +
      "install Debian's postgresql package (tools/system_packages.sh lists it for tests)",
  );
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isFile;
  } catch {
    return false;
  }
}

const isRoot = () => Deno.uid() === 0;

/** The command line that runs `argv` as the user owning the data directory. */
function asOwner(argv: string[]): [string, string[]] {
  return isRoot() ? ["runuser", ["-u", "postgres", "--", ...argv]] : [argv[0]!, argv.slice(1)];
}

async function run(argv: string[]): Promise<void> {
  const [cmd, args] = asOwner(argv);
  const out = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "piped" }).output();
  if (out.code !== 0) {
    const td = new TextDecoder();
    throw new Error(
      `${argv.join(" ")} failed (${out.code}): ${td.decode(out.stderr)}${td.decode(out.stdout)}`,
    );
  }
}

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/** The watchdog: runs the server, and on EOF of its stdin asks it for a fast shutdown. */
const WATCHDOG = 'exec 3<&0; postgres "$@" </dev/null & pid=$!; ' +
  "( cat <&3 >/dev/null; kill -INT $pid 2>/dev/null ) & " +
  "wait $pid";

/** Starts a server; the caller stops it (in a `finally`). */
export async function startPostgres(opts: PostgresOptions = {}): Promise<PostgresServer> {
  const bin = await postgresBinDir();
  const dir = await Deno.makeTempDir({ prefix: "cairn-pg-" });
  try {
    if (isRoot()) {
      const { uid, gid } = await ownerIds();
      await Deno.chown(dir, uid, gid);
    }
    const data = `${dir}/data`;
    await run([
      `${bin}/initdb`,
      "-D",
      data,
      "-U",
      SUPERUSER,
      "-A",
      "trust",
      "-E",
      "UTF8",
      "--locale=C",
      "--no-sync",
      "--no-instructions",
    ]);
    // A port found free may be taken before the server binds it: try a few.
    let lastError: unknown;
    for (let tries = 0; tries < 5; tries++) {
      try {
        return await launch(bin, dir, data, freePort(), opts);
      } catch (e) {
        lastError = e;
      }
    }
    throw lastError;
  } catch (e) {
    await Deno.remove(dir, { recursive: true }).catch(() => undefined);
    throw e;
  }
}

async function ownerIds(): Promise<{ uid: number; gid: number }> {
  const out = await new Deno.Command("id", { args: ["postgres"], stdout: "piped" }).output();
  const text = new TextDecoder().decode(out.stdout);
  const uid = /uid=(\d+)/.exec(text)?.[1];
  const gid = /gid=(\d+)/.exec(text)?.[1];
  if (out.code !== 0 || !uid || !gid) {
    throw new Error("running as root needs a 'postgres' user (Debian's postgresql creates it)");
  }
  return { uid: Number(uid), gid: Number(gid) };
}

async function launch(
  bin: string,
  dir: string,
  data: string,
  port: number,
  opts: PostgresOptions,
): Promise<PostgresServer> {
  const settings = [
    "listen_addresses=127.0.0.1",
    `unix_socket_directories=${dir}`,
    "max_connections=60",
    "shared_buffers=32MB",
    ...(opts.durable ? [] : ["fsync=off", "synchronous_commit=off", "full_page_writes=off"]),
  ];
  const argv = ["sh", "-c", WATCHDOG, "sh", "-D", data, "-p", String(port)];
  for (const s of settings) argv.push("-c", s);
  const [cmd, args] = asOwner(argv);
  const env = { PATH: `${bin}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}` };
  const child = new Deno.Command(cmd, {
    args,
    env,
    stdin: "piped",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const stdin = child.stdin.getWriter();
  const log: string[] = [];
  const ready = watchLog(child.stderr, log);
  const exited = child.status.then((s) => ({ exited: s }));
  const first = await Promise.race([ready, exited]);
  if ("exited" in first) {
    throw new Error(`postgres on port ${port} exited (${first.exited.code}): ${log.join("\n")}`);
  }
  let stopped: Promise<void> | undefined;
  let databases = 0;
  const url = (db = "postgres") => `postgres://${SUPERUSER}@127.0.0.1:${port}/${db}`;
  return {
    port,
    url,
    async newDatabase(prefix = "j", template?: string) {
      const name = `${prefix}_${++databases}_${crypto.randomUUID().slice(0, 8)}`;
      const c = new pg.Client({ connectionString: url() });
      await c.connect();
      try {
        const from = template === undefined ? "" : ` TEMPLATE "${template}"`;
        await c.query(`CREATE DATABASE "${name}"${from}`);
      } finally {
        await c.end();
      }
      return url(name);
    },
    stop() {
      stopped ??= (async () => {
        await stdin.close().catch(() => undefined);
        await child.status;
        await Deno.remove(dir, { recursive: true }).catch(() => undefined);
      })();
      return stopped;
    },
  };
}

/** Resolves once the server logs that it accepts connections; keeps draining its log after. */
function watchLog(stream: ReadableStream<Uint8Array>, log: string[]): Promise<{ ready: true }> {
  return new Promise((resolve) => {
    void (async () => {
      let buf = "";
      let said = false;
      for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
        buf += chunk;
        let nl;
        while ((nl = buf.indexOf("\n")) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (log.length < 200) log.push(line);
          if (!said && line.includes("database system is ready to accept connections")) {
            said = true;
            resolve({ ready: true });
          }
        }
      }
    })();
  });
}

let shared: Promise<PostgresServer> | undefined;

/**
 * One server shared by everything in this process (a test file's many tests each take a fresh
 * database on it). Stopped when the process ends: its watchdog sees stdin close.
 */
export function sharedPostgres(): Promise<PostgresServer> {
  shared ??= startPostgres();
  return shared;
}
