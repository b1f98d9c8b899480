/**
 * A TCP listener on 127.0.0.1 that accepts connections and never says a word: the upstream
 * that hangs. Used to prove that git fetches and Kubernetes calls have deadlines. Accepted
 * connections are held open (never read, never written) until `close()`.
 */
export interface SilentListener {
  readonly port: number;
  /** How many connections were accepted so far. */
  readonly accepted: () => number;
  close(): Promise<void>;
}

/** Starts a silent listener on an ephemeral loopback port. */
export function startSilentListener(): SilentListener {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  let count = 0;
  const loop = (async () => {
    try {
      for await (const conn of listener) {
        count++;
        held.push(conn);
      }
    } catch {
      // The listener was closed.
    }
  })();
  return {
    port: (listener.addr as Deno.NetAddr).port,
    accepted: () => count,
    async close() {
      listener.close();
      for (const c of held) {
        try {
          c.close();
        } catch {
          // Already closed by the peer.
        }
      }
      await loop;
    },
  };
}

/**
 * Fails instead of hanging when `p` does not settle within `ms` of real time: a test of a
 * deadline must not itself wait forever when the deadline is broken.
 */
export async function within<T>(ms: number, p: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still running after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}
